package io.slipstream.sdk;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;

/**
 * What a workload running under Slipstream can ask of the platform, from the variables every instance gets (see
 * docs/fault-tolerance.md for the contract, which other languages follow without this SDK). The SDK needs nothing but
 * the JDK: a workload gets no library with it.
 * <pre>{@code
 * Slipstream slipstream = Slipstream.fromEnvironment();
 * Checkpoints checkpoints = slipstream.checkpoints(3);
 * long start = checkpoints.latest().map(Checkpoints.Checkpoint::step).orElse(0L);
 * slipstream.preemption().onStop(notice -> saveNowAndWait());
 * slipstream.progress().report(step, Map.of("loss", loss));
 * }</pre>
 */
public final class Slipstream {
    private final Environment env;
    private final Progress progress;

    Slipstream(Map<String, String> variables, Clock clock) {
        this.env = new Environment(variables);
        Path progressFile = env.path("SLIPSTREAM_PROGRESS_FILE");
        this.progress = new Progress(progressFile, progressFile == null ? ProgressApi.of(env) : null, clock);
    }

    public static Slipstream fromEnvironment() {
        return new Slipstream(System.getenv(), Clock.systemUTC());
    }

    /** For tests and for programs that pass the environment around. */
    public static Slipstream of(Map<String, String> variables) {
        return new Slipstream(variables, Clock.systemUTC());
    }

    /** Whether this process runs as an instance of a Slipstream run. */
    public boolean managed() {
        return env.get("SLIPSTREAM_RUN_ID") != null;
    }

    public int rank() {
        return env.integer("SLIPSTREAM_RANK", 0);
    }

    public int worldSize() {
        return env.integer("SLIPSTREAM_WORLD_SIZE", 1);
    }

    public int attempt() {
        return env.integer("SLIPSTREAM_ATTEMPT", 1);
    }

    /**
     * Which world of this attempt the instance is in: 1 for the first, one more at each change of an elastic run's size
     * (rigid runs: always 1). {@code RANK} and {@code WORLD_SIZE} are this world's.
     */
    public int worldVersion() {
        return env.integer("SLIPSTREAM_WORLD_VERSION", 1);
    }

    /** Every instance of the run, read from {@code SLIPSTREAM_METADATA_FILE}. */
    public ClusterMetadata metadata() throws IOException {
        Path file = env.path("SLIPSTREAM_METADATA_FILE");
        if (file == null) {
            throw new IllegalStateException("SLIPSTREAM_METADATA_FILE is not set: not running under Slipstream");
        }
        return ClusterMetadata.read(file);
    }

    /**
     * Checkpoints in {@code SLIPSTREAM_CHECKPOINT_DIR} (which outlives attempts and preemptions), keeping the newest
     * {@code keep}; outside Slipstream, in {@code ./checkpoints}.
     */
    public Checkpoints checkpoints(int keep) {
        Path dir = env.path("SLIPSTREAM_CHECKPOINT_DIR");
        return new Checkpoints(dir == null ? Path.of("checkpoints") : dir, keep, progress);
    }

    public Progress progress() {
        return progress;
    }

    /**
     * The run's identity token for its first audience ({@code spec.identity}), read fresh: the platform replaces it
     * before it expires, so read it again each time it is sent rather than keeping it.
     *
     * @throws IllegalStateException if the job asks for no identity tokens
     */
    public String identityToken() throws IOException {
        Path file = env.path("SLIPSTREAM_IDENTITY_TOKEN_FILE");
        if (file == null) {
            throw new IllegalStateException("SLIPSTREAM_IDENTITY_TOKEN_FILE is not set: the job's spec.identity asks for no tokens");
        }
        return java.nio.file.Files.readString(file, java.nio.charset.StandardCharsets.US_ASCII).strip();
    }

    /**
     * The run's identity token for {@code audience}, one of its job's {@code spec.identity.audiences}, read fresh (see
     * {@link #identityToken()}).
     *
     * @throws IllegalArgumentException if the job asks for no token for {@code audience}
     */
    public String identityToken(String audience) throws IOException {
        String tokens = env.get("SLIPSTREAM_IDENTITY_TOKENS");
        Object files = tokens == null ? Map.of() : MiniJson.parse(tokens);
        if (!(files instanceof Map<?, ?> byAudience) || !(byAudience.get(audience) instanceof String path)) {
            throw new IllegalArgumentException("no identity token for audience '" + audience + "': the job's spec.identity.audiences are "
                    + (files instanceof Map<?, ?> map ? map.keySet() : "[]"));
        }
        return java.nio.file.Files.readString(Path.of(path), java.nio.charset.StandardCharsets.US_ASCII).strip();
    }

    public Preemption preemption() {
        return new Preemption(env.path("SLIPSTREAM_PREEMPTION_NOTICE_FILE"), env.path("SLIPSTREAM_PREEMPTION_ACK_FILE"));
    }
}
