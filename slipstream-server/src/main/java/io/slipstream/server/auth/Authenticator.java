package io.slipstream.server.auth;

import io.slipstream.api.run.RunId;
import io.slipstream.server.api.ApiException;
import io.slipstream.store.Store;
import io.slipstream.store.TokenRecord;
import java.time.Clock;
import java.util.Optional;

/** Turns an {@code Authorization: Bearer} header into a {@link Principal}, or refuses with 401. */
public final class Authenticator {
    private final Store store;
    private final Clock clock;

    public Authenticator(Store store, Clock clock) {
        this.store = store;
        this.clock = clock;
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
        Optional<TokenRecord> token = store.findTokenByHash(Tokens.hash(secret));
        if (token.isEmpty() || !token.get().isUsableAt(clock.instant())) {
            throw ApiException.unauthorized("invalid or expired token");
        }
        TokenRecord record = token.get();
        if (record.user().startsWith(RunTokens.USER_PREFIX)) {
            return runPrincipal(record);
        }
        return new Principal(record.user(), record.admin(), store.workspacesOf(record.user()));
    }

    /** A run's token works while its run is not over. */
    private Principal runPrincipal(TokenRecord record) {
        String id = record.user().substring(RunTokens.USER_PREFIX.length());
        var run = RunId.isValid(id) ? store.getRun(new RunId(id)) : Optional.<io.slipstream.store.RunRecord>empty();
        if (run.isEmpty() || run.get().state().isFinal()) {
            throw ApiException.unauthorized("the run of this token has ended");
        }
        return new Principal(record.user(), false, java.util.Set.of(run.get().workspace()), id);
    }
}
