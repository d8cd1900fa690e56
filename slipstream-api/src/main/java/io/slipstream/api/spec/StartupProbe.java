package io.slipstream.api.spec;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
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

    /** The document form, with the defaults: every 10 s, 3 failures, no initial delay. */
    @JsonCreator
    public static StartupProbe of(@JsonProperty("command") List<String> command, @JsonProperty("periodSeconds") Integer periodSeconds,
                                  @JsonProperty("failureThreshold") Integer failureThreshold,
                                  @JsonProperty("initialDelaySeconds") Integer initialDelaySeconds) {
        return new StartupProbe(command == null ? List.of() : command, periodSeconds == null ? 10 : periodSeconds,
                failureThreshold == null ? 3 : failureThreshold, initialDelaySeconds == null ? 0 : initialDelaySeconds);
    }
}
