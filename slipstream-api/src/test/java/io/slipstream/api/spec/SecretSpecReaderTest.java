package io.slipstream.api.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.codec.Json;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Secrets as documents, and jobs that refer to them: accepted exactly as documented, everything else a problem with its path. */
class SecretSpecReaderTest {
    private static final String VALUE = "hf_a-value-that-must-never-be-printed";

    private static final String SECRET = """
            apiVersion: slipstream/v1
            kind: Secret
            metadata: {name: hf, workspace: team-a}
            spec:
              data:
                token: %s
                config.json: '{"user": "bot"}'
            """.formatted(VALUE);

    private static final String JOB = """
            apiVersion: slipstream/v1
            kind: Job
            metadata: {name: train, workspace: team-a}
            spec:
              storage: [{name: data, scope: job, mountPath: /data}]
              nodeGroups:
                - name: worker
                  resources: {cpu: 1, memory: 1Gi}
                  command: [python, train.py]
                  env:
                    LR: "0.1"
                    HF_TOKEN: {secretRef: hf/token}
                  secrets:
                    - {name: hf, mountPath: /var/run/secrets/hf}
                    - {name: db}
            """;

    private static Document<?> read(String yaml) {
        return Documents.readAll(yaml.getBytes(StandardCharsets.UTF_8)).get(0);
    }

    private static List<Problem> problemsOf(String yaml) {
        try {
            read(yaml);
        } catch (InvalidInputException e) {
            return e.problems();
        }
        throw new AssertionError("expected the document to be rejected:\n" + yaml);
    }

