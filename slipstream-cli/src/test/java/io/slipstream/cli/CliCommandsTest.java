package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.server.SlipstreamServer;
import io.slipstream.server.config.ConfigReader;
import io.slipstream.server.config.RunLimits;
import io.slipstream.testing.NoProcessLeftBehind;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The commands' exit codes, messages and output against a real server (real local executor) in this JVM: what the
 * end-to-end tests used to check through a JVM per command. {@code EndToEndIT} and {@code RunLifecycleIT} keep one
 * story each through the packaged jar.
 */
@ExtendWith(NoProcessLeftBehind.class)
class CliCommandsTest {
    private static final Path EXAMPLES = Path.of("..", "examples");

    @TempDir
    static Path work;

    private static SlipstreamServer server;

    record Result(int exit, String out, String err) {
        String lastLine() {
            List<String> lines = out.strip().lines().toList();
            return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
        }
    }

    @BeforeAll
    static void startServer() throws Exception {
        server = SlipstreamServer.start(ConfigReader.defaults(work.resolve("data")).withPort(0)
                .withLimits(RunLimits.DEFAULTS.withGracePeriod(Duration.ofSeconds(3))), SlipstreamServer.systemClock());
        Files.copy(EXAMPLES.resolve("hello.yaml"), work.resolve("hello.yaml"));
        assertThat(cli("apply", "-f", file("hello.yaml")).exit()).isZero();
    }

    @AfterAll
    static void stopServer() throws Exception {
        try {
            JsonNode runs = Json.mapper().readTree(cli("get", "runs", "-o", "json").out());
            for (JsonNode run : runs.has("items") ? runs.get("items") : runs) {
                if (!io.slipstream.api.run.RunState.valueOf(run.get("state").asString()).isFinal()) {
                    cli("cancel", run.get("id").asString(), "--wait");
                }
            }
        } finally {
            server.close();
        }
    }

    private static String file(String name) {
        return work.resolve(name).toString();
    }

    private static void write(String name, String content) throws Exception {
        Files.writeString(work.resolve(name), content);
    }

    /** {@code slipstream <args> --server URL --data-dir DIR}, in this JVM. */
    private static Result cli(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--server", server.url(), "--data-dir", work.resolve("data").toString()));
        return bare(all.toArray(String[]::new));
    }

    private static Result bare(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Result(code, out.toString(), err.toString());
    }

