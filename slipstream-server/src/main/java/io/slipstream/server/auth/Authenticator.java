package io.slipstream.server.auth;

import io.slipstream.api.run.RunId;
import io.slipstream.server.api.ApiException;
import io.slipstream.store.Store;
import io.slipstream.store.TokenRecord;
import java.time.Clock;
import java.util.Optional;

/**
 * Turns an {@code Authorization: Bearer} header into a {@link Principal}, or refuses with 401: unknown, revoked and
 * expired tokens alike. The token is looked up by its HMAC, which is then compared in constant time; its last use is
 * recorded at most once a {@link #USE_RECORDED_EVERY} (so that not every request writes the store).
 */
public final class Authenticator {
    public static final java.time.Duration USE_RECORDED_EVERY = java.time.Duration.ofMinutes(1);
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Authenticator.class);

    private final Store store;
    private final Clock clock;
    private final io.slipstream.server.secret.TokenHasher hasher;

    public Authenticator(Store store, Clock clock, io.slipstream.server.secret.TokenHasher hasher) {
        this.store = store;
        this.clock = clock;
        this.hasher = hasher;
    }

    public Principal authenticate(String authorization) {
        if (authorization == null || authorization.isBlank()) {
            throw ApiException.unauthorized("missing Authorization header: send 'Authorization: Bearer <token>'");
        }
        if (!authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw ApiException.unauthorized("the Authorization header must be 'Bearer <token>'");
        }
        String secret = authorization.substring(7).trim();
        if (secret.length() > 256) {
            throw ApiException.unauthorized("invalid or expired token");
        }
        String hash = hasher.hash(secret);
        Optional<TokenRecord> token = store.credentials().tokenByHash(hash);
        java.time.Instant now = clock.instant();
        if (token.isEmpty() || !token.get().hashScheme().equals(TokenRecord.HMAC_SHA256)
                || !io.slipstream.server.secret.TokenHasher.matches(token.get().hash(), hash) || !token.get().isUsableAt(now)) {
            throw ApiException.unauthorized("invalid or expired token");
        }
        TokenRecord record = token.get();
        recordUse(record, now);
        if (record.user().startsWith(RunTokens.USER_PREFIX)) {
            return runPrincipal(record);
        }
        return new Principal(record.user(), record.admin(), store.documents().workspacesOf(record.user()));
    }

    private void recordUse(TokenRecord record, java.time.Instant now) {
        if (record.lastUsedAt() != null && record.lastUsedAt().isAfter(now.minus(USE_RECORDED_EVERY))) {
            return;
        }
        try {
            store.write(tx -> tx.recordTokenUse(record.id(), now, now.minus(USE_RECORDED_EVERY)));
        } catch (RuntimeException e) {
            LOG.warn("cannot record the use of token {}: {}", record.id(), e.toString()); // the request goes on
        }
    }

    /** A run's token works while its run is not over. */
    private Principal runPrincipal(TokenRecord record) {
        String id = record.user().substring(RunTokens.USER_PREFIX.length());
        var run = RunId.isValid(id) ? store.runs().get(new RunId(id)) : Optional.<io.slipstream.model.RunRecord>empty();
        if (run.isEmpty() || run.get().state().isFinal()) {
            throw ApiException.unauthorized("the run of this token has ended");
        }
        return new Principal(record.user(), false, java.util.Set.of(run.get().workspace()), id);
    }
}
