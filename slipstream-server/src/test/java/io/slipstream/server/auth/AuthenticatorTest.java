package io.slipstream.server.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.wire.TokenView;
import io.slipstream.server.api.ApiException;
import io.slipstream.server.secret.TokenHasher;
import io.slipstream.server.service.TokenService;
import io.slipstream.store.Store;
import io.slipstream.store.TokenRecord;
import io.slipstream.store.jdbc.JdbcStore;
import io.slipstream.testing.TestingClock;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tokens at rest are HMACs; expired and revoked ones answer 401; a token's last use is kept, written at most once a minute. */
class AuthenticatorTest {
    @TempDir
    Path dataDir;

    private final TestingClock clock = new TestingClock();
    private final TokenHasher hasher = new TokenHasher(new byte[32]);
    private Store store;
    private TokenService tokens;
    private Authenticator authenticator;
    private Principal admin;

    @BeforeEach
    void open() {
        store = JdbcStore.openH2(dataDir);
        tokens = new TokenService(store, clock, hasher);
        authenticator = new Authenticator(store, clock, hasher);
        admin = new Principal("admin", true, java.util.Set.of());
    }

    @AfterEach
    void close() {
        store.close();
    }

    private static String bearer(String secret) {
        return "Bearer " + secret;
    }

    private TokenRecord stored(String id) {
        return store.credentials().tokens().stream().filter(t -> t.id().equals(id)).findFirst().orElseThrow();
    }

    @Test
    void aTokenIsStoredAsItsHmacOnly() {
        TokenView created = tokens.create(admin, "alice", false, "laptop", null);
        TokenRecord record = stored(created.id());
        assertThat(record.hash()).isEqualTo(hasher.hash(created.token())).isNotEqualTo(TokenHasher.sha256Hex(created.token()));
        assertThat(record.hashScheme()).isEqualTo(TokenRecord.HMAC_SHA256);
        assertThat(authenticator.authenticate(bearer(created.token())).user()).isEqualTo("alice");
        // The same secret under another pepper (another server's store) is nobody.
        assertThatThrownBy(() -> new Authenticator(store, clock, new TokenHasher(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32})).authenticate(bearer(created.token())))
                .isInstanceOf(ApiException.class).extracting(e -> ((ApiException) e).status()).isEqualTo(401);
        // A row still in the old scheme is not accepted by its plain hash (the server upgrades such rows at start).
        store.commit(tx -> tx.createToken(new TokenRecord("tok-legacy", hasher.hash("ss_legacy"), TokenRecord.SHA256, "bob", false, null, clock.instant(), null,
                null, null)));
        assertThatThrownBy(() -> authenticator.authenticate(bearer("ss_legacy"))).isInstanceOf(ApiException.class);
    }

    @Test
    void expiredAndRevokedTokensAnswer401() {
        TokenView expiring = tokens.create(admin, "alice", false, null, 30);
        assertThat(expiring.expiresAt()).isEqualTo(clock.instant().plus(Duration.ofDays(30)));
        assertThat(tokens.list(admin)).filteredOn(t -> t.id().equals(expiring.id())).singleElement()
                .satisfies(t -> assertThat(t.expiresAt()).isEqualTo(expiring.expiresAt()));
        clock.advance(Duration.ofDays(30).minusSeconds(1));
        assertThat(authenticator.authenticate(bearer(expiring.token())).user()).isEqualTo("alice");
        clock.advance(Duration.ofSeconds(1));
        assertThatThrownBy(() -> authenticator.authenticate(bearer(expiring.token()))).isInstanceOf(ApiException.class)
                .hasMessageContaining("invalid or expired").extracting(e -> ((ApiException) e).status()).isEqualTo(401);

        TokenView revoked = tokens.create(admin, "bob", false, null, null);
        assertThat(authenticator.authenticate(bearer(revoked.token())).user()).isEqualTo("bob");
        tokens.revoke(admin, revoked.id());
        assertThatThrownBy(() -> authenticator.authenticate(bearer(revoked.token()))).isInstanceOf(ApiException.class)
                .extracting(e -> ((ApiException) e).status()).isEqualTo(401);
        assertThat(tokens.list(admin)).filteredOn(t -> t.id().equals(revoked.id())).singleElement()
                .satisfies(t -> assertThat(t.revokedAt()).isEqualTo(clock.instant()));
    }

    @Test
    void theLastUseIsShownAndWrittenAtMostOnceAMinute() {
        TokenView token = tokens.create(admin, "alice", false, null, null);
        assertThat(tokens.list(admin)).singleElement().satisfies(t -> assertThat(t.lastUsedAt()).isNull());
        var firstUse = clock.instant();
        authenticator.authenticate(bearer(token.token()));
        assertThat(stored(token.id()).lastUsedAt()).isEqualTo(firstUse);
        clock.advance(Duration.ofSeconds(59));
        authenticator.authenticate(bearer(token.token()));
        assertThat(stored(token.id()).lastUsedAt()).as("within a minute: not written again").isEqualTo(firstUse);
        clock.advance(Duration.ofSeconds(2));
        authenticator.authenticate(bearer(token.token()));
        assertThat(tokens.list(admin)).singleElement().satisfies(t -> assertThat(t.lastUsedAt()).isEqualTo(clock.instant()));
    }
}
