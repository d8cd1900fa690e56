package io.slipstream.server.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.server.support.TestServer;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The console's files: served without a token, with their types and the headers that keep tenant data inert. */
class ConsoleAssetsTest {
    @TempDir
    static Path dataDir;

    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(dataDir);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "/, text/html, no-store",
            "/console/app.js, text/javascript, no-cache",
            "/console/dom.js, text/javascript, no-cache",
            "/console/console.css, text/css, no-cache",
            "/console/favicon.svg, image/svg+xml, no-cache",
            "/favicon.ico, image/svg+xml, no-cache"})
    void consoleFilesCarryStrictHeaders(String path, String type, String cache) {
        TestServer.Response response = server.get(path, null);
        assertThat(response.status()).isEqualTo(200);
        assertThat(response.contentType()).startsWith(type);
        assertThat(response.headers().firstValue("Content-Security-Policy")).hasValue(ConsoleAssets.CSP);
        assertThat(ConsoleAssets.CSP).contains("default-src 'self'").contains("frame-ancestors 'none'").doesNotContain("unsafe-inline");
        assertThat(response.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
        assertThat(response.headers().firstValue("X-Frame-Options")).hasValue("DENY");
        assertThat(response.headers().firstValue("Cache-Control")).hasValue(cache);
        TestServer.Response head = server.call("HEAD", path, null, null, null);
        assertThat(head.status()).isEqualTo(200);
        assertThat(head.contentType()).as("HEAD answers as GET does, without the body").startsWith(type);
        assertThat(head.headers().firstValue("Content-Security-Policy")).hasValue(ConsoleAssets.CSP);
        assertThat(head.text()).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"/console/logback.xml", "/console/nope.js", "/console/..%2Flogback.xml", "/console/APP.JS", "/console/.hidden.js"})
    void nothingElseOfTheClassPathIsServed(String path) {
        TestServer.Response response = server.get(path, null);
        assertThat(response.status()).isEqualTo(404);
    }

    @Test
    void namesThatAreNoFileAreNotRemembered() {
        // Anyone may ask without a token, for any of 36^41 plain names: only the files the console ships are cached.
        ConsoleAssets assets = new ConsoleAssets();
        for (int i = 0; i < 1000; i++) {
            assertThat(assets.file("nope-" + i + ".js")).isEmpty();
        }
        assertThat(assets.file("app.js")).isPresent();
        assertThat(assets.file("app.js")).isPresent();
        assertThat(assets.cached()).isEqualTo(1);
    }

    @Test
    void thePageHasNoInlineScriptOrStyle() {
        String page = server.get("/", null).text();
        assertThat(page).doesNotContain("<style").doesNotContain("style=").doesNotContain("onload=").doesNotContain("onclick=");
        assertThat(page.replaceAll("<script type=\"module\" src=\"/console/app.js\"></script>", "")).doesNotContain("<script");
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({"index.html, text/html; charset=utf-8", "runs.js, text/javascript; charset=utf-8", "a.svg, image/svg+xml",
            "x.class, ", "../x.js, ", "UPPER.js, ", "a.b.js, "})
    void onlyPlainNamesOfTheConsolesKindsHaveATypeOf(String name, String type) {
        assertThat(ConsoleAssets.typeOf(name)).isEqualTo(type);
    }
}
