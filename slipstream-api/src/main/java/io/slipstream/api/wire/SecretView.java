package io.slipstream.api.wire;

import java.time.Instant;
import java.util.Map;

/**
 * A Secret as the API shows it: the document's shape, every value replaced by {@code ***}. Applying it again is
 * refused (a value of {@code ***} is not accepted), so it cannot wipe the values by accident.
 */
public record SecretView(String apiVersion, String kind, Metadata metadata, Spec spec) {
    public record Metadata(String name, String workspace, long version, Instant createdAt, Instant updatedAt) {
    }

    /** {@code data}: every key, each shown as {@code ***}. */
    public record Spec(Map<String, String> data) {
    }
}
