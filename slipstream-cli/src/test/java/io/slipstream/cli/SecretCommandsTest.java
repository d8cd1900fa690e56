package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.server.SlipstreamServer;
import io.slipstream.server.config.ConfigReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code apply}, {@code get secrets}, {@code get secret WS/NAME} and {@code delete secret} against a server in this JVM. */
class SecretCommandsTest {
    private static final String VALUE = "hf_cli-value-never-printed";

    @TempDir
    Path dir;

    private record Result(int code, String out, String err) {
    }

    private Result run(SlipstreamServer server, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--server", server.url(), "--data-dir", dir.resolve("data").toString()));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(all.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err));
        return new Result(code, out.toString(), err.toString());
    }

    @Test
    void secretsAreAppliedListedShownWithoutValuesAndDeleted() throws Exception {
        Path file = Files.writeString(dir.resolve("secret.yaml"), """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-a}
                ---
                apiVersion: slipstream/v1
                kind: Secret
                metadata: {name: hf, workspace: team-a}
                spec:
                  data: {token: %s, user: bot}
                """.formatted(VALUE));
        try (SlipstreamServer server = SlipstreamServer.start(ConfigReader.defaults(dir.resolve("data")).withPort(0),
                SlipstreamServer.systemClock())) {
            Result applied = run(server, "apply", "-f", file.toString());
            assertThat(applied.code()).as(applied.err()).isZero();
            assertThat(applied.out()).contains("hf").doesNotContain(VALUE);

            Result list = run(server, "get", "secrets");
            assertThat(list.code()).as(list.err()).isZero();
            assertThat(list.out().lines().toList()).hasSize(2);
            assertThat(list.out()).contains("WORKSPACE", "KEYS", "team-a", "hf", "token,user").doesNotContain(VALUE);

            for (String[] args : List.of(new String[] {"get", "secret", "team-a/hf", "-o", "yaml"}, new String[] {"get", "secret", "hf", "--workspace", "team-a",
                    "-o", "json"})) {
                Result one = run(server, args);
                assertThat(one.code()).as(one.err()).isZero();
                assertThat(one.out()).contains("token", "***").doesNotContain(VALUE);
            }
            Result unqualified = run(server, "get", "secret", "hf");
            assertThat(unqualified.code()).isEqualTo(CliException.REJECTED);
            assertThat(unqualified.err()).contains("WORKSPACE/NAME");

            Result deleted = run(server, "delete", "secret", "team-a/hf");
            assertThat(deleted.code()).as(deleted.err()).isZero();
            assertThat(deleted.out()).isEqualTo("deleted secret team-a/hf\n");
            assertThat(run(server, "get", "secret", "team-a/hf").code()).isNotZero();
            assertThat(run(server, "delete", "secret", "team-a/hf").err()).contains("not found");

            Result tokens = run(server, "token", "list");
            assertThat(tokens.out()).contains("LAST USED", "REVOKED");
        }
    }
}