    private static String job(String name, String workspace, String script) {
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: %s}
                spec:
                  nodeGroups:
                    - name: main
                      replicas: 2
                      resources: {cpu: 1, memory: 1Gi}
                      command: [sh, -c, %s]
                """.formatted(name, workspace, Json.mapper().writeValueAsString(script));
    }

    private static JsonNode run(String id) {
        Result result = cli("get", "run", id, "-o", "json");
        assertThat(result.exit()).as(result.err()).isZero();
        return Json.mapper().readTree(result.out());
    }

    private static JsonNode await(String id, Predicate<JsonNode> done) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        JsonNode run = run(id);
        while (!done.test(run)) {
            assertThat(System.nanoTime()).as("run %s never got there; last: %s", id, run).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(50); // polling with a deadline
            run = run(id);
        }
        return run;
    }

    /** Live processes whose command line contains {@code marker}. */
    private static List<Long> processesWith(String marker) {
        return ProcessHandle.allProcesses().filter(p -> p.isAlive() && p.info().commandLine().map(l -> l.contains(marker)).orElse(false))
                .map(ProcessHandle::pid).toList();
    }

    @Test
    void aRunTheServerCannotReadIsNamedNotHidden() throws Exception {
        write("readable.yaml", job("readable", "demo", "true"));
        Result submitted = cli("submit", "-f", file("readable.yaml"));
        assertThat(submitted.exit()).as(submitted.err()).isZero();
        String id = submitted.lastLine();
        await(id, run -> run.get("state").asString().equals("SUCCEEDED"));
        String url = io.slipstream.store.jdbc.JdbcStore.h2Url(work.resolve("data"));
        String spec;
        try (var db = java.sql.DriverManager.getConnection(url, "sa", ""); var sql = db.createStatement()) {
            try (var rs = sql.executeQuery("SELECT spec FROM runs WHERE id = '" + id + "'")) {
                assertThat(rs.next()).as("run %s in %s", id, submitted.out()).isTrue();
                spec = rs.getString(1);
            }
            sql.executeUpdate("UPDATE runs SET spec = REPLACE(spec, '\"nodeGroups\":[', '\"nodeGroups\":7,\"x\":[') WHERE id = '" + id + "'");
        }
        try {
            Result list = cli("get", "runs", "--job", "readable");
            assertThat(list.exit()).as(list.err()).isZero();
            assertThat(list.out()).doesNotContain(id);
            assertThat(list.err()).contains("run " + id + " (demo/readable, SUCCEEDED) cannot be read by the server: at nodeGroups");
            Result one = cli("get", "run", id);
            assertThat(one.exit()).isNotZero();
            assertThat(one.err()).contains("run " + id + " is stored in a form this server cannot read");
        } finally {
            try (var db = java.sql.DriverManager.getConnection(url, "sa", ""); var sql = db.prepareStatement("UPDATE runs SET spec = ? WHERE id = ?")) {
                sql.setString(1, spec);
                sql.setString(2, id);
                sql.executeUpdate();
            }
        }
        assertThat(cli("get", "run", id).exit()).isZero();
    }

    /**
     * {@code --wait} ends as soon as the run cannot start as things stand (here: it may not borrow and asks for more
     * than its quota guarantees), saying why and how to drop it, and when {@code --timeout} passes; the run stays.
     */
    @Test
    void waitEndsWhenTheRunCannotStartOrTheTimeoutPasses() throws Exception {
        write("stuck.yaml", """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: stuck}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: small, workspace: stuck}
                spec: {min: {cpu: 1, memory: 1Gi}}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: big, workspace: stuck}
                spec:
                  quota: small
                  idleResources: Disabled
                  nodeGroups:
                    - {name: main, resources: {cpu: 2, memory: 1Gi}, command: ["true"]}
                """);
        Result stuck = cli("submit", "-f", file("stuck.yaml"), "--wait");
        assertThat(stuck.exit()).as(stuck.err()).isEqualTo(4);
        assertThat(stuck.err()).contains("cannot start as things stand (ExceedsGuarantee): it asks for")
                .contains("it stays queued until that changes; to drop it: ").contains("slipstream cancel " + stuck.lastLine());
        assertThat(cli("cancel", stuck.lastLine()).exit()).isZero();

        write("napper.yaml", job("napper", "demo", "sleep 300"));
        Result timedOut = cli("submit", "-f", file("napper.yaml"), "--wait", "--timeout", "1s");
        assertThat(timedOut.exit()).as(timedOut.err()).isEqualTo(5);
        assertThat(timedOut.err()).contains("stopped waiting after 1s; the run goes on: run " + timedOut.lastLine());
        assertThat(cli("cancel", timedOut.lastLine(), "--wait").exit()).isZero();

        Result noWait = cli("submit", "-f", file("napper.yaml"), "--timeout", "1s");
        assertThat(noWait.exit()).isEqualTo(2);
        assertThat(noWait.err()).contains("--timeout needs --wait");
        Result badTimeout = cli("run", "demo/napper", "--wait", "--timeout", "soon");
        assertThat(badTimeout.exit()).isEqualTo(2);
        assertThat(badTimeout.err()).contains("--timeout: 'soon' is not a duration");
    }

    /** A run refused at creation leaves nothing of its file behind: neither its job nor the workspace beside it. */
    @Test
    void aRefusedSubmitCreatesNothing() throws Exception {
        write("huge.yaml", """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: hopeful}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: huge, workspace: hopeful}
                spec:
                  nodeGroups:
                    - {name: main, replicas: 2, resources: {cpu: 1, memory: 1Gi, gpu: 64}, command: ["true"]}
                """);
        Result huge = cli("submit", "-f", file("huge.yaml"));
        assertThat(huge.exit()).as(huge.err()).isEqualTo(2);
        assertThat(huge.err()).contains("this run could never start: no node can ever hold its instance main");
        assertThat(cli("get", "workspaces").out()).doesNotContain("hopeful");
        assertThat(cli("get", "job", "hopeful/huge").exit()).isNotZero();
    }

    // From EndToEndIT.
    @Test
    void exitCodesSayWhatHappened() throws Exception {
        write("fails.yaml", job("fails", "demo", "exit 3"));
        Result failed = cli("submit", "-f", file("fails.yaml"), "--wait");
        assertThat(failed.exit()).isEqualTo(1);
        assertThat(failed.err()).contains("FAILED").contains("Exited with code 3");

        write("bad.yaml", """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: Bad, workspace: demo}
                spec:
                  nodeGroups:
                    - {name: main, replicas: 0, resources: {cpu: 1, memory: 1Gi}, command: [x], env: {"no good": y}}
                """);
        Result bad = cli("submit", "-f", file("bad.yaml"));
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("metadata.name:").contains("spec.nodeGroups[0].replicas:").contains("spec.nodeGroups[0].env.no good:")
                .doesNotContain("Exception").doesNotContain("\tat ");
        assertThat(cli("get", "jobs", "--workspace", "demo").out()).doesNotContain("Bad");
        write("half.yaml", """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: never-made}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: half, workspace: never-made}
                spec:
                  nodeGroups:
                    - {name: main, shape: no-such-shape, command: ["true"]}
                """);
        Result half = cli("submit", "-f", file("half.yaml"));
        assertThat(half.exit()).isEqualTo(2);
        assertThat(half.err()).contains("documents[1].spec.nodeGroups[0].shape: unknown shape 'no-such-shape'");
        assertThat(cli("get", "workspaces").out()).doesNotContain("never-made");

        assertThat(cli("get", "frobs").exit()).isEqualTo(2);
        assertThat(cli("submit").exit()).isEqualTo(2);
        assertThat(cli("cancel", "no-such-run-1").exit()).isEqualTo(2);

        Result unreachable = bare("get", "runs", "--server", "http://127.0.0.1:1");
        assertThat(unreachable.exit()).isEqualTo(3);
        assertThat(unreachable.err()).contains("cannot reach");
    }

    // From EndToEndIT.
    @Test
    void cancelLeavesNoProcessBehind() throws Exception {
        String marker = "cli-cancel-" + System.nanoTime();
        write("sleeper.yaml", job("sleeper", "demo", "sleep 600 & sleep 600 & echo " + marker + "; wait"));
        String id = cli("submit", "-f", file("sleeper.yaml")).lastLine();
        await(id, r -> r.get("state").asString().equals("RUNNING"));
        assertThat(processesWith(marker)).isNotEmpty();

        Result cancel = cli("cancel", id, "--wait");
        assertThat(cancel.exit()).as(cancel.err()).isZero();
        assertThat(cancel.out()).contains("CANCELLED");
        assertThat(processesWith(marker)).isEmpty();
        assertThat(cli("cancel", id).out()).contains("already finished");
    }

    // From EndToEndIT.
    @Test
    void tokensScopeWhatAUserSees() throws Exception {
        write("teams.yaml", """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-x}
                spec: {members: [xavier]}
                ---
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-y}
                spec: {members: [yvonne]}
                """);
        assertThat(cli("apply", "-f", file("teams.yaml")).exit()).isZero();
        String xavier = cli("token", "create", "--user", "xavier").lastLine();
        assertThat(xavier).startsWith("ss_");
        write("x.yaml", job("xjob", "team-x", "true"));
        write("y.yaml", job("yjob", "team-y", "true"));
        String yRun = cli("submit", "-f", file("y.yaml")).lastLine();
        Result xSubmit = cli("submit", "-f", file("x.yaml"), "--token", xavier);
        assertThat(xSubmit.exit()).as(xSubmit.err()).isZero();

        Result xRuns = cli("get", "runs", "-o", "json", "--token", xavier);
        assertThat(xRuns.out()).contains("team-x").doesNotContain("team-y");
        Result stolen = cli("get", "run", yRun, "--token", xavier);
        assertThat(stolen.exit()).isEqualTo(2);
        assertThat(stolen.err()).contains("not found");
        Result intoY = cli("submit", "-f", file("y.yaml"), "--token", xavier);
        assertThat(intoY.exit()).isEqualTo(2);
        assertThat(cli("whoami", "--token", xavier).out()).contains("xavier").contains("team-x");
    }

    @Test
    void getQuotasShowsLiveUseAndGetPendingTheQueueInOrder() throws Exception {
        write("ledger.yaml", """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: ledger}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: train, workspace: ledger}
                spec: {min: {cpu: 2, memory: 2Gi, gpu: 2}}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: holds, workspace: ledger}
                spec:
                  quota: train
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi, gpu: 2}, command: ["sleep", "300"]}
                """);
        assertThat(cli("apply", "-f", file("ledger.yaml")).exit()).isZero();
        String holding = cli("run", "ledger/holds").lastLine();
        await(holding, r -> r.get("state").asString().equals("RUNNING"));
        String waiting = cli("run", "ledger/holds").lastLine();

        Result quotas = cli("get", "quotas", "--workspace", "ledger");
        assertThat(quotas.exit()).as(quotas.err()).isZero();
        assertThat(quotas.out()).contains("USED", "BORROWED", "LENT", "ADMITTED", "PENDING");
        assertThat(quotas.out().lines().filter(l -> l.startsWith("ledger")).findFirst().orElseThrow())
                .contains("gpu=2 cpu=1 memory=1Gi").containsPattern("\\s1\\s+1\\s*$");
        Result pending = cli("get", "pending", "ledger/train");
        assertThat(pending.exit()).as(pending.err()).isZero();
        assertThat(pending.out()).contains(waiting).doesNotContain(holding);
        assertThat(cli("get", "pending").err()).contains("name the quota");
        assertThat(cli("get", "pools").out()).contains("tree:ledger/train");

        // What the holding run used so far, by quota: a table with a total, CSV for spreadsheets, JSON as the API's.
        Result usage = cli("usage", "--by", "quota", "--workspace", "ledger");
        assertThat(usage.exit()).as(usage.err()).isZero();
        assertThat(usage.out()).contains("WORKSPACE", "QUOTA", "GPU-H IN QUOTA", "GPU-H BORROWED", "GPU-H LENT", "QUEUED-H");
        assertThat(usage.out().lines().filter(l -> l.startsWith("ledger")).findFirst().orElseThrow()).contains("train");
        assertThat(usage.out().lines().reduce((a, b) -> b).orElseThrow()).startsWith("TOTAL").as("the total is no quota's").doesNotContain("(none)");
        Result csv = cli("usage", "--by", "user", "-o", "csv", "--since", "1h");
        assertThat(csv.exit()).as(csv.err()).isZero();
        assertThat(csv.out().lines().findFirst().orElseThrow()).startsWith("user,gpu_hours_in_quota,gpu_hours_borrowed,gpu_hours_lent");
        int columns = csv.out().lines().findFirst().orElseThrow().split(",", -1).length;
        assertThat(columns).isEqualTo(12);
        assertThat(csv.out().lines().skip(1).map(l -> l.split(",", -1).length)).isNotEmpty().allMatch(n -> n == columns);
        Result json = cli("usage", "-o", "json", "--by", "job");
        assertThat(Json.mapper().readTree(json.out()).at("/lines/0/gpuHours/inQuota").isNumber()).as(json.out()).isTrue();
        Result bad = cli("usage", "--since", "yesterday");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("since");

        assertThat(cli("cancel", holding, "--wait").exit()).isZero();
        assertThat(cli("cancel", waiting, "--wait").exit()).isZero();
    }

    // From RunLifecycleIT.
    @Test
    void aQueuedRunIsCancelledAtOnce() throws Exception {
        // Five instances of 8 GPUs on four nodes of 8 could never start: refused, with the reason.
        write("too-big.yaml", """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: too-big, workspace: demo}
                spec:
                  nodeGroups:
                    - {name: main, replicas: 5, resources: {cpu: 1, memory: 1Gi, gpu: 8}, command: ["true"]}
                """);
        Result refused = cli("submit", "-f", file("too-big.yaml"));
        assertThat(refused.exit()).isEqualTo(2);
        assertThat(refused.err()).contains("spec.nodeGroups").contains("could never start").contains("more than all schedulable nodes have");
        // One its quota keeps waiting (Disabled, larger than the guarantee) is accepted, with a warning: quotas change.
        write("over-quota.yaml", """
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: tiny, workspace: demo}
                spec: {min: {gpu: 1}}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: over-quota, workspace: demo}
                spec:
                  quota: tiny
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi, gpu: 2}, command: ["true"]}
                """);
        Result submitted = cli("submit", "-f", file("over-quota.yaml"));
        assertThat(submitted.exit()).as(submitted.err()).isZero();
        assertThat(submitted.err()).contains("Warning: this run cannot start even with the whole cluster idle").contains("more than its quota guarantees");
        String id = submitted.lastLine();
        assertThat(run(id).get("state").asString()).isEqualTo("QUEUED");
        Result cancel = cli("cancel", id, "--wait");
        assertThat(cancel.exit()).as(cancel.err()).isZero();
        assertThat(cancel.out()).contains("CANCELLED");
        Result again = cli("cancel", id);
        assertThat(again.exit()).isZero();
        assertThat(again.out()).contains("already finished (CANCELLED); nothing to cancel");
    }

    @Test
    void labelsGoFromJobsAndSubmitToRunsAndSelectorsListAndCancelThem() throws Exception {
        // Runs its quota keeps queued (more than it guarantees): nothing starts, every run waits to be selected.
        String labelled = """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: demo, labels: {team: %s}}
                spec:
                  quota: labels-tiny
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi, gpu: 2}, command: ["true"]}
                """;
        write("labelled.yaml", """
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: labels-tiny, workspace: demo}
                spec: {min: {gpu: 1}}
                ---
                """ + labelled.formatted("labelled-a", "nlp"));
        write("labelled-b.yaml", labelled.formatted("labelled-b", "vision"));
        Result first = cli("submit", "-f", file("labelled.yaml"), "--label", "sweep=s1", "--label", "team=nlp");
        assertThat(first.exit()).as(first.err()).isZero();
        String one = first.lastLine();
        Result second = cli("run", "demo/labelled-a", "--label", "sweep=s2");
        assertThat(second.exit()).as(second.err()).isZero();
        String two = second.lastLine();
        Result third = cli("submit", "-f", file("labelled-b.yaml"));
        assertThat(third.exit()).as(third.err()).isZero();
        String three = third.lastLine();

        assertThat(cli("get", "runs", "-l", "team=nlp", "-o", "name").out().lines().toList()).containsExactly("run/" + two, "run/" + one);
        assertThat(cli("get", "runs", "--selector", "team,sweep notin (s1)", "-o", "name").out().lines().toList())
                .as("as in Kubernetes, notin also picks runs without the key").containsExactly("run/" + three, "run/" + two);
        Result shown = cli("get", "runs", "-l", "sweep in (s1)", "--show-labels");
        assertThat(shown.out().lines().findFirst().orElseThrow()).endsWith("LABELS");
        assertThat(shown.out()).contains(one).contains("sweep=s1,team=nlp");
        assertThat(cli("get", "runs", "-l", "team=vision", "-o", "wide").out()).contains("LABELS").contains("team=vision");
        assertThat(cli("get", "run", two, "-o", "yaml").out()).contains("labels:\n  sweep: s2\n  team: nlp\n");
        assertThat(cli("get", "run", two).out()).contains("Labels:     sweep=s2,team=nlp");
        assertThat(cli("get", "jobs", "-l", "team=vision", "-o", "name").out()).isEqualTo("job/demo/labelled-b\n");
        assertThat(cli("get", "jobs", "-l", "team", "-o", "wide").out()).contains("LABELS").contains("team=nlp").contains("team=vision");

        Result badSelector = cli("get", "runs", "-l", "team in nlp");
        assertThat(badSelector.exit()).isEqualTo(CliException.REJECTED);
        assertThat(badSelector.err()).contains("labelSelector").contains("'(' after 'in' expected");
        Result badLabel = cli("run", "demo/labelled-a", "--label", "-x=1");
        assertThat(badLabel.exit()).isEqualTo(CliException.REJECTED);
        assertThat(badLabel.err()).contains("labels.-x");
        assertThat(cli("run", "demo/labelled-a", "--label", "novalue").err()).contains("must be KEY=VALUE");

        Result neither = cli("cancel");
        assertThat(neither.exit()).isEqualTo(CliException.REJECTED);
        assertThat(neither.err()).contains("-l SELECTOR");
        assertThat(cli("cancel", one, "-l", "team=nlp").exit()).isEqualTo(CliException.REJECTED);
        for (String blank : List.of("", " ")) { // e.g. -l "$SELECTOR" unset: an empty selector selects every run
            Result everything = cli("cancel", "-l", blank);
            assertThat(everything.exit()).as(everything.out()).isEqualTo(CliException.REJECTED);
            assertThat(everything.err()).contains("-l SELECTOR");
        }
        assertThat(run(three).get("state").asString()).isEqualTo("QUEUED");
        Result cancelled = cli("cancel", "-l", "team=nlp", "--wait");
        assertThat(cancelled.exit()).as(cancelled.err()).isZero();
        for (String id : List.of(one, two)) {
            assertThat(cancelled.out().lines().filter(l -> l.contains(id) && !l.contains(" is CANCELLED"))).as("told once: " + id).hasSize(1);
            assertThat(run(id).get("state").asString()).isEqualTo("CANCELLED");
        }
        assertThat(cancelled.out()).doesNotContain(three);
        assertThat(run(three).get("state").asString()).isEqualTo("QUEUED");
        assertThat(cli("cancel", "-l", "team=nlp").out()).contains("no run that has not ended matches team=nlp");
        assertThat(cli("cancel", "-l", "team=vision", "--workspace", "demo", "--wait").exit()).isZero();
        assertThat(run(three).get("state").asString()).isEqualTo("CANCELLED");
    }

    // From RunLifecycleIT.
    @Test
    void aJobRunsWithOverridesAndAnIdempotencyKeyGivesOneRun() {
        Result run = cli("run", "demo/hello", "--set", "nodeGroups.main.env.GREETING=bonjour", "--set", "nodeGroups.main.replicas=3", "--wait");
        assertThat(run.exit()).as(run.err()).isZero();
        String id = run.lastLine();
        assertThat(cli("logs", id).out()).contains("bonjour from rank 2 of 3");
        Result described = cli("get", "run", id);
        assertThat(described.out()).contains("Overrides:  nodeGroups.main.env.GREETING=bonjour nodeGroups.main.replicas=3");
        assertThat(cli("get", "job", "hello", "--workspace", "demo", "-o", "yaml").out()).contains("GREETING: hello").doesNotContain("bonjour");

        Result first = cli("run", "hello", "--workspace", "demo", "--idempotency-key", "nightly-2026-11-29");
        Result retry = cli("run", "hello", "--workspace", "demo", "--idempotency-key", "nightly-2026-11-29");
        assertThat(first.exit()).as(first.err()).isZero();
        assertThat(retry.lastLine()).isEqualTo(first.lastLine());

        Result bad = cli("run", "demo/hello", "--set", "nodeGroups.nope.replicas=2");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("overrides.nodeGroups.nope.replicas").contains("no node group 'nope'");

        Result recent = cli("get", "runs", "--job", "hello", "--since", "10m");
        assertThat(recent.out()).contains(id).contains(first.lastLine());
        assertThat(cli("get", "runs", "--job", "hello", "--until", "10m").out()).doesNotContain(id);
    }

    // From DistributedTrainingIT.
    @Test
    void storageThatWouldLeaveTheWorkspaceIsRefused() throws Exception {
        write("escape.yaml", """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: escape, workspace: demo}
                spec:
                  storage:
                    - {name: a, scope: workspace, subPath: ../other-team}
                    - {name: b, scope: job, subPath: /etc}
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: ["true"]}
                """);
        Result refused = cli("apply", "-f", file("escape.yaml"));
        assertThat(refused.exit()).isEqualTo(2);
        assertThat(refused.err()).contains("spec.storage[0].subPath").contains("spec.storage[1].subPath");
    }

    @Test
    void getRunWatchPrintsEachChangeOnceUntilTheRunEnds() throws Exception {
        write("short.yaml", job("short", "demo", "sleep 1"));
        String id = cli("submit", "-f", file("short.yaml")).lastLine();
        Result watched = cli("get", "run", id, "--watch", "--watch-interval", "100ms");
        assertThat(watched.exit()).as(watched.err()).isZero();
        List<String> lines = watched.out().lines().toList();
        assertThat(lines).isNotEmpty().doesNotHaveDuplicates().allMatch(l -> l.startsWith("run " + id + ": "));
        assertThat(lines.get(lines.size() - 1)).contains("SUCCEEDED");

        Result json = cli("get", "run", id, "--watch", "-o", "json");
        assertThat(json.exit()).isZero();
        assertThat(Json.mapper().readTree(json.out()).get("state").asString()).isEqualTo("SUCCEEDED");

        assertThat(cli("get", "jobs", "--watch").err()).contains("--watch works with get runs and get run ID");
        assertThat(cli("get", "runs", "--watch", "--watch-interval", "10ms").err()).contains("--watch-interval").contains("too short");
    }

    @Test
    void theShortWorkspaceOptionStillWorksWithAWarning() {
        Result old = cli("get", "job", "hello", "-w", "demo");
        assertThat(old.exit()).as(old.err()).isZero();
        assertThat(old.out()).contains("hello");
        assertThat(old.err()).contains("-w is deprecated").contains("--workspace");
        Result current = cli("get", "job", "hello", "--workspace", "demo");
        assertThat(current.err()).doesNotContain("deprecated");
        Result both = cli("get", "jobs", "--workspace", "demo", "-w", "other");
        assertThat(both.exit()).isEqualTo(CliException.REJECTED);
        assertThat(both.err()).contains("disagree");
    }

    @Test
    void getPrintsNamesJsonPathWideAndTablesWithoutHeaders() {
        Result ran = cli("run", "demo/hello", "--wait");
        assertThat(ran.exit()).as(ran.err()).isZero();
        String id = ran.lastLine();

        Result names = cli("get", "runs", "--job", "hello", "-o", "name");
        assertThat(names.exit()).as(names.err()).isZero();
        assertThat(names.out().lines().toList()).contains("run/" + id).allMatch(l -> l.startsWith("run/"));
        assertThat(cli("get", "jobs", "--workspace", "demo", "-o", "name").out().lines().toList()).contains("job/demo/hello");
        assertThat(cli("get", "job", "demo/hello", "-o", "name").out()).isEqualTo("job/demo/hello\n");
        assertThat(cli("get", "workspaces", "-o", "name").out()).contains("workspace/demo\n");

        assertThat(cli("get", "run", id, "-o", "jsonpath={.state}").out()).isEqualTo("SUCCEEDED\n");
        assertThat(cli("get", "job", "demo/hello", "-o", "jsonpath={.metadata.name}").out()).isEqualTo("hello\n");
        assertThat(cli("get", "runs", "--job", "hello", "-o", "jsonpath={.items[*].id}").out().strip().split(" ")).contains(id);
        Result unsupported = cli("get", "runs", "-o", "jsonpath={range .items[*]}{.id}{end}");
        assertThat(unsupported.exit()).isEqualTo(CliException.REJECTED);
        assertThat(unsupported.err()).contains("'range' is not supported");

        Result plain = cli("get", "runs", "--job", "hello");
        Result bare = cli("get", "runs", "--job", "hello", "--no-headers");
        assertThat(plain.out()).startsWith("ID ");
        assertThat(bare.out().lines().toList()).hasSize((int) plain.out().lines().count() - 1).noneMatch(l -> l.startsWith("ID "));
        Result wide = cli("get", "runs", "--job", "hello", "-o", "wide");
        assertThat(wide.out().lines().findFirst().orElseThrow()).contains("REASON", "PRIORITY", "ATTEMPT", "NODES", "STEP", "QUOTA");
        assertThat(wide.out()).contains("node-1");
        assertThat(cli("get", "runs", "-o", "xml").err()).contains("use table, wide, name, json, yaml or jsonpath=EXPR");
    }

    @Test
    void workspaceSlashNameWorksEverywhereAndDeleteWorksLikeKubectl() throws Exception {
        write("scoped.yaml", """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: scoped}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: q, workspace: scoped}
                spec: {min: {cpu: 1, memory: 1Gi}}
                ---
                apiVersion: slipstream/v1
                kind: Secret
                metadata: {name: s, workspace: scoped}
                spec: {data: {k: v}}
                """ + "---\n" + job("j", "scoped", "true") + "---\n" + job("k", "scoped", "true"));
        assertThat(cli("apply", "-f", file("scoped.yaml")).exit()).isZero();
        for (String type : List.of("job", "quota", "secret")) {
            String name = type.substring(0, 1);
            for (List<String> form : List.of(List.of("scoped/" + name), List.of(name, "--workspace", "scoped"),
                    List.of("scoped/" + name, "--workspace", "scoped"))) {
                List<String> args = new ArrayList<>(List.of("get", type));
                args.addAll(form);
                Result got = cli(args.toArray(String[]::new));
                assertThat(got.exit()).as("%s: %s", args, got.err()).isZero();
            }
        }
        assertThat(cli("get", "pending", "scoped/q").exit()).isZero();
        Result disagree = cli("get", "job", "scoped/j", "--workspace", "demo");
        assertThat(disagree.exit()).isEqualTo(CliException.REJECTED);
        assertThat(disagree.err()).contains("job scoped/j names workspace scoped but --workspace is demo");
        Result ran = cli("run", "scoped/j", "--workspace", "scoped", "--wait");
        assertThat(ran.exit()).as(ran.err()).isZero();

        Result blocked = cli("delete", "workspace", "scoped");
        assertThat(blocked.exit()).isEqualTo(CliException.REJECTED);
        assertThat(blocked.err()).contains("error: workspace scoped: ").contains("delete them first");
        Result two = cli("delete", "job", "scoped/j", "scoped/nope");
        assertThat(two.exit()).isEqualTo(CliException.REJECTED);
        assertThat(two.out()).isEqualTo("deleted job scoped/j\n");
        assertThat(two.err()).contains("error: job scoped/nope: ");
        Result named = cli("delete", "job/scoped/k");
        assertThat(named.exit()).as(named.err()).isZero();
        assertThat(named.out()).isEqualTo("deleted job scoped/k\n");

        Result rest = cli("delete", "-f", file("scoped.yaml"));
        assertThat(rest.out().lines().toList()).containsExactly("deleted secret scoped/s", "deleted quota scoped/q", "deleted workspace scoped");
        assertThat(rest.err()).contains("error: job scoped/k: ").contains("error: job scoped/j: ");
        assertThat(cli("get", "workspaces").out()).doesNotContain("scoped");
        assertThat(cli("delete").err()).contains("name what to delete");
        assertThat(cli("delete", "-f", file("scoped.yaml"), "job", "scoped/j").err()).contains("not both");
    }

    @Test
    void applyTakesDirectoriesAndSeveralFilesAndADryRunWritesNothing() throws Exception {
        Path dir = Files.createDirectories(work.resolve("applied"));
        Files.writeString(dir.resolve("1-workspace.yaml"), """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: dry}
                """);
        Files.writeString(dir.resolve("2-jobs.yml"), job("one", "dry", "true") + "---\n" + job("two", "dry", "true"));
        Files.writeString(dir.resolve("README.md"), "not a document");
        write("three.json", Json.mapper().writeValueAsString(Json.yaml().readTree(job("three", "dry", "true"))));

        Result dry = cli("apply", "-f", dir.toString(), "-f", file("three.json"), "--dry-run=server");
        assertThat(dry.exit()).as(dry.err()).isZero();
        assertThat(dry.out()).contains("dry/one", "dry/two", "dry/three").contains("created (dry run)");
        assertThat(dry.err()).contains("wrote nothing");
        assertThat(cli("get", "workspaces").out()).doesNotContain("dry");

        Result applied = cli("apply", "-f", dir.toString(), "-f", file("three.json"));
        assertThat(applied.exit()).as(applied.err()).isZero();
        assertThat(applied.out().lines().filter(l -> l.contains("created")).count()).isEqualTo(4);
        assertThat(cli("get", "jobs", "--workspace", "dry", "-o", "name").out().lines().toList())
                .containsExactlyInAnyOrder("job/dry/one", "job/dry/two", "job/dry/three");

        Files.writeString(dir.resolve("2-jobs.yml"), job("one", "dry", "false") + "---\n" + job("two", "dry", "true"));
        Result again = cli("apply", "-f", dir.toString(), "--dry-run=server");
        assertThat(again.out()).containsPattern("Job\\s+dry/one\\s+updated \\(dry run\\)\\s+2")
                .containsPattern("Job\\s+dry/two\\s+unchanged \\(dry run\\)\\s+1");
        assertThat(cli("get", "job", "dry/one", "-o", "jsonpath={.metadata.version}").out()).isEqualTo("1\n");

        write("bad-quota.yaml", job("four", "dry", "true").replace("spec:", "spec:\n  quota: none-such"));
        Result bad = cli("apply", "-f", dir.toString(), "-f", file("bad-quota.yaml"), "--dry-run=server");
        assertThat(bad.exit()).isEqualTo(CliException.REJECTED);
        assertThat(bad.err()).contains(file("bad-quota.yaml") + ": spec.quota: workspace 'dry' has no quota 'none-such'");
        assertThat(cli("apply", "-f", file("three.json"), "--dry-run=client").err()).contains("use --dry-run=server");
        assertThat(cli("apply", "-f", work.resolve("nothing-here").toString()).err()).contains("no such file");
        for (String name : List.of("one", "two", "three")) {
            cli("delete", "job", "dry/" + name);
        }
        assertThat(cli("delete", "workspace", "dry").exit()).isZero();
    }

    @Test
    void cancelWaitPrintsTheFinalStateOnce() throws Exception {
        write("long.yaml", job("long", "demo", "sleep 600"));
        String id = cli("submit", "-f", file("long.yaml")).lastLine();
        await(id, r -> r.get("state").asString().equals("RUNNING"));
        Result cancel = cli("cancel", id, "--wait");
        assertThat(cancel.exit()).as(cancel.err()).isZero();
        assertThat((cancel.out() + cancel.err()).lines().filter(l -> l.contains("CANCELLED"))).as(cancel.out() + cancel.err()).hasSize(1);
        assertThat(cancel.out()).contains("CANCELLED");
    }

    @Test
    void anIdempotentReplaySaysItIsTheExistingRun() {
        String key = "replay-" + System.nanoTime();
        Result first = cli("run", "demo/hello", "--idempotency-key", key);
        Result again = cli("run", "demo/hello", "--idempotency-key", key);
        assertThat(again.lastLine()).isEqualTo(first.lastLine());
        assertThat(first.err()).contains("started run " + first.lastLine());
        assertThat(again.err()).doesNotContain("started run")
                .contains("run " + first.lastLine() + " already exists for idempotency key " + key + ": not started again");
    }

    @Test
    void nodesAreCordonedDrainedAndUncordonedAndGetNodesSaysWhoAndWhy() {
        JsonNode nodes = Json.mapper().readTree(cli("get", "nodes", "-o", "json").out()).get("items");
        String node = null;
        for (JsonNode candidate : nodes) {
            if (candidate.get("instances").asInt() == 0 && candidate.get("state").asString().equals("Ready")) {
                node = candidate.get("name").asString(); // an idle node: draining it moves no other test's run
            }
        }
        assertThat(node).as("an idle node among %s", nodes).isNotNull();
        nodeCommands(node);
    }

    private static void nodeCommands(String node) {
        try {
            Result cordon = cli("node", "cordon", node, "--reason", "kernel upgrade");
            assertThat(cordon.exit()).as(cordon.err()).isZero();
            assertThat(cordon.out()).startsWith("node " + node + " is Cordoned (by admin: kernel upgrade)");
            Result table = cli("get", "nodes");
            assertThat(table.out().lines().filter(l -> l.startsWith(node + " ")).findFirst().orElseThrow())
                    .contains("Cordoned").endsWith("by admin: kernel upgrade");

            Result drain = cli("node", "drain", node, "--wait", "--timeout", "1m");
            assertThat(drain.exit()).as(drain.err()).isZero();
            assertThat(drain.out()).as("nothing ran there: drained at once; the drain's reason replaces the cordon's")
                    .isEqualTo("node " + node + " is Cordoned (by admin)\n");
            assertThat(cli("get", "node", node, "-o", "jsonpath={.state}").out().strip()).isEqualTo("Cordoned");

            Result up = cli("node", "up", node);
            assertThat(up.out()).contains("is Cordoned").contains("it is still cordoned: './slipstream node uncordon " + node + "' lifts that");
            Result uncordon = cli("node", "uncordon", node);
            assertThat(uncordon.exit()).isZero();
            assertThat(uncordon.out()).isEqualTo("node " + node + " is Ready\n");
            assertThat(cli("node", "uncordon", node).out()).as("idempotent").isEqualTo("node " + node + " is Ready\n");
        } finally {
            cli("node", "uncordon", node);
        }

        Result unknown = cli("node", "drain", "no-such-node");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).contains("node no-such-node not found");
        Result timeoutAlone = cli("node", "drain", node, "--timeout", "1m");
        assertThat(timeoutAlone.exit()).isEqualTo(2);
        assertThat(timeoutAlone.err()).contains("--timeout needs --wait");
        assertThat(cli("get", "node", node, "-o", "jsonpath={.state}").out().strip()).as("refused before anything was sent").isEqualTo("Ready");
    }

    @Test
    void hintsSpellTheCommandAsTheDocsDo() {
        Result ran = cli("run", "demo/hello");
        assertThat(ran.err()).contains("follow it with: ./slipstream logs -f " + ran.lastLine());
    }
}
