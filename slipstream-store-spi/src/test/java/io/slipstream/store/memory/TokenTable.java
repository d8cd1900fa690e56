package io.slipstream.store.memory;

import static io.slipstream.store.memory.Stored.micros;

import io.slipstream.store.ConflictException;
import io.slipstream.store.TokenRecord;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/** Tokens in an {@link InMemoryStore}, by id, their hashes unique (the JDBC store's {@code TokenRows}). */
final class TokenTable {
    private TokenTable() {
    }

    static void create(Tables t, TokenRecord token) {
        if (t.tokens.containsKey(token.id()) || t.tokens.values().stream().anyMatch(other -> other.hash().equals(token.hash()))) {
            throw new ConflictException("it was created by someone else meanwhile: token " + token.id() + " (its id or hash is taken)");
        }
        t.tokens().put(token.id(), new TokenRecord(token.id(), token.hash(), token.hashScheme(), token.user(), token.admin(),
                token.description(), micros(token.createdAt()), micros(token.expiresAt()), micros(token.revokedAt()),
                micros(token.lastUsedAt())));
    }

    static Optional<TokenRecord> findByHash(Tables t, String hash) {
        return t.tokens.values().stream().filter(token -> token.hash().equals(hash)).findFirst();
    }

    static List<TokenRecord> list(Tables t) {
        return t.tokens.values().stream()
                .sorted(Comparator.comparing(TokenRecord::createdAt).thenComparing(TokenRecord::id))
                .toList();
    }

    static boolean hasAdmin(Tables t, Instant now) {
        return list(t).stream().anyMatch(token -> token.admin() && token.isUsableAt(now));
    }

    static boolean revoke(Tables t, String id, Instant at) {
        TokenRecord token = t.tokens.get(id);
        if (token == null || token.revokedAt() != null) {
            return false;
        }
        t.tokens().put(id, new TokenRecord(token.id(), token.hash(), token.hashScheme(), token.user(), token.admin(), token.description(),
                token.createdAt(), token.expiresAt(), micros(at), token.lastUsedAt()));
        return true;
    }

    static boolean recordUse(Tables t, String id, Instant at, Instant unlessUsedSince) {
        TokenRecord token = t.tokens.get(id);
        if (token == null || token.lastUsedAt() != null && !token.lastUsedAt().isBefore(micros(unlessUsedSince))) {
            return false;
        }
        t.tokens().put(id, new TokenRecord(token.id(), token.hash(), token.hashScheme(), token.user(), token.admin(), token.description(),
                token.createdAt(), token.expiresAt(), token.revokedAt(), micros(at)));
        return true;
    }

    static boolean rehash(Tables t, String id, String expectedHash, String hash, String hashScheme) {
        TokenRecord token = t.tokens.get(id);
        if (token == null || !token.hash().equals(expectedHash)) {
            return false;
        }
        if (t.tokens.values().stream().anyMatch(other -> !other.id().equals(id) && other.hash().equals(hash))) {
            throw new ConflictException("it was created by someone else meanwhile: another token has that hash");
        }
        t.tokens().put(id, new TokenRecord(token.id(), hash, hashScheme, token.user(), token.admin(), token.description(),
                token.createdAt(), token.expiresAt(), token.revokedAt(), token.lastUsedAt()));
        return true;
    }
}
