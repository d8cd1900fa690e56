package io.slipstream.sdk;

import java.nio.file.Path;
import java.util.Map;

/** Reads the variables Slipstream gives every instance; tests pass a map of their own. */
final class Environment {
    private final Map<String, String> env;

    Environment(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    String get(String name) {
        return env.get(name);
    }

    Path path(String name) {
        String value = env.get(name);
        return value == null || value.isEmpty() ? null : Path.of(value);
    }

    int integer(String name, int otherwise) {
        String value = env.get(name);
        if (value == null) {
            return otherwise;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalStateException(name + " is not a number: " + value);
        }
    }
}
