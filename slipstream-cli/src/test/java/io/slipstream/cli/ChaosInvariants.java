package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Quantities;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.JsonNode;

/**
 * What must hold after every chaos scenario, checked from outside (the API and {@code /proc}) as an operator would:
 * every acknowledged run exists; a final state never changes; no run has live processes of two attempts; no live
 * process belongs to a run that does not exist or has ended; no node holds more than it has; a quota's usage is the
 * sum of what its admitted runs hold ({@link #checkQuotaUsage}); and, once everything has ended, nothing is allocated
 * and nothing runs.
 */
final class ChaosInvariants {
    private final HttpClient http = HttpClient.newHttpClient();
    private final Set<String> acknowledged = ConcurrentHashMap.newKeySet();
    private final Map<String, String> finalStates = new ConcurrentHashMap<>();
    private volatile String server;
    private final String token;
    private final String workspace;

    /** @param workspace where the scenario's runs are: processes of other workspaces (other tests) are not looked at */
    ChaosInvariants(String server, String token, String workspace) {
        this.server = server;
        this.token = token;
        this.workspace = workspace;
    }

    /** Where the API is now (a restarted server listens on another port). */
    void at(String url) {
        this.server = url;
    }

    /** A run the server answered 201 (or 200, a replay) for: it must never be lost. */
    void acknowledged(String runId) {
        acknowledged.add(runId);
    }

    Set<String> acknowledgedRuns() {
        return Set.copyOf(acknowledged);
    }

    /** Every run, by id, as the API lists them now. */
    Map<String, JsonNode> runs() throws IOException, InterruptedException {
        Map<String, JsonNode> runs = new LinkedHashMap<>();
        String before = null;
        do {
            JsonNode page = get("/api/v1/runs?limit=1000" + (before == null ? "" : "&before=" + URLEncoder.encode(before, StandardCharsets.UTF_8)));
            page.get("items").forEach(run -> runs.put(run.get("id").asString(), run));
            before = page.hasNonNull("next") ? page.get("next").asString() : null;
        } while (before != null);
        return runs;
    }

    /** The invariants that hold at any moment. */
    void check(String scenario) throws IOException, InterruptedException {
        Set<String> expected = Set.copyOf(acknowledged); // before the listing: runs are acknowledged while it is read
        Map<String, JsonNode> runs = runs();
        for (String id : expected) {
            if (!runs.containsKey(id)) {
                String job = id.substring(0, id.lastIndexOf('-'));
                throw new AssertionError(scenario + ": acknowledged run " + id + " is gone; " + runs.size() + " runs listed; those of job " + job + ": "
                        + runs.values().stream().filter(r -> r.get("job").asString().equals(job)).map(r -> r.get("id").asString() + " " + r.get("createdAt").asString()).toList());
            }
        }
        runs.forEach((id, run) -> {
            String state = run.get("state").asString();
            String before = finalStates.get(id);
            if (before != null) {
                assertThat(state).as("%s: run %s was %s and stays so", scenario, id, before).isEqualTo(before);
            } else if (RunState.valueOf(state).isFinal()) {
                finalStates.put(id, state);
            }
        });
        Map<String, Set<String>> attempts = liveAttempts(workspace);
        attempts.forEach((run, live) -> {
            assertThat(live).as("%s: attempts of run %s with live processes", scenario, run).hasSizeLessThanOrEqualTo(1);
            assertThat(runs).as("%s: a live process belongs to run %s, which does not exist", scenario, run).containsKey(run);
        });
        for (JsonNode node : get("/api/v1/nodes").get("items")) {
            String name = node.get("name").asString();
            JsonNode allocated = node.path("allocated");
            JsonNode capacity = node.path("capacity");
            assertThat(Quantities.parseMilliCpu(allocated.get("cpu").asString())).as("%s: cpu allocated on %s", scenario, name)
                    .isLessThanOrEqualTo(Quantities.parseMilliCpu(capacity.get("cpu").asString()));
            assertThat(Quantities.parseBytes(allocated.get("memory").asString())).as("%s: memory allocated on %s", scenario, name)
                    .isLessThanOrEqualTo(Quantities.parseBytes(capacity.get("memory").asString()));
            assertThat(allocated.get("gpu").asInt()).as("%s: GPUs allocated on %s", scenario, name).isLessThanOrEqualTo(capacity.get("gpu").asInt());
        }
        // A run that has ended has no process left, once its last ones are gone (they die as its end is recorded).
        awaitNoProcessOfEndedRuns(scenario, runs);
    }

    /** Once every run has ended: all acknowledged are final, nothing is allocated and no process of a run lives. */
    void checkSettled(String scenario) throws IOException, InterruptedException {
        check(scenario);
        Map<String, JsonNode> runs = runs();
        for (String id : acknowledged) {
            assertThat(RunState.valueOf(runs.get(id).get("state").asString()).isFinal()).as("%s: %s has ended", scenario, id).isTrue();
        }
        for (JsonNode node : get("/api/v1/nodes").get("items")) {
            assertThat(node.get("instances").asInt()).as("%s: instances left on %s", scenario, node.get("name").asString()).isZero();
        }
        assertThat(liveAttempts(workspace)).as("%s: processes of runs left", scenario).isEmpty();
    }