    @Test
    void aSecretIsReadButNeverShowsOrWritesItsValues() {
        Document<?> document = read(SECRET);
        assertThat(document.reference()).isEqualTo("Secret team-a/hf");
        SecretSpec spec = (SecretSpec) document.spec();
        assertThat(spec.data()).containsOnlyKeys("token", "config.json");
        assertThat(spec.data().get("token").reveal()).isEqualTo(VALUE);
        assertThat(spec.data().get("token")).isEqualTo(SecretValue.of(VALUE)).isNotEqualTo(SecretValue.of("other"));
        // Whatever prints or serializes it shows the mask.
        assertThat(document.toString()).doesNotContain(VALUE).contains("token");
        assertThat(spec.data().get("token").toString()).isEqualTo("***");
        assertThat(Json.mapper().writeValueAsString(spec)).doesNotContain(VALUE).contains("***");
        assertThatThrownBy(() -> SpecWriter.write(document)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void badSecretsAreRefusedNamingTheKeyButNeverTheValue() {
        String big = "x".repeat(SecretSpec.MAX_VALUE_BYTES + 1);
        List<Problem> problems = problemsOf("""
                apiVersion: slipstream/v1
                kind: Secret
                metadata: {name: hf, workspace: team-a}
                spec:
                  data:
                    "../escape": a
                    "..data": b
                    "with space": c
                    number: 5
                    masked: "***"
                    big: %s
                  stringData: {x: y}
                """.formatted(big));
        assertThat(problems).extracting(Problem::field).containsExactlyInAnyOrder("spec.data.../escape", "spec.data...data",
                "spec.data.with space", "spec.data.number", "spec.data.masked", "spec.data.big", "spec.stringData");
        assertThat(problems.toString()).doesNotContain(big);
        assertThat(problemsOf("{\"apiVersion\": \"slipstream/v1\", \"kind\": \"Secret\", \"metadata\": {\"name\": \"hf\", \"workspace\": \"w\"}, "
                + "\"spec\": {\"data\": {\"k\": \"SECRET\\ud800\"}}}")).singleElement().satisfies(p -> {
                    assertThat(p.field()).isEqualTo("spec.data.k");
                    assertThat(p.message()).contains("lone surrogate").doesNotContain("SECRET");
                });
        assertThat(problemsOf("apiVersion: slipstream/v1\nkind: Secret\nmetadata: {name: hf}\nspec: {data: {a: b}}\n"))
                .extracting(Problem::field).containsExactly("metadata.workspace");
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 5; i++) {
            many.append("    k").append(i).append(": ").append("y".repeat(SecretSpec.MAX_VALUE_BYTES)).append('\n');
        }
        assertThat(problemsOf("apiVersion: slipstream/v1\nkind: Secret\nmetadata: {name: hf, workspace: w}\nspec:\n  data:\n" + many))
                .extracting(Problem::field).containsExactly("spec.data");
    }

    @Test
    void aJobRefersToSecretsByNameAndKeepsOnlyTheReferences() {
        JobSpec job = (JobSpec) read(JOB).spec();
        NodeGroupSpec group = job.nodeGroups().get(0);
        assertThat(group.env()).containsExactly(Map.entry("LR", "0.1"));
        assertThat(group.secretEnv()).containsExactly(Map.entry("HF_TOKEN", new SecretRef("hf", "token")));
        assertThat(group.secrets()).containsExactly(new SecretMount("hf", "/var/run/secrets/hf"), new SecretMount("db", null));
        assertThat(group.usesSecrets()).isTrue();

        var written = SpecWriter.write(read(JOB));
        var env = written.get("spec").get("nodeGroups").get(0).get("env");
        assertThat(env.get("HF_TOKEN").toString()).isEqualTo("{\"secretRef\":\"hf/token\"}");
        assertThat(env.get("LR").asString()).isEqualTo("0.1");
        assertThat(Documents.readStored(written).spec()).isEqualTo(job);
    }

    @Test
    void anEnvValueIsExactlyAStringOrExactlyASecretRef() {
        List<Problem> problems = problemsOf(JOB.replace("HF_TOKEN: {secretRef: hf/token}", String.join("\n",
                "HF_TOKEN: {secretRef: hf/token, optional: true}",
                "        A: {secretRef: hf}",
                "        B: {secretRef: Bad_Name/token}",
                "        C: {secretRef: hf/..}",
                "        D: {secretKeyRef: hf/token}",
                "        E: [a, b]",
                "        F: 5",
                "        G: {}",
                "        H: {secretRef: [hf, token]}")));
        assertThat(problems).extracting(Problem::field).containsExactlyInAnyOrder(
                "spec.nodeGroups[0].env.HF_TOKEN.optional", "spec.nodeGroups[0].env.A.secretRef", "spec.nodeGroups[0].env.B.secretRef",
                "spec.nodeGroups[0].env.C.secretRef", "spec.nodeGroups[0].env.D.secretRef", "spec.nodeGroups[0].env.D.secretKeyRef",
                "spec.nodeGroups[0].env.E", "spec.nodeGroups[0].env.F", "spec.nodeGroups[0].env.G.secretRef", "spec.nodeGroups[0].env.H.secretRef");
        assertThat(problems).filteredOn(p -> p.field().endsWith("env.E")).singleElement()
                .satisfies(p -> assertThat(p.message()).contains("a list").contains("secretRef"));
    }

    @Test
    void secretMountsAreCheckedLikeStorage() {
        List<Problem> problems = problemsOf(JOB.replace("""
                        - {name: hf, mountPath: /var/run/secrets/hf}
                        - {name: db}
                """, """
                        - {name: hf, mountPath: relative/path}
                        - {name: hf}
                        - {name: db, mountPath: /data}
                        - {name: x, mountPath: /var/run/../etc}
                        - {name: Y_bad, readOnly: true}
                """));
        assertThat(problems).extracting(Problem::field).containsExactlyInAnyOrder(
                "spec.nodeGroups[0].secrets[0].mountPath", "spec.nodeGroups[0].secrets[1].name", "spec.nodeGroups[0].secrets[2].mountPath",
                "spec.nodeGroups[0].secrets[3].mountPath", "spec.nodeGroups[0].secrets[4].name", "spec.nodeGroups[0].secrets[4].readOnly");
    }

    @Test
    void overridesMayReferToASecretButStayPlainStringsOtherwise() {
        @SuppressWarnings("unchecked")
        Document<JobSpec> job = (Document<JobSpec>) read(JOB);
        JobSpec changed = Overrides.apply(job, Map.of("nodeGroups.worker.env.DB_PASSWORD.secretRef", "db/password",
                "nodeGroups.worker.env.PLAIN", "{secretRef: x/y}"));
        NodeGroupSpec group = changed.nodeGroups().get(0);
        assertThat(group.secretEnv()).containsEntry("DB_PASSWORD", new SecretRef("db", "password"));
        assertThat(group.env()).containsEntry("PLAIN", "{secretRef: x/y}");
    }
}
