package io.slipstream.api.spec;

import java.util.List;

/**
 * How to tell that an instance is ready: {@code command} runs in the instance's environment every
 * {@code periodSeconds}, starting {@code initialDelaySeconds} after it started; exit 0 means ready. After
 * {@code failureThreshold} failures in a row the instance has failed to start.
 */
public record StartupProbe(List<String> command, int periodSeconds, int failureThreshold, int initialDelaySeconds) {
    public StartupProbe {
        command = List.copyOf(command);
        if (command.isEmpty()) {
            throw new IllegalArgumentException("command is empty");
        }
    }
}