    /**
     * Each quota of the workspace uses what its admitted runs hold, split as the runs say (InQuota / NotInQuota), never
     * more InQuota than its own guarantee, never more than its max; its pool lends the lesser of what its borrowers hold
     * and what its quotas leave unused. Checked against the run list read just before and just after the quotas, and
     * only when both agree (runs may start or end meanwhile; the check waits, with a deadline, for a moment they
     * hold still). The scenario's runs of a quota are those of the job named like it, each holding {@code eachMilliCpu}.
     */
    void checkQuotaUsage(String scenario, long eachMilliCpu) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        String problem;
        do {
            Map<String, String> before = holding();
            JsonNode quotas = get("/api/v1/quotas?workspace=" + workspace).get("items");
            Map<String, String> after = holding();
            problem = before.equals(after) ? usageProblem(quotas, before, eachMilliCpu) : "runs changed while the quotas were read";
            if (problem == null) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(200); // polling with a deadline
        } while (System.nanoTime() < deadline);
        throw new AssertionError(scenario + ": quota usage is not the sum of the admitted runs: " + problem);
    }

    /** Runs of the workspace that hold resources: id to "job realTimeResources". */
    private Map<String, String> holding() throws IOException, InterruptedException {
        Map<String, String> holding = new HashMap<>();
        for (JsonNode run : runs().values()) {
            if (run.get("workspace").asString().equals(workspace) && RunState.valueOf(run.get("state").asString()).holdsResources()) {
                holding.put(run.get("id").asString(), run.get("job").asString() + " " + run.path("realTimeResources").asString(""));
            }
        }
        return holding;
    }

    private static String usageProblem(JsonNode quotas, Map<String, String> holding, long eachMilliCpu) {
        long borrowedInPool = 0;
        long unusedInPool = 0;
        long lentInPool = 0;
        for (JsonNode quota : quotas) {
            String name = quota.at("/metadata/name").asString();
            JsonNode status = quota.path("status");
            long inQuota = holding.values().stream().filter(v -> v.equals(name + " InQuota")).count() * eachMilliCpu;
            long borrowed = holding.values().stream().filter(v -> v.equals(name + " NotInQuota")).count() * eachMilliCpu;
            long used = milliCpu(status, "used");
            String figures = name + ": " + status + " while its runs hold " + inQuota + "m InQuota and " + borrowed + "m NotInQuota";
            if (used != inQuota + borrowed || milliCpu(status, "inQuota") != inQuota || milliCpu(status, "borrowed") != borrowed) {
                return figures;
            }
            if (inQuota > milliCpu(status, "ownGuarantee") || (status.has("max") && used > milliCpu(status, "max"))) {
                return "beyond its guarantee or max: " + figures;
            }
            borrowedInPool += borrowed;
            unusedInPool += Math.max(0, milliCpu(status, "ownGuarantee") - inQuota);
            lentInPool += milliCpu(status, "lent");
        }
        if (lentInPool != Math.min(borrowedInPool, unusedInPool)) {
            return "the pool lends " + lentInPool + "m while its borrowers hold " + borrowedInPool + "m and its quotas leave " + unusedInPool + "m unused";
        }
        return null;
    }

    private static long milliCpu(JsonNode status, String field) {
        return Quantities.parseMilliCpu(status.path(field).path("cpu").asString("0"));
    }

    private void awaitNoProcessOfEndedRuns(String scenario, Map<String, JsonNode> runs) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            Set<String> leftover = new HashSet<>();
            liveAttempts(workspace).keySet().forEach(run -> {
                JsonNode seen = runs.get(run);
                if (seen != null && RunState.valueOf(seen.get("state").asString()).isFinal()) {
                    leftover.add(run);
                }
            });
            if (leftover.isEmpty()) {
                return;
            }
            assertThat(System.nanoTime()).as("%s: processes of ended runs %s still live", scenario, leftover).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100); // polling with a deadline
        }
    }

    /** Run id to the attempts with a live process in {@code workspace}, from the environment every instance's process has. */
    static Map<String, Set<String>> liveAttempts(String workspace) {
        Map<String, Set<String>> attempts = new HashMap<>();
        try (DirectoryStream<Path> proc = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().chars().allMatch(Character::isDigit))) {
            for (Path pid : proc) {
                String run = null;
                String attempt = null;
                boolean ours = false;
                try {
                    for (String variable : new String(Files.readAllBytes(pid.resolve("environ")), StandardCharsets.UTF_8).split("\0")) {
                        if (variable.startsWith("SLIPSTREAM_RUN_ID=")) {
                            run = variable.substring("SLIPSTREAM_RUN_ID=".length());
                        } else if (variable.equals("SLIPSTREAM_WORKSPACE=" + workspace)) {
                            ours = true;
                        } else if (variable.startsWith("SLIPSTREAM_ATTEMPT=")) {
                            attempt = variable.substring("SLIPSTREAM_ATTEMPT=".length());
                        }
                    }
                } catch (IOException gone) {
                    continue; // ended meanwhile, or a kernel thread
                }
                if (run == null || !ours || isZombie(pid)) {
                    continue;
                }
                if (run != null) {
                    attempts.computeIfAbsent(run, r -> new HashSet<>()).add(attempt);
                }
            }
        } catch (IOException e) {
            throw new AssertionError("cannot read /proc", e);
        }
        return attempts;
    }

    private static boolean isZombie(Path pid) {
        try {
            String stat = Files.readString(pid.resolve("stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException | RuntimeException gone) {
            return true;
        }
    }

    JsonNode get(String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(server + path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + token).GET().build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        // A store that cannot be reached for a moment (a server just restarted under load) is asked again, as clients do:
        // what is checked is what the store holds, not that it answers at once.
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (response.statusCode() == 503 && response.body().contains("STORE_UNAVAILABLE") && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(250);
            response = http.send(request, HttpResponse.BodyHandlers.ofString());
        }
        assertThat(response.statusCode()).as("GET %s: %s", path, response.body()).isEqualTo(200);
        return Json.mapper().readTree(response.body());
    }
}
