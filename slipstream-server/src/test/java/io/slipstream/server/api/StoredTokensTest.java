package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.server.secret.TokenHasher;
import io.slipstream.server.support.TestServer;
import io.slipstream.store.Store;
import io.slipstream.store.TokenRecord;
import io.slipstream.store.jdbc.JdbcStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Tokens and key files across an upgrade and restarts, against the real server: tokens stored by an older version
 * (plain SHA-256) keep working and are stored as HMACs from then on; a server started with another key file refuses.
 */
class StoredTokensTest {
    @TempDir
    Path dataDir;

    private static final String OLD_ADMIN = "ss_old-admin-token-from-before-the-upgrade-000000";
    private static final String OLD_ALICE = "ss_old-alice-token-from-before-the-upgrade-000000";

    /** A data dir as an older version left it: tokens hashed with plain SHA-256, no key files. */
    private void olderVersionWasHere() throws Exception {
        try (Store store = JdbcStore.openH2(dataDir)) {
            Instant then = Instant.parse("2026-01-01T00:00:00Z");
            store.commit(tx -> tx.createToken(new TokenRecord("tok-oldadmin", TokenHasher.sha256Hex(OLD_ADMIN), TokenRecord.SHA256, "admin", true, "created at first start",
                    then, null, null, null)));
            store.commit(tx -> tx.createToken(new TokenRecord("tok-oldalice", TokenHasher.sha256Hex(OLD_ALICE), TokenRecord.SHA256, "alice", false, null, then, null,
                    null, null)));
            store.commit(tx -> tx.createToken(new TokenRecord("tok-oldgone", TokenHasher.sha256Hex("ss_expired"), TokenRecord.SHA256, "carol", false, null, then,
                    then.plusSeconds(60), null, null)));
        }
        Files.writeString(dataDir.resolve("admin.token"), OLD_ADMIN + "\n");
    }

    @Test
    void tokensOfAnOlderVersionKeepWorkingAndAreStoredAsHmacsFromThenOn() throws Exception {
        olderVersionWasHere();
        try (TestServer server = TestServer.start(dataDir)) {
            assertThat(server.get("/api/v1/whoami", OLD_ADMIN).json().get("admin").asBoolean()).isTrue();
            assertThat(server.get("/api/v1/whoami", OLD_ALICE).json().get("user").asString()).isEqualTo("alice");
            assertThat(server.get("/api/v1/whoami", "ss_expired").status()).as("expired").isEqualTo(401);

            String fresh = server.tokenFor("bob");
            JsonNode tokens = server.get("/api/v1/tokens", OLD_ADMIN).json().get("items");
            JsonNode alice = find(tokens, "tok-oldalice");
            assertThat(alice.has("lastUsedAt")).as("used just now").isTrue();
            assertThat(find(tokens, "tok-oldgone").get("expiresAt").asString()).isEqualTo("2026-01-01T00:01:00Z");
            assertThat(tokens.toString()).doesNotContain(TokenHasher.sha256Hex(OLD_ALICE)).doesNotContain(OLD_ALICE).doesNotContain(fresh);

            String bobId = server.get("/api/v1/tokens", OLD_ADMIN).json().get("items").valueStream()
                    .filter(t -> t.get("user").asString().equals("bob")).findFirst().orElseThrow().get("id").asString();
            assertThat(server.call("DELETE", "/api/v1/tokens/" + bobId, OLD_ADMIN, null, null).status()).isEqualTo(204);
            assertThat(server.get("/api/v1/whoami", fresh).status()).as("revoked").isEqualTo(401);
            assertThat(find(server.get("/api/v1/tokens", OLD_ADMIN).json().get("items"), bobId).has("revokedAt")).isTrue();
            for (Path file : storeFiles()) {
                assertThat(new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1)).doesNotContain(fresh)
                        .doesNotContain(TokenHasher.sha256Hex(fresh));
            }
        }
        TokenHasher hasher = new TokenHasher(Base64.getDecoder().decode(Files.readString(dataDir.resolve("token.pepper")).trim()));
        try (Store store = JdbcStore.openH2(dataDir)) {
            assertThat(store.credentials().tokens()).allSatisfy(t -> assertThat(t.hashScheme()).isEqualTo(TokenRecord.HMAC_SHA256));
            assertThat(store.credentials().tokens()).filteredOn(t -> t.id().equals("tok-oldalice")).singleElement()
                    .satisfies(t -> assertThat(t.hash()).isEqualTo(hasher.hash(OLD_ALICE)));
        }
        try (TestServer again = TestServer.start(dataDir)) {
            assertThat(again.get("/api/v1/whoami", OLD_ALICE).status()).isEqualTo(200);
        }
    }

    @Test
    void aServerWithAnotherKeyFileRefusesToStartAndTheRightOneStartsIt() throws Exception {
        try (TestServer server = TestServer.start(dataDir)) {
            server.post("/api/v1/apply", server.adminToken(), "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n---\n"
                    + "apiVersion: slipstream/v1\nkind: Secret\nmetadata: {name: s, workspace: w}\nspec: {data: {k: v}}\n");
        }
        Path key = dataDir.resolve("secret.key");
        Path kept = Files.move(key, dataDir.resolve("kept.key"));
        assertThatThrownBy(() -> TestServer.start(dataDir)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(key + " does not exist").hasMessageContaining("restore");
        Files.writeString(key, Base64.getEncoder().encodeToString(new byte[32]) + "\n");
        assertThatThrownBy(() -> TestServer.start(dataDir)).isInstanceOf(IllegalStateException.class).hasMessageContaining("sealed with key");
        Files.move(kept, key, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        try (TestServer server = TestServer.start(dataDir)) {
            assertThat(server.get("/api/v1/workspaces/w/secrets/s", server.adminToken()).json().get("spec").get("data").get("k").asString())
                    .isEqualTo("***");
        }
    }

    private static JsonNode find(JsonNode tokens, String id) {
        return tokens.valueStream().filter(t -> t.get("id").asString().equals(id)).findFirst().orElseThrow();
    }

    private java.util.List<Path> storeFiles() throws Exception {
        try (var files = Files.walk(dataDir.resolve("store"))) {
            return files.filter(Files::isRegularFile).toList();
        }
    }
}
