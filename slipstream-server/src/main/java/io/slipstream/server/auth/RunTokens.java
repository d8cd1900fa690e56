package io.slipstream.server.auth;

import io.slipstream.api.run.RunId;
import io.slipstream.server.service.TokenService;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The token each run gets ({@code SLIPSTREAM_RUN_TOKEN}), with which its instances read their own run through the API
 * ({@code SLIPSTREAM_SERVER}): stored hashed like every token, as the user {@code run:<id>}, valid while the run is
 * not over. One per attempt, kept in memory only while its instances are being launched; after a restart of the
 * server a new one is issued (the old one keeps working for the pods that have it).
 */
public final class RunTokens {
    public static final String USER_PREFIX = "run:";
    public static final String TOKEN_ENV = io.slipstream.executor.LaunchSpec.RUN_TOKEN_ENV;
    public static final String SERVER_ENV = "SLIPSTREAM_SERVER";
    /** Runs are never longer than 30 days; the token lapses a day after that at the latest. */
    private static final Duration LIFETIME = Duration.ofDays(31);
    private static final int REMEMBERED = 10_000;

    private final TokenService tokens;
    private final Supplier<String> serverUrl;
    private final Map<String, String> issued = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
            return size() > REMEMBERED;
        }
    };

    /** @param serverUrl where instances reach the API, or a supplier of {@code null} if they cannot */
    public RunTokens(TokenService tokens, Supplier<String> serverUrl) {
        this.tokens = tokens;
        this.serverUrl = serverUrl;
    }

    /**
     * The token of an attempt, made to be stored with its admission (in the admission's transaction, not in one of its
     * own at the first launch), or empty if the attempt has one already (admitted again after a preemption).
     */
    public synchronized java.util.Optional<Admitted> forAdmission(RunId run, int attempt) {
        String key = key(run, attempt);
        if (issued.containsKey(key)) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(new Admitted(key, tokens.mint(USER_PREFIX + run.value(), false, description(run, attempt), LIFETIME)));
    }

    /** A token made for an admission; {@link #stored} once the admission's transaction committed. */
    public record Admitted(String key, TokenService.Minted token) {
    }

    /** Remembers a token its admission stored: the attempt's launches give it to their instances. */
    public synchronized void stored(Admitted admitted) {
        issued.put(admitted.key(), admitted.token().secret());
    }

    /**
     * The environment that gives an attempt's instances their run's token and the server's address; the token is
     * issued here if its admission stored none this server remembers (a restart of the server since).
     */
    public synchronized Map<String, String> env(RunId run, int attempt) {
        String secret = issued.computeIfAbsent(key(run, attempt),
                key -> tokens.issue(USER_PREFIX + run.value(), false, description(run, attempt), LIFETIME).token());
        Map<String, String> env = new LinkedHashMap<>();
        env.put(TOKEN_ENV, secret);
        String url = serverUrl.get();
        if (url != null) {
            env.put(SERVER_ENV, url);
        }
        return env;
    }

    private static String key(RunId run, int attempt) {
        return run.value() + "/" + attempt;
    }

    private static String description(RunId run, int attempt) {
        return "run token of " + run.value() + ", attempt " + attempt;
    }
}
