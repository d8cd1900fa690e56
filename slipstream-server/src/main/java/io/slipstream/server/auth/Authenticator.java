package io.slipstream.server.auth;

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
        return new Principal(record.user(), record.admin(), store.workspacesOf(record.user()));
    }
}
