package io.slipstream.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.codec.Json;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.server.support.TestServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * A member of one team submits jobs that attack the server that runs them (as root, with a uid per run) and the other
 * team's runs, through the real API and the local executor. Each attack must end refused or contained: the server's
 * files unchanged (checksums), the other team's runs scheduled and finished meanwhile, and the attacking run ended
 * with a reason.
 */
@Timeout(300)
class HostileTenantTest {
    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static String admin;
    private static String mallory;
    private static String bob;
    /** Files of the server's and of the machine's that no job may read or change. */
    private static final Map<Path, String> PROTECTED = new LinkedHashMap<>();

    @BeforeAll
    static void start() throws Exception {
        assumeTrue(Isolation.runningAsRoot(), "per-run uids need a server that runs as root");
        server = TestServer.start(dataDir);
        admin = server.adminToken();
        assertThat(server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: evil}
                spec: {members: [mallory]}
                ---
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: good}
                spec: {members: [bob]}
                """).status()).isEqualTo(200);
        mallory = server.tokenFor("mallory");
        bob = server.tokenFor("bob");
        Path canary = Files.writeString(dataDir.resolve("canary"), "the server's own file\n");
        Files.setPosixFilePermissions(canary, PosixFilePermissions.fromString("rw-------"));
        for (Path file : List.of(server.server().adminTokenFile(), canary, Path.of("/etc/passwd"), Path.of("/etc/shadow"))) {
            if (Files.isRegularFile(file)) {
                PROTECTED.put(file, checksum(file));
            }
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** After every attack: nothing protected changed, and another team's run still gets scheduled and finishes. */
    @AfterEach
    void theClusterIsUnharmed() throws Exception {
        for (Map.Entry<Path, String> file : PROTECTED.entrySet()) {
            assertThat(checksum(file.getKey())).as(file.getKey() + " is unchanged").isEqualTo(file.getValue());
        }
        String run = submit(bob, "good", "after-attack", "echo fine");
        assertThat(server.awaitState(bob, run, "SUCCEEDED").get("state").asString()).isEqualTo("SUCCEEDED");
        assertThat(server.get("/readyz", null).status()).isEqualTo(200);
    }

    @Test
    void aLogLinkedToTheAdminTokenShowsNothingOfIt() throws Exception {
        String token = server.server().adminTokenFile().toString();
        String run = submit(mallory, "evil", "read-token", "cd ..; mv stdout.log x || echo cannot-move >&2; ln -s " + token
                + " stdout.log || echo cannot-link >&2; ln -sfT /etc/shadow stderr.log || echo cannot-link-stderr >&2; echo attacked; exec sleep 600");
        awaitLog(mallory, run, "attacked");
        String logs = server.get("/api/v1/runs/" + run + "/logs", mallory).text();
        assertThat(logs).contains("cannot-move", "cannot-link", "cannot-link-stderr").doesNotContain(Files.readString(Path.of(token)).trim());
        cancelAndAwait(run);
    }

    @Test
    void linksAtTheStopMarkerTheNoticeAndReadinessChangeNothing() throws Exception {
        String script = "cd ..; for f in terminate_requested preemption_notice.json preemption_notice.json.tmp ready ready.tmp probe.json exit_code; do "
                + "ln -sfT " + dataDir.resolve("canary") + " $f 2>/dev/null && echo ALLOWED $f; done; echo attacked; exec sleep 600";
        String run = server.post("/api/v1/runs", mallory, jobRequest("evil", "links", script,
                ", \"startupProbe\": {\"command\": [\"true\"], \"periodSeconds\": 1}", ", \"maxRuntime\": \"8s\"")).json().get("id").asString();
        awaitLog(mallory, run, "attacked");
        // The server writes the notice and the stop marker when the run's time is up.
        JsonNode ended = server.awaitState(mallory, run, "TIMED_OUT");
        assertThat(ended.get("reason").asString()).isNotBlank();
        assertThat(server.get("/api/v1/runs/" + run + "/logs", mallory).text()).doesNotContain("ALLOWED");
    }

    @Test
    void aFifoWhereTheServerReadsFreezesNothing() throws Exception {
        // The exit code is the server's to write; the progress file is the workload's (and read while hang detection runs).
        String script = "cd ..; rm -f exit_code 2>/dev/null; mkfifo exit_code 2>/dev/null && echo ALLOWED exit_code; "
                + "mkfifo \"$SLIPSTREAM_PROGRESS_FILE\" && mkfifo \"$SLIPSTREAM_PREEMPTION_ACK_FILE\" && echo fifos; exec sleep 600";
        String run = server.post("/api/v1/runs", mallory, jobRequest("evil", "fifo", script, "",
                ", \"faultTolerance\": {\"hangTimeout\": \"10m\"}")).json().get("id").asString();
        awaitLog(mallory, run, "fifos");
        // Meanwhile (the FIFOs in place, read every few seconds) another team's work goes on.
        String victim = submit(bob, "good", "meanwhile", "sleep 3; echo done");
        server.awaitState(bob, victim, "SUCCEEDED");
        assertThat(server.get("/readyz", null).status()).isEqualTo(200);
        JsonNode ended = cancelAndAwait(run);
        assertThat(ended.get("reason").asString()).isNotBlank();
        assertThat(server.get("/api/v1/runs/" + run + "/logs", mallory).text()).doesNotContain("ALLOWED");
    }

    @Test
    void aJobsEnvironmentNeverReachesAProcessOfTheServers() throws Exception {
        // First a run leaves programs named as those that start instances in a world-writable place ...
        Path evil = Path.of("/tmp/slipstream-evil-" + System.nanoTime());
        String marker = evil + "/ran-as-root";
        StringBuilder plant = new StringBuilder("mkdir -p " + evil + " && chmod 777 " + evil + "; ");
        for (String tool : List.of("sh", "setsid", "setpriv", "timeout")) {
            plant.append("printf '#!/bin/sh\\n[ \"$(id -u)\" = 0 ] && id >> ").append(marker).append("\\nexec /usr/bin/").append(tool)
                    .append(" \"$@\"\\n' > ").append(evil).append('/').append(tool).append(" && chmod 755 ").append(evil).append('/').append(tool).append("; ");
        }
        String planter = submit(mallory, "evil", "planter", plant + "echo planted");
        server.awaitState(mallory, planter, "SUCCEEDED");
        // ... then a job puts them first on its PATH and asks the dynamic loader for a library of its own.
        String run = server.post("/api/v1/runs", mallory, jobRequest("evil", "env-attack", "echo \"path=$PATH\"; echo attacked",
                ", \"env\": {\"PATH\": \"" + evil + ":/usr/bin:/bin\", \"LD_PRELOAD\": \"" + evil + "/hook.so\"}"
                        + ", \"startupProbe\": {\"command\": [\"true\"], \"periodSeconds\": 1}", "")).json().get("id").asString();
        try {
            server.awaitState(mallory, run, "SUCCEEDED");
            assertThat(server.get("/api/v1/runs/" + run + "/logs", mallory).text()).contains("path=" + evil);
            assertThat(Files.exists(Path.of(marker))).as("no program of the job's ran as root").isFalse();
        } finally {
            try (var files = Files.walk(evil)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    @Test
    void aDaemonThatLeftItsInstanceIsGoneWhenTheRunIsCancelled() throws Exception {
        String marker = "daemon-" + System.nanoTime();
        // Inside its PID namespace a process's own pid means nothing to the host: it is found by its command line.
        String script = "setsid sh -c 'sleep 600; : " + marker + "' </dev/null >/dev/null 2>&1 & sleep 0.5; echo started; exec sleep 600";
        String run = submit(mallory, "evil", "daemon", script);
        awaitLog(mallory, run, "started");
        assertThat(processesWith(marker)).isNotEmpty().allMatch(HostileTenantTest::isRunning);
        cancelAndAwait(run);
        assertThat(processesWith(marker).stream().filter(HostileTenantTest::isRunning)).as("killed before CANCELLED was reported").isEmpty();
    }

    private static List<Long> processesWith(String marker) {
        return ProcessHandle.allProcesses().filter(p -> p.info().commandLine().orElse("").contains(marker)).map(ProcessHandle::pid).toList();
    }

    @Test
    void aRunCanNeitherSignalNorReadAnotherTeamsRun() throws Exception {
        String marker = "victim-" + System.nanoTime();
        String victim = submit(bob, "good", "victim", "echo secret-of-bob > secret.txt; echo ready; sleep 600; : " + marker);
        awaitLog(bob, victim, "ready");
        Path victimDir = dataDir.resolve("instances").resolve(victim).resolve("1/0");
        String script = "for p in /proc/[0-9]*; do [ ${p#/proc/} = $$ ] && continue; if grep -q " + marker + " $p/cmdline 2>/dev/null; then kill -9 ${p#/proc/} 2>/dev/null "
                + "&& echo ALLOWED kill || echo cannot-kill; fi; done; cat " + victimDir.resolve("work/secret.txt") + " 2>/dev/null || echo cannot-read; "
                + "ls " + victimDir.resolve("work") + " 2>/dev/null || echo cannot-list; cat " + victimDir.resolve("stdout.log")
                + " 2>/dev/null || echo cannot-read-log; cat " + victimDir.resolve("metadata.json") + " 2>/dev/null || echo cannot-read-metadata; "
                + "ls " + victimDir.getParent() + " 2>/dev/null || echo cannot-list-run; echo attacked";
        String run = submit(mallory, "evil", "intruder", script);
        server.awaitState(mallory, run, "SUCCEEDED");
        String out = server.get("/api/v1/runs/" + run + "/logs", mallory).text();
        assertThat(out).contains("cannot-kill", "cannot-read", "cannot-list", "cannot-read-log", "cannot-read-metadata", "cannot-list-run", "attacked")
                .doesNotContain("ALLOWED", "secret-of-bob");
        assertThat(server.get("/api/v1/runs/" + victim, bob).json().get("state").asString()).isEqualTo("RUNNING");
        assertThat(server.post("/api/v1/runs/" + victim + "/cancel", bob, "{}").status()).isEqualTo(200);
        server.awaitState(bob, victim, "CANCELLED");
    }

    @Test
    void twoServersOnOneMachineNeverShareUids(@TempDir Path otherData) throws Exception {
        Files.setPosixFilePermissions(otherData, PosixFilePermissions.fromString("rwx--x--x"));
        String marker = "first-" + System.nanoTime();
        String first = submit(bob, "good", "first-server", "id -u; echo up; sleep 600; : " + marker);
        String firstUid = awaitLog(bob, first, "up").lines().filter(l -> l.matches(".*\\] \\d+$")).findFirst().orElseThrow().replaceAll(".*\\] ", "");
        try (TestServer second = TestServer.start(otherData)) {
            String otherAdmin = second.adminToken();
            second.post("/api/v1/apply", otherAdmin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: other}\n");
            String script = "id -u; for p in /proc/[0-9]*; do [ ${p#/proc/} = $$ ] && continue; if grep -q " + marker + " $p/cmdline 2>/dev/null; then kill -9 ${p#/proc/} 2>/dev/null "
                    + "&& echo ALLOWED kill || echo cannot-kill; fi; done; ls " + dataDir.resolve("instances").resolve(first).resolve("1/0/work")
                    + " 2>/dev/null || echo cannot-list";
            String run = second.post("/api/v1/runs", otherAdmin, jobRequest("other", "second-server", script, "", "")).json().get("id").asString();
            second.awaitState(otherAdmin, run, "SUCCEEDED");
            String out = second.get("/api/v1/runs/" + run + "/logs?prefix=false", otherAdmin).text();
            assertThat(out.lines().findFirst().orElseThrow()).as("another server's run has another uid").isNotEqualTo(firstUid);
            assertThat(out).contains("cannot-kill", "cannot-list").doesNotContain("ALLOWED");
        }
        assertThat(server.get("/api/v1/runs/" + first, bob).json().get("state").asString()).isEqualTo("RUNNING");
        server.post("/api/v1/runs/" + first + "/cancel", bob, "{}");
        server.awaitState(bob, first, "CANCELLED");
    }

    @Test
    void aServerRefusesAUidRangeAnotherServerHolds(@TempDir Path otherData) throws Exception {
        String range = Files.readString(dataDir.resolve("uid-range")).trim().split(" ")[0];
        long first = Long.parseLong(range);
        Throwable refused = org.assertj.core.api.Assertions.catchThrowable(() -> TestServer.start(otherData, config -> config.withExecutor(
                config.executor(io.slipstream.executor.local.LocalExecutorSettings.class).withUidRange(new io.slipstream.executor.local.uid.UidRangeClaims.Range((int) first + 10, 100)))));
        assertThat(refused).hasMessageContaining("overlaps").hasMessageContaining(dataDir.toString());
    }

    private static String submit(String token, String workspace, String name, String script) {
        TestServer.Response response = server.post("/api/v1/runs", token, jobRequest(workspace, name, script, "", ""));
        assertThat(response.status()).as(response.text()).isEqualTo(201);
        return response.json().get("id").asString();
    }

    private static String jobRequest(String workspace, String name, String script, String groupExtra, String specExtra) {
        return """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "%s"},
                 "spec": {"nodeGroups": [{"name": "main", "replicas": 1, "resources": {"cpu": 1, "memory": "1Gi"},
                  "command": ["sh", "-c", %s]%s}]%s}}}
                """.formatted(name, workspace, Json.mapper().writeValueAsString(script), groupExtra, specExtra);
    }

    private static String awaitLog(String token, String run, String text) {
        server.awaitRun(token, run, r -> server.get("/api/v1/runs/" + run + "/logs", token).text().contains(text));
        return server.get("/api/v1/runs/" + run + "/logs", token).text();
    }

    private static JsonNode cancelAndAwait(String run) {
        assertThat(server.post("/api/v1/runs/" + run + "/cancel", mallory, "{}").status()).isEqualTo(200);
        return server.awaitState(mallory, run, "CANCELLED");
    }

    /** Alive and not a zombie (a killed process stays one until init reaps it). */
    private static boolean isRunning(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            return state != 'Z' && state != 'X';
        } catch (java.io.IOException e) {
            return false;
        }
    }

    private static String checksum(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
