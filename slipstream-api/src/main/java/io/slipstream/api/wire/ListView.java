package io.slipstream.api.wire;

import java.util.List;

/** Every list response: {@code items}, and {@code next} (a cursor for the following page) when more exist. */
public record ListView<T>(List<T> items, String next) {
    public static <T> ListView<T> of(List<T> items) {
        return new ListView<>(items, null);
    }
}
