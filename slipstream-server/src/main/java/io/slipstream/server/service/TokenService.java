package io.slipstream.server.service;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.Names;
import io.slipstream.api.wire.TokenView;
import io.slipstream.server.api.ApiException;
import io.slipstream.server.auth.Principal;
import io.slipstream.server.auth.Tokens;
import io.slipstream.store.Store;
import io.slipstream.store.TokenRecord;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** Creates, lists (with their expiry and last use) and revokes API tokens; admins only. */
public final class TokenService {
    private final Store store;
    private final Clock clock;
    private final io.slipstream.server.secret.TokenHasher hasher;

    public TokenService(Store store, Clock clock, io.slipstream.server.secret.TokenHasher hasher) {
        this.store = store;
        this.clock = clock;
        this.hasher = hasher;
    }

    /** Creates a token and returns it with its secret, the only time the secret is ever shown. */
    public TokenView create(Principal caller, String user, boolean admin, String description, Integer expiresInDays) {
        requireAdmin(caller);
        Problems problems = new Problems();
        if (user == null) {
            problems.add("user", "is required");
        } else if (Names.userNameProblem(user) != null) {
            problems.add("user", Names.userNameProblem(user));
        }
        if (description != null && description.length() > 256) {
            problems.add("description", "must be at most 256 characters");
        }
        if (expiresInDays != null && (expiresInDays < 1 || expiresInDays > 3650)) {
            problems.add("expiresInDays", "must be between 1 and 3650");
        }
        problems.throwIfAny("the token request is invalid");
        return issue(user, admin, description, expiresInDays == null ? null : Duration.ofDays(expiresInDays));
    }

    /** Issues a token without a caller: used once, at the first start, for the admin token. */
    public TokenView issue(String user, boolean admin, String description, Duration lifetime) {
        Minted minted = mint(user, admin, description, lifetime);
        store.commit(tx -> tx.createToken(minted.record()));
        return view(minted.record(), minted.secret());
    }

    /** A token made and not yet stored: the record to store (hashed) and its secret. */
    public record Minted(TokenRecord record, String secret) {
    }

    /** Makes a token without storing it, for a caller that stores it in a transaction of its own. */
    public Minted mint(String user, boolean admin, String description, Duration lifetime) {
        Instant now = clock.instant();
        String secret = Tokens.newSecret();
        return new Minted(new TokenRecord(Tokens.newId(), hasher.hash(secret), user, admin, description, now,
                lifetime == null ? null : now.plus(lifetime), null), secret);
    }

    public List<TokenView> list(Principal caller) {
        requireAdmin(caller);
        return store.credentials().tokens().stream().map(t -> view(t, null)).toList();
    }

    public void revoke(Principal caller, String id) {
        requireAdmin(caller);
        if (!store.write(tx -> tx.revokeToken(id, clock.instant()))) {
            throw ApiException.notFound("token " + id + " not found or already revoked");
        }
    }

    private static TokenView view(TokenRecord record, String secret) {
        return new TokenView(record.id(), record.user(), record.admin(), record.description(), record.createdAt(), record.expiresAt(),
                record.revokedAt(), record.lastUsedAt(), secret);
    }

    private static void requireAdmin(Principal caller) {
        if (!caller.admin()) {
            throw ApiException.forbidden("only admins can manage tokens");
        }
    }
}
