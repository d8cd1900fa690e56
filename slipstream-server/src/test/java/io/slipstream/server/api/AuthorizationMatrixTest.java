package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.DynamicContainer.dynamicContainer;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.ShiftedClock;
import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The authorization matrix: every route the server registers × every kind of caller, one HTTP call per cell against
 * one real server. Objects live in workspace {@code alpha} (member alice); {@code beta} (member bob) is the other
 * team. Path parameters name real objects: the shared ones where a call must be refused (and afterwards they are as
 * they were), fresh ones where it is allowed (so that allowed calls leave the shared ones be, and visibly change theirs).
 * Every refused answer is also compared with the answer for objects that do not exist: who may not see an object
 * cannot tell whether it is there.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AuthorizationMatrixTest {
    /** Who calls. The last five hold no valid credential and get 401 from every {@code /api} route. */
    enum Who {
        ADMIN("admin"),
        MEMBER("member"),
        OTHER_MEMBER("other workspace's member"),
        RUN_TOKEN("run token"),
        OTHER_RUN_TOKEN("other workspace's run token"),
        ENDED_RUN_TOKEN("ended run's token"),
        REVOKED("revoked token"),
        EXPIRED("expired token"),
        NO_TOKEN("no token"),
        MALFORMED("malformed header");

        final String label;

        Who(String label) {
            this.label = label;
        }

        boolean authenticated() {
            return ordinal() <= OTHER_RUN_TOKEN.ordinal();
        }

        /** A name this caller must never read in an answer it is given: the other team's. */
        String foreign() {
            return switch (this) {
                case MEMBER, RUN_TOKEN -> "beta";
                case OTHER_MEMBER, OTHER_RUN_TOKEN -> "alpha";
                default -> null;
            };
        }

        /** Whether this caller may see the objects of alpha: if not, they must not learn whether one exists. */
        boolean seesAlpha() {
            return this == ADMIN || this == MEMBER;
        }
    }

    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static final Map<Who, String> TOKENS = new EnumMap<>(Who.class);
    private static String admin;
    private static String liveRun;
    private static String otherLiveRun;
    private static String endedRun;
    private static String spareNode;
    private static String victimToken;
    private static final Map<String, String> SECRETS = new ConcurrentHashMap<>();
    private static final AtomicInteger FRESH = new AtomicInteger();
    private static volatile long lastAllowedStep = -1;

    private static final String SETUP = """
            apiVersion: slipstream/v1
            kind: Workspace
            metadata: {name: alpha}
            spec: {members: [alice]}
            ---
            apiVersion: slipstream/v1
            kind: Workspace
            metadata: {name: beta}
            spec: {members: [bob]}
            ---
            apiVersion: slipstream/v1
            kind: Shape
            metadata: {name: cpu.small}
            spec: {cpu: 1, memory: 1Gi}
            ---
            apiVersion: slipstream/v1
            kind: Topology
            metadata: {name: default}
            spec: {levels: [{name: rack, nodeLabel: topology.slipstream.io/rack}]}
            ---
            apiVersion: slipstream/v1
            kind: Quota
            metadata: {name: alpha-quota, workspace: alpha}
            spec: {type: General, min: {cpu: 1, memory: 1Gi}}
            ---
            apiVersion: slipstream/v1
            kind: Quota
            metadata: {name: beta-quota, workspace: beta}
            spec: {type: General, min: {cpu: 1, memory: 1Gi}}
            ---
            apiVersion: slipstream/v1
            kind: Secret
            metadata: {name: alpha-secret, workspace: alpha}
            spec: {data: {token: alpha-value}}
            ---
            apiVersion: slipstream/v1
            kind: Secret
            metadata: {name: beta-secret, workspace: beta}
            spec: {data: {token: beta-value}}
            """
            + job("alpha", "alpha-job", "[\"true\"]")
            + job("alpha", "alpha-quick", "[\"true\"]")
            + job("alpha", "alpha-idle", "[sleep, \"600\"]")
            + job("alpha", "alpha-live", "[sh, -c, 'echo \"token=$SLIPSTREAM_RUN_TOKEN\"; exec sleep 600']")
            + job("alpha", "alpha-once", "[sh, -c, 'echo \"token=$SLIPSTREAM_RUN_TOKEN\"']")
            + job("beta", "beta-quick", "[\"true\"]")
            + job("beta", "beta-live", "[sh, -c, 'echo \"token=$SLIPSTREAM_RUN_TOKEN\"; exec sleep 600']");

    private static String job(String workspace, String name, String command) {
        return """
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: %s}
                spec:
                  nodeGroups:
                    - {name: main, shape: cpu.small, command: %s}
                """.formatted(name, workspace, command);
    }

    // Bodies: {name} is a path parameter of the cell, filled in like those of the path.
    private static final String APPLY_JOB = """
            apiVersion: slipstream/v1
            kind: Job
            metadata: {name: {job}, workspace: {workspace}}
            spec:
              nodeGroups:
                - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [echo, changed]}
            """;
    private static final String APPLY_QUOTA = """
            apiVersion: slipstream/v1
            kind: Quota
            metadata: {name: {quota}, workspace: {workspace}}
            spec: {type: General, min: {cpu: 2, memory: 2Gi}}
            """;
    private static final String APPLY_WORKSPACE = """
            apiVersion: slipstream/v1
            kind: Workspace
            metadata: {name: {workspace}}
            spec: {members: [alice, bob, mallory]}
            """;
    private static final String APPLY_SHAPE = """
            apiVersion: slipstream/v1
            kind: Shape
            metadata: {name: {shape}}
            spec: {cpu: 64, memory: 512Gi, gpu: 8, gpuModel: h100}
            """;
    private static final String APPLY_TOPOLOGY = """
            apiVersion: slipstream/v1
            kind: Topology
            metadata: {name: default}
            spec: {levels: [{name: {level}, nodeLabel: topology.slipstream.io/rack}]}
            """;
    private static final String APPLY_SECRET = """
            apiVersion: slipstream/v1
            kind: Secret
            metadata: {name: {secret}, workspace: {workspace}}
            spec: {data: {token: changed}}
            """;
    private static final String RUN_JOB = "{\"workspace\": \"{workspace}\", \"job\": \"{job}\"}";
    private static final String RUN_DOCUMENT = """
            {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "{job}", "workspace": "{workspace}"},
             "spec": {"nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["echo", "submitted"]}]}}}
            """;

    /*
     * The expected answer of every route to every caller, in the order of Who:
     *   adm: admin, mem: member of alpha, oth: member of beta, run: alpha's live run's token, orun: beta's live run's token,
     *   end: an ended run's token, rev: a revoked token, exp: an expired token, none: no token, bad: malformed header.
     * 400 for the other member: apply answers a workspace one may not write to as a problem at metadata.workspace
     * ("does not exist or you are not a member"), the same as for a workspace that does not exist.
     */
    private static final List<Row> TABLE = List.of(
            //  route                                                         adm mem oth run orun end rev exp none bad
            row("GET    /healthz",                                           "200 200 200 200 200  200 200 200 200  200"),
            row("GET    /readyz",                                            "200 200 200 200 200  200 200 200 200  200"),
            row("GET    /.well-known/openid-configuration",                  "200 200 200 200 200  200 200 200 200  200"),
            row("GET    /.well-known/jwks.json",                             "200 200 200 200 200  200 200 200 200  200"),
            row("GET    /metrics",                                           "200 403 403 403 403  401 401 401 401  401"),
            row("GET    /api/v1/whoami",                                     "200 200 200 200 200  401 401 401 401  401"),
            row("GET    /api/v1/leader",                                     "200 200 200 403 403  401 401 401 401  401"),
            row("POST   /api/v1/apply (a Job)",                              "200 200 400 403 403  401 401 401 401  401")
                    .body(APPLY_JOB).changes(allowed -> Map.of("job", allowed ? fresh("alpha-job") : "alpha-job"),
                            p -> document("/api/v1/workspaces/" + p.get("workspace") + "/jobs/" + p.get("job"))),
            row("POST   /api/v1/apply (a Quota)",                            "200 403 403 403 403  401 401 401 401  401")
                    .body(APPLY_QUOTA).changes(allowed -> Map.of("quota", allowed ? fresh("alpha-quota") : "alpha-quota"),
                            p -> document("/api/v1/workspaces/" + p.get("workspace") + "/quotas/" + p.get("quota"))),
            row("POST   /api/v1/apply (a Workspace adding members)",         "200 403 403 403 403  401 401 401 401  401")
                    .body(APPLY_WORKSPACE).changes(allowed -> Map.of("workspace", allowed ? fresh("ws") : "alpha"),
                            p -> document("/api/v1/workspaces/" + p.get("workspace")))
                    .cleanUp(p -> deleteAsAdmin("/api/v1/workspaces/" + p.get("workspace"), "alpha")),
            row("POST   /api/v1/apply (a Shape)",                            "200 403 403 403 403  401 401 401 401  401")
                    .body(APPLY_SHAPE).changes(allowed -> Map.of("shape", allowed ? fresh("shape") : "cpu.small"),
                            p -> document("/api/v1/shapes/" + p.get("shape"))),
            row("POST   /api/v1/apply (a Secret)",                           "200 200 400 403 403  401 401 401 401  401")
                    .body(APPLY_SECRET).changes(allowed -> Map.of("secret", allowed ? fresh("alpha-secret") : "alpha-secret"),
                            p -> document("/api/v1/workspaces/" + p.get("workspace") + "/secrets/" + p.get("secret"))),
            row("GET    /api/v1/secrets",                                    "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/workspaces/{workspace}/secrets/{secret}",    "200 200 404 403 403  401 401 401 401  401"),
            row("DELETE /api/v1/workspaces/{workspace}/secrets/{secret}",    "204 204 404 403 403  401 401 401 401  401")
                    .changes(allowed -> Map.of("secret", allowed ? freshSecret() : "alpha-secret"),
                            p -> document("/api/v1/workspaces/alpha/secrets/" + p.get("secret"))),
            row("GET    /api/v1/workspaces",                                 "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/workspaces/{workspace}",                     "200 200 404 403 403  401 401 401 401  401"),
            row("DELETE /api/v1/workspaces/{workspace}",                     "204 403 404 403 403  401 401 401 401  401")
                    .changes(allowed -> Map.of("workspace", allowed ? freshWorkspace() : "alpha"),
                            p -> document("/api/v1/workspaces/" + p.get("workspace"))),
            row("GET    /api/v1/shapes",                                     "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/shapes/{shape}",                             "200 200 200 403 403  401 401 401 401  401"),
            row("DELETE /api/v1/shapes/{shape}",                             "204 403 403 403 403  401 401 401 401  401")
                    .changes(allowed -> Map.of("shape", allowed ? freshShape() : "cpu.small"), p -> document("/api/v1/shapes/" + p.get("shape"))),
            row("POST   /api/v1/apply (a Topology)",                         "200 403 403 403 403  401 401 401 401  401")
                    .body(APPLY_TOPOLOGY).changes(allowed -> Map.of("level", allowed ? fresh("level") : "rack"),
                            p -> document("/api/v1/topologies/default")),
            row("GET    /api/v1/topologies",                                 "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/topologies/{topology}",                      "200 200 200 403 403  401 401 401 401  401"),
            row("DELETE /api/v1/topologies/{topology}",                      "204 403 403 403 403  401 401 401 401  401")
                    .changes(allowed -> Map.of("topology", "default"), p -> document("/api/v1/topologies/default"))
                    .cleanUp(p -> {
                        if (server.get("/api/v1/topologies/default", admin).status() == 404) {
                            applyAsAdmin("apiVersion: slipstream/v1\nkind: Topology\nmetadata: {name: default}\n"
                                    + "spec: {levels: [{name: rack, nodeLabel: topology.slipstream.io/rack}]}\n");
                        }
                    }),
            row("GET    /api/v1/quotas",                                     "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/quotas?workspace={workspace}",               "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/workspaces/{workspace}/quotas/{quota}",      "200 200 404 403 403  401 401 401 401  401"),
            row("GET    /api/v1/workspaces/{workspace}/quotas/{quota}/pending", "200 200 404 403 403  401 401 401 401  401"),
            row("GET    /api/v1/pools",                                      "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/usage",                                      "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/usage?workspace={workspace}&by=user",        "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/usage/series",                               "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/usage/series?workspace={workspace}&window=day", "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/usage/series?by=pool&window=month",          "200 403 403 403 403  401 401 401 401  401"),
            row("GET    /api/v1/usage/series?by=cluster",                    "200 403 403 403 403  401 401 401 401  401"),
            row("DELETE /api/v1/workspaces/{workspace}/quotas/{quota}",      "204 403 404 403 403  401 401 401 401  401")
                    .changes(allowed -> Map.of("quota", allowed ? freshQuota() : "alpha-quota"),
                            p -> document("/api/v1/workspaces/alpha/quotas/" + p.get("quota"))),
            row("GET    /api/v1/jobs",                                       "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/jobs?workspace={workspace}",                 "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/workspaces/{workspace}/jobs/{job}",          "200 200 404 403 403  401 401 401 401  401"),
            row("DELETE /api/v1/workspaces/{workspace}/jobs/{job}",          "204 204 404 403 403  401 401 401 401  401")
                    .changes(allowed -> Map.of("job", allowed ? freshJob() : "alpha-job"), p -> document("/api/v1/workspaces/alpha/jobs/" + p.get("job"))),
            row("GET    /api/v1/nodes",                                      "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/nodes/{node}",                               "200 200 200 403 403  401 401 401 401  401"),
            row("POST   /api/v1/nodes/{node}/down",                          "200 403 403 403 403  401 401 401 401  401")
                    .body("{\"reason\": \"taken down by a test\"}").changes(allowed -> Map.of(), p -> condition(p.get("node")))
                    .cleanUp(p -> nodeUp(p.get("node"))),
            row("POST   /api/v1/nodes/{node}/up",                            "200 403 403 403 403  401 401 401 401  401")
                    .changes(allowed -> nodeDown(spareNode), p -> condition(p.get("node"))).cleanUp(p -> nodeUp(p.get("node"))),
            row("POST   /api/v1/nodes/{node}/cordon",                        "200 403 403 403 403  401 401 401 401  401")
                    .body("{\"reason\": \"cordoned by a test\"}").changes(allowed -> Map.of(), p -> condition(p.get("node")))
                    .cleanUp(p -> uncordon(p.get("node"))),
            row("POST   /api/v1/nodes/{node}/drain",                         "200 403 403 403 403  401 401 401 401  401")
                    .body("{\"reason\": \"drained by a test\"}").changes(allowed -> Map.of(), p -> condition(p.get("node")))
                    .cleanUp(p -> uncordon(p.get("node"))),
            row("POST   /api/v1/nodes/{node}/uncordon",                      "200 403 403 403 403  401 401 401 401  401")
                    .changes(allowed -> cordoned(spareNode), p -> condition(p.get("node"))).cleanUp(p -> uncordon(p.get("node"))),
            row("POST   /api/v1/runs (a job)",                               "201 201 404 403 403  401 401 401 401  401")
                    .body(RUN_JOB).changes(allowed -> Map.of("job", "alpha-quick"), p -> runsOf(p.get("job"))),
            row("POST   /api/v1/runs (a job document)",                      "201 201 400 403 403  401 401 401 401  401")
                    .body(RUN_DOCUMENT).changes(allowed -> Map.of("job", allowed ? fresh("alpha-submitted") : "alpha-quick"),
                            p -> document("/api/v1/workspaces/alpha/jobs/" + p.get("job")) + " " + runsOf(p.get("job"))),
            row("GET    /api/v1/runs",                                       "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/runs?workspace={workspace}&job=alpha-live",  "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/watch?timeoutSeconds=1",                     "200 200 200 403 403  401 401 401 401  401"),
            row("GET    /api/v1/watch?run={run}&timeoutSeconds=1",           "200 200 404 403 403  401 401 401 401  401"),
            row("GET    /api/v1/runs/{run}",                                 "200 200 404 200 403  401 401 401 401  401"),
            row("POST   /api/v1/runs/{run}/cancel",                          "200 200 404 403 403  401 401 401 401  401")
                    .changes(allowed -> Map.of("run", allowed ? freshRun() : liveRun),
                            p -> "cancel requested at " + server.get("/api/v1/runs/" + p.get("run"), admin).json().path("cancelRequestedAt")),
            row("GET    /api/v1/runs/{run}/events",                          "200 200 404 200 403  401 401 401 401  401"),
            row("GET    /api/v1/runs/{run}/logs",                            "200 200 404 200 403  401 401 401 401  401"),
            // What a progress report changes is seen a sampling later: the last test of the matrix looks.
            row("POST   /api/v1/runs/{run}/instances/{rank}/progress",       "204 403 404 204 403  401 401 401 401  401")
                    .body("{\"step\": {step}}").changes(AuthorizationMatrixTest::progressStep, null),
            row("POST   /api/v1/tokens",                                     "201 403 403 403 403  401 401 401 401  401")
                    .body("{\"user\": \"mallory\", \"admin\": true}").changes(allowed -> Map.of(), p -> tokensOf("mallory"))
                    .cleanUp(p -> revokeTokensOf("mallory")),
            row("GET    /api/v1/tokens",                                     "200 403 403 403 403  401 401 401 401  401"),
            row("DELETE /api/v1/tokens/{token}",                             "204 403 403 403 403  401 401 401 401  401")
                    .changes(allowed -> Map.of("token", allowed ? freshToken() : victimToken),
                            p -> String.valueOf(server.get("/api/v1/whoami", SECRETS.get(p.get("token"))).status())),
            row("POST   /api/v1/store/backup",                               "200 403 403 403 403  401 401 401 401  401"));

    /** Objects that do not exist, one per path parameter: answers about them must read like those about hidden ones. */
    private static final Map<String, String> GHOSTS = Map.of("workspace", "ghost-ws", "quota", "ghost-quota", "job", "ghost-job",
            "run", "ghost-run-00000000", "node", "ghost-node", "shape", "ghost-shape", "token", "tok-000000000000",
            "secret", "ghost-secret", "topology", "ghost-topology");

    @BeforeAll
    static void start() {
        // Two days ago: a token that lives a day is created, and has expired once the clock is back to now.
        ShiftedClock clock = new ShiftedClock(Duration.ofDays(-2));
        server = TestServer.start(dataDir, config -> config.withIdentityIssuer("https://slipstream.example.com"), clock);
        admin = server.adminToken();
        TOKENS.put(Who.ADMIN, admin);
        String expiring = createToken("{\"user\": \"alice\", \"expiresInDays\": 1}").get("token").asString();
        assertThat(server.get("/api/v1/whoami", expiring).status()).isEqualTo(200);
        clock.shift(Duration.ZERO);
        TOKENS.put(Who.EXPIRED, expiring);

        Response setup = server.post("/api/v1/apply", admin, SETUP);
        assertThat(setup.status()).as(setup.text()).isEqualTo(200);
        TOKENS.put(Who.MEMBER, server.tokenFor("alice"));
        TOKENS.put(Who.OTHER_MEMBER, server.tokenFor("bob"));
        JsonNode revoked = createToken("{\"user\": \"alice\"}");
        assertThat(server.get("/api/v1/whoami", revoked.get("token").asString()).status()).isEqualTo(200);
        assertThat(server.call("DELETE", "/api/v1/tokens/" + revoked.get("id").asString(), admin, null, null).status()).isEqualTo(204);
        TOKENS.put(Who.REVOKED, revoked.get("token").asString());
        victimToken = freshToken();

        liveRun = runAsAdmin("alpha", "alpha-live");
        otherLiveRun = runAsAdmin("beta", "beta-live");
        endedRun = runAsAdmin("alpha", "alpha-once");
        TOKENS.put(Who.RUN_TOKEN, runTokenOf(liveRun));
        TOKENS.put(Who.OTHER_RUN_TOKEN, runTokenOf(otherLiveRun));
        server.awaitState(admin, endedRun, "SUCCEEDED");
        TOKENS.put(Who.ENDED_RUN_TOKEN, runTokenOf(endedRun));
        server.awaitState(admin, liveRun, "RUNNING");
        server.awaitState(admin, otherLiveRun, "RUNNING");

        // A node no live run is on: taking it down (and up) disturbs no one.
        Set<String> busy = new TreeSet<>();
        for (String run : List.of(liveRun, otherLiveRun)) {
            server.get("/api/v1/runs/" + run, admin).json().get("instances").forEach(i -> busy.add(i.get("node").asString()));
        }
        List<String> free = new ArrayList<>();
        server.get("/api/v1/nodes", admin).json().get("items").forEach(n -> free.add(n.get("name").asString()));
        free.removeAll(busy);
        spareNode = free.get(0);

        for (Who who : Who.values()) {
            int expected = who.authenticated() ? 200 : 401;
            assertThat(call(who, "GET", "/api/v1/whoami", null).status()).as("whoami with the %s", who.label).isEqualTo(expected);
        }
    }

    @AfterAll
    static void stop() {
        if (server == null) {
            return;
        }
        try {
            // Instances outlive a server that stops: end every run, and wait until its processes are gone.
            JsonNode active = server.get("/api/v1/runs?state=QUEUED,STARTING,RUNNING,TERMINATING&limit=1000", admin).json().get("items");
            List<String> ids = new ArrayList<>();
            active.forEach(run -> ids.add(run.get("id").asString()));
            for (String id : ids) {
                server.post("/api/v1/runs/" + id + "/cancel", admin, "{}");
            }
            for (String id : ids) {
                server.awaitRun(admin, id, run -> Set.of("SUCCEEDED", "FAILED", "CANCELLED", "TIMED_OUT").contains(run.get("state").asString()));
            }
        } finally {
            server.close();
        }
    }

    @Test
    @Order(1)
    void theTableCoversEveryRegisteredRouteAndNoOther() {
        Set<String> registered = new TreeSet<>();
        server.server().routes().forEach(route -> registered.add(route.method() + " " + route.path()));
        Set<String> covered = new TreeSet<>();
        TABLE.forEach(row -> covered.add(row.method() + " " + row.route()));
        Set<String> missing = new TreeSet<>(registered);
        missing.removeAll(covered);
        assertThat(missing).as("routes without a row in the authorization matrix: say who may call them").isEmpty();
        Set<String> stale = new TreeSet<>(covered);
        stale.removeAll(registered);
        assertThat(stale).as("rows of the authorization matrix for routes the server does not have").isEmpty();
    }

    @Test
    @Order(2)
    void withoutAValidCredentialEveryApiRouteAnswers401() {
        for (Row row : TABLE) {
            for (Who who : Who.values()) {
                if (!who.authenticated() && row.path().startsWith("/api/")) {
                    assertThat(row.expected().get(who)).as("%s × %s", row.name(), who.label).isEqualTo(401);
                }
            }
        }
    }

    @TestFactory
    @Order(3)
    Stream<DynamicNode> matrix() {
        Stream<DynamicNode> cells = TABLE.stream().map(row -> dynamicContainer(row.name(), row.cells().map(who ->
                dynamicTest(row.name() + " × " + who.label, () -> check(row, who)))));
        return Stream.concat(cells, Stream.of(dynamicTest("refused progress reports were not recorded", () -> {
            // The control loop looks at a run's progress every 2 s (FaultWatch.SAMPLE_EVERY): polled, with a deadline,
            // until it shows the last allowed report, which a refused report made later would have replaced.
            JsonNode run = server.awaitRun(admin, liveRun, r -> r.path("progress").path("step").asLong(-1) == lastAllowedStep);
            assertThat(run.path("progress").path("step").asLong(-1)).isEqualTo(lastAllowedStep);
        })));
    }

    @Test
    @Order(4)
    void aMemberCannotEscalate() {
        String bob = TOKENS.get(Who.OTHER_MEMBER);
        String alice = TOKENS.get(Who.MEMBER);
        String alphaBefore = document("/api/v1/workspaces/alpha");

        // A batch that joins another workspace along with something allowed: all of it is refused.
        Response join = server.post("/api/v1/apply", bob, job("beta", "beta-sneaky", "[\"true\"]")
                + "---\napiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: alpha}\nspec: {members: [alice, bob]}\n");
        assertThat(join.status()).as(join.text()).isEqualTo(403);
        // One that writes a job into another workspace: nothing of it is created.
        Response foreignJob = server.post("/api/v1/apply", bob, job("beta", "beta-sneaky", "[\"true\"]") + job("alpha", "alpha-sneaky", "[\"true\"]"));
        assertThat(foreignJob.status()).as(foreignJob.text()).isEqualTo(400);
        assertThat(foreignJob.json().get("problems").get(0).get("field").asString()).isEqualTo("documents[1].metadata.workspace");
        assertThat(server.get("/api/v1/workspaces/beta/jobs/beta-sneaky", admin).status()).isEqualTo(404);
        assertThat(server.get("/api/v1/workspaces/alpha/jobs/alpha-sneaky", admin).status()).isEqualTo(404);
        assertThat(document("/api/v1/workspaces/alpha")).isEqualTo(alphaBefore);
        assertThat(server.get("/api/v1/whoami", bob).json().get("workspaces").toString()).isEqualTo("[\"beta\"]");

        // Another team's quota cannot be named from one's own job.
        Response borrowed = server.post("/api/v1/apply", alice, """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: alpha-borrower, workspace: alpha}
                spec:
                  quota: beta-quota
                  nodeGroups:
                    - {name: main, shape: cpu.small, command: ["true"]}
                """);
        assertThat(borrowed.status()).as(borrowed.text()).isEqualTo(400);
        assertThat(borrowed.json().get("problems").get(0).get("field").asString()).isEqualTo("spec.quota");
        assertThat(server.get("/api/v1/workspaces/alpha/jobs/alpha-borrower", admin).status()).isEqualTo(404);

        // No token for oneself or anyone else, admin or not.
        String tokensBefore = server.get("/api/v1/tokens", admin).json().get("items").toString();
        for (String request : List.of("{\"user\": \"alice\", \"admin\": true}", "{\"user\": \"admin\"}", "{\"user\": \"bob\"}")) {
            assertThat(server.post("/api/v1/tokens", alice, request).status()).as(request).isEqualTo(403);
        }
        assertThat(server.get("/api/v1/tokens", admin).json().get("items").toString()).isEqualTo(tokensBefore);

        // An Idempotency-Key another team used names their run to them only.
        String key = "authz-" + FRESH.incrementAndGet();
        Map<String, String> withKey = Map.of("Idempotency-Key", key);
        Response bobs = server.call("POST", "/api/v1/runs", bob, "{\"workspace\": \"beta\", \"job\": \"beta-quick\"}", "application/json", withKey);
        assertThat(bobs.status()).as(bobs.text()).isEqualTo(201);
        String bobsRun = bobs.json().get("id").asString();
        Response replay = server.call("POST", "/api/v1/runs", alice, "{\"workspace\": \"beta\", \"job\": \"beta-quick\"}", "application/json", withKey);
        assertThat(replay.status()).as(replay.text()).isEqualTo(404);
        Response submitted = server.call("POST", "/api/v1/runs", alice,
                fill(RUN_DOCUMENT, Map.of("job", "beta-quick", "workspace", "beta")), "application/json", withKey);
        assertThat(submitted.status()).as(submitted.text()).isEqualTo(400);
        Response own = server.call("POST", "/api/v1/runs", alice, "{\"workspace\": \"alpha\", \"job\": \"alpha-quick\"}", "application/json", withKey);
        assertThat(own.status()).as(own.text()).isEqualTo(201);
        assertThat(own.json().get("id").asString()).isNotEqualTo(bobsRun);
        for (Response response : List.of(replay, submitted, own)) {
            assertThat(response.text()).doesNotContain(bobsRun);
            assertThat(response.headers().firstValue("Idempotent-Replayed")).isEmpty();
        }
    }

    @Test
    @Order(5)
    void aRunTokenReadsItsOwnLiveRunOnly() {
        String token = TOKENS.get(Who.RUN_TOKEN);
        for (String other : List.of(otherLiveRun, endedRun)) { // another workspace's run, and another run of its own workspace
            for (String path : List.of("", "/events", "/logs")) {
                assertThat(server.get("/api/v1/runs/" + other + path, token).status()).as(other + path).isEqualTo(403);
            }
            assertThat(server.post("/api/v1/runs/" + other + "/instances/0/progress", token, "{\"step\": 1}").status()).isEqualTo(403);
        }
        assertThat(server.get("/api/v1/runs/" + liveRun, TOKENS.get(Who.OTHER_RUN_TOKEN)).status()).isEqualTo(403);
        assertThat(server.get("/api/v1/runs/" + otherLiveRun, TOKENS.get(Who.OTHER_RUN_TOKEN)).status()).isEqualTo(200);

        // The token of an ended run opens not even its own run, and says so as it would of any run.
        Response ended = server.get("/api/v1/runs/" + endedRun, TOKENS.get(Who.ENDED_RUN_TOKEN));
        assertThat(ended.status()).isEqualTo(401);
        assertThat(server.get("/api/v1/runs/" + GHOSTS.get("run"), TOKENS.get(Who.ENDED_RUN_TOKEN)).text()).isEqualTo(ended.text());

        // Paths that start at its own run and lead elsewhere: refused, or found to lead nowhere (they are not normalized).
        String own = "/api/v1/runs/" + liveRun;
        for (String path : List.of(own + "/../" + otherLiveRun, own + "/%2e%2e/" + otherLiveRun, own + "/..%2F" + otherLiveRun,
                own + "%2F..%2F" + otherLiveRun, own + "/./../" + otherLiveRun, own + "/events/../../" + otherLiveRun,
                own + "/..;/" + otherLiveRun, own + "/../../tokens", own + "/../../nodes/" + spareNode + "/down",
                "/api/v1//runs/" + otherLiveRun, "/api/v1/runs//" + otherLiveRun, "/api/v1/runs/" + otherLiveRun + "/", own + "/")) {
            for (String method : List.of("GET", "POST")) {
                Response response = server.call(method, path, token, method.equals("POST") ? "{\"reason\": \"x\"}" : null, "application/json");
                if (path.equals(own + "/") && method.equals("GET")) {
                    assertThat(response.status()).isEqualTo(200);
                } else {
                    assertThat(response.status()).as("%s %s: %s", method, path, response.text()).isIn(400, 403, 404);
                    assertThat(response.text()).as("%s %s", method, path).doesNotContain("\"state\"").doesNotContain("\"items\"");
                }
            }
        }
        assertThat(condition(spareNode)).startsWith("Ready");
    }

    @Test
    @Order(6)
    void malformedAuthorizationHeadersAreRefused() {
        String secret = TOKENS.get(Who.MEMBER);
        for (String header : List.of("Bearer", "Bearer ", "Bearer  ", secret, "Bearer" + secret, "Basic " + secret, "Token " + secret,
                "Bearer " + secret + " x", "Bearer " + secret + "x", "Bearer " + secret.substring(0, secret.length() - 1),
                "Bearer ss_", "Bearer " + "x".repeat(300), "Bearer " + secret + ",Bearer " + admin,
                "Bearer " + java.util.Base64.getEncoder().encodeToString(secret.getBytes(java.nio.charset.StandardCharsets.UTF_8)))) {
            Response response = server.call("GET", "/api/v1/whoami", null, null, null, Map.of("Authorization", header));
            assertThat(response.status()).as(header).isEqualTo(401);
        }
        assertThat(server.call("GET", "/api/v1/whoami", null, null, null, Map.of("Authorization", "bearer " + secret)).status())
                .as("the scheme is case-insensitive").isEqualTo(200);
    }

    @Test
    @Order(7)
    void aSecretIsTakenExactlyAsSentAlsoOnAConnectionThatCarriedTheRealOne() {
        String secret = TOKENS.get(Who.MEMBER);
        // The client keeps its connection open between calls: the server has just read the real secret on it.
        assertThat(server.get("/api/v1/whoami", secret).status()).isEqualTo(200);
        for (String variant : List.of(secret.toUpperCase(java.util.Locale.ROOT), secret.toLowerCase(java.util.Locale.ROOT))) {
            if (!variant.equals(secret)) {
                Response response = server.get("/api/v1/whoami", variant);
                assertThat(response.status()).as("%s, for the secret %s: %s", variant, secret, response.text()).isEqualTo(401);
            }
        }
    }

    @Test
    @Order(8)
    void methodsNotRegisteredOnAPathAreNotServed() {
        Map<String, Set<String>> methods = new LinkedHashMap<>();
        server.server().routes().forEach(route -> methods.computeIfAbsent(route.path(), p -> new TreeSet<>()).add(route.method()));
        Map<String, String> params = fixture();
        methods.forEach((path, registered) -> {
            for (String method : List.of("GET", "POST", "PUT", "PATCH", "DELETE")) {
                if (!registered.contains(method)) {
                    Response response = server.call(method, fill(path, params), admin, method.equals("GET") ? null : "{}", "application/json");
                    assertThat(response.status()).as("%s %s: %s", method, path, response.text()).isIn(404, 405);
                    assertThat(server.call(method, fill(path, params), null, null, null).status()).as("%s %s without a token", method, path)
                            .isIn(401, 404, 405);
                }
            }
        });
    }

    @Test
    @Order(9)
    void leavingAWorkspaceTakesEffectAtOnce() {
        String alice = TOKENS.get(Who.MEMBER);
        String workspace = fresh("ws");
        applyAsAdmin("apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: " + workspace + "}\nspec: {members: [alice]}\n"
                + job(workspace, "j", "[\"true\"]"));
        assertThat(server.get("/api/v1/workspaces/" + workspace + "/jobs/j", alice).status()).isEqualTo(200);
        applyAsAdmin("apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: " + workspace + "}\nspec: {members: [carol]}\n");
        assertThat(server.get("/api/v1/workspaces/" + workspace + "/jobs/j", alice).status()).isEqualTo(404);
        assertThat(server.post("/api/v1/runs", alice, "{\"workspace\": \"" + workspace + "\", \"job\": \"j\"}").status()).isEqualTo(404);
        assertThat(server.get("/api/v1/whoami", alice).json().get("workspaces").toString()).isEqualTo("[\"alpha\"]");
    }

    /** Runs one cell: the call, its status, what the answer shows, what it changed, and what a probe would learn. */
    private static void check(Row row, Who who) {
        int expected = row.expected().get(who);
        boolean allowed = expected < 300;
        String cell = row.name() + " × " + who.label;
        Map<String, String> params = fixture();
        if (row.target() != null) {
            params.putAll(row.target().apply(allowed));
        }
        try {
            String before = row.observe() == null ? null : row.observe().apply(params);
            Response response = call(who, row.method(), fill(row.path(), params), fill(row.body(), params));
            assertThat(response.status()).as("%s: %s", cell, response.text()).isEqualTo(expected);
            assertThat(response.text()).as("%s: no internals", cell).doesNotContain("at io.");
            if (!row.path().equals("/metrics")) { // whose store timings name each failure's class as their outcome, by design
                assertThat(response.text()).as("%s: no internals", cell).doesNotContain("Exception");
            }
            if (allowed && who.foreign() != null) {
                assertThat(response.text()).as("%s: shows nothing of the other workspace", cell).doesNotContain(who.foreign());
            }
            if (row.observe() != null) {
                String after = row.observe().apply(params);
                if (allowed) {
                    assertThat(after).as("%s: an allowed call changes what it acts on", cell).isNotEqualTo(before);
                } else {
                    assertThat(after).as("%s: a refused call changes nothing", cell).isEqualTo(before);
                }
            }
            if (!allowed && !who.seesAlpha() && row.names("{") && (row.scoped() || !who.authenticated())) {
                probe(cell, row, who, params, response);
            }
        } finally {
            if (row.cleanUp() != null) {
                row.cleanUp().accept(params);
            }
        }
    }

    /** The same call about objects that do not exist answers the same (the names aside). */
    private static void probe(String cell, Row row, Who who, Map<String, String> params, Response answer) {
        Map<String, String> ghosts = new HashMap<>(params);
        ghosts.putAll(GHOSTS);
        Response ghost = call(who, row.method(), fill(row.path(), ghosts), fill(row.body(), ghosts));
        String text = ghost.text();
        for (Map.Entry<String, String> name : GHOSTS.entrySet()) {
            text = text.replace(name.getValue(), params.get(name.getKey()) == null ? name.getValue() : params.get(name.getKey()));
        }
        assertThat(ghost.status() + " " + text).as("%s: the same answer for objects that do not exist", cell)
                .isEqualTo(answer.status() + " " + answer.text());
    }

    private static Map<String, String> fixture() {
        Map<String, String> params = new HashMap<>();
        params.put("workspace", "alpha");
        params.put("quota", "alpha-quota");
        params.put("job", "alpha-job");
        params.put("secret", "alpha-secret");
        params.put("run", liveRun);
        params.put("rank", "0");
        params.put("node", spareNode);
        params.put("shape", "cpu.small");
        params.put("topology", "default");
        params.put("token", victimToken);
        params.put("step", "0");
        return params;
    }

    private static String fill(String template, Map<String, String> params) {
        if (template == null) {
            return null;
        }
        String filled = template;
        for (Map.Entry<String, String> param : params.entrySet()) {
            filled = filled.replace("{" + param.getKey() + "}", param.getValue());
        }
        return filled;
    }

    private static Response call(Who who, String method, String path, String body) {
        String type = body == null ? null : body.stripLeading().startsWith("{") ? "application/json" : "application/yaml";
        if (who == Who.MALFORMED) { // a valid secret, but not as a bearer token
            return server.call(method, path, null, body, type, Map.of("Authorization", "Token " + TOKENS.get(Who.MEMBER)));
        }
        return server.call(method, path, TOKENS.get(who), body, type);
    }

    // Fixtures, all made and looked at by the admin.

    private static String fresh(String prefix) {
        return prefix + "-tmp-" + FRESH.incrementAndGet();
    }

    private static void applyAsAdmin(String yaml) {
        Response response = server.post("/api/v1/apply", admin, yaml);
        assertThat(response.status()).as(response.text()).isEqualTo(200);
    }

    private static String freshWorkspace() {
        String name = fresh("ws");
        applyAsAdmin("apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: " + name + "}\n");
        return name;
    }

    private static String freshShape() {
        String name = fresh("shape");
        applyAsAdmin("apiVersion: slipstream/v1\nkind: Shape\nmetadata: {name: " + name + "}\nspec: {cpu: 1, memory: 1Gi}\n");
        return name;
    }

    private static String freshQuota() {
        String name = fresh("alpha-quota");
        applyAsAdmin("apiVersion: slipstream/v1\nkind: Quota\nmetadata: {name: " + name + ", workspace: alpha}\nspec: {type: General, min: {cpu: 1}}\n");
        return name;
    }

    private static String freshJob() {
        String name = fresh("alpha-job");
        applyAsAdmin(job("alpha", name, "[\"true\"]"));
        return name;
    }

    private static String freshSecret() {
        String name = fresh("alpha-secret");
        applyAsAdmin("apiVersion: slipstream/v1\nkind: Secret\nmetadata: {name: " + name + ", workspace: alpha}\nspec: {data: {k: v}}\n");
        return name;
    }

    private static String freshRun() {
        return runAsAdmin("alpha", "alpha-idle");
    }

    private static String freshToken() {
        JsonNode token = createToken("{\"user\": \"alice\", \"description\": \"a victim\"}");
        SECRETS.put(token.get("id").asString(), token.get("token").asString());
        return token.get("id").asString();
    }

    private static JsonNode createToken(String request) {
        Response response = server.post("/api/v1/tokens", admin, request);
        assertThat(response.status()).as(response.text()).isEqualTo(201);
        return response.json();
    }

    private static String runAsAdmin(String workspace, String job) {
        Response response = server.post("/api/v1/runs", admin, "{\"workspace\": \"" + workspace + "\", \"job\": \"" + job + "\"}");
        assertThat(response.status()).as(response.text()).isEqualTo(201);
        return response.json().get("id").asString();
    }

    /** The token a run's instance was given, as it printed it. */
    private static String runTokenOf(String run) {
        String path = "/api/v1/runs/" + run + "/logs?instance=main-0&stream=stdout&prefix=false";
        server.awaitRun(admin, run, r -> server.get(path, admin).text().contains("token=ss_"));
        String line = server.get(path, admin).text().lines().filter(l -> l.startsWith("token=")).findFirst().orElseThrow();
        return line.substring("token=".length()).trim();
    }

    /** A document as the admin reads it (status and body; a quota's usage left out: it moves with runs). */
    private static String document(String path) {
        Response response = server.get(path, admin);
        if (response.status() != 200) {
            return String.valueOf(response.status());
        }
        ObjectNode body = (ObjectNode) response.json();
        body.remove("status");
        return "200 " + body;
    }

    private static String runsOf(String job) {
        return String.valueOf(server.get("/api/v1/runs?workspace=alpha&job=" + job + "&limit=1000", admin).json().get("items").size());
    }

    private static String tokensOf(String user) {
        List<String> ids = new ArrayList<>();
        server.get("/api/v1/tokens", admin).json().get("items").forEach(t -> {
            if (t.get("user").asString().equals(user)) {
                ids.add(t.get("id").asString());
            }
        });
        return ids.toString();
    }

    private static void revokeTokensOf(String user) {
        String ids = tokensOf(user);
        for (String id : ids.substring(1, ids.length() - 1).split(", ")) {
            if (!id.isEmpty()) {
                server.call("DELETE", "/api/v1/tokens/" + id, admin, null, null);
            }
        }
    }

    private static void deleteAsAdmin(String path, String keep) {
        if (!path.endsWith("/" + keep)) {
            server.call("DELETE", path, admin, null, null);
        }
    }

    private static String condition(String node) {
        JsonNode view = server.get("/api/v1/nodes/" + node, admin).json();
        return view.get("state").asString() + " " + view.path("reason");
    }

    private static Map<String, String> nodeDown(String node) {
        assertThat(server.post("/api/v1/nodes/" + node + "/down", admin, "{\"reason\": \"down for a test\"}").status()).isEqualTo(200);
        return Map.of();
    }

    private static Map<String, String> cordoned(String node) {
        assertThat(server.post("/api/v1/nodes/" + node + "/cordon", admin, "{\"reason\": \"cordoned for a test\"}").status()).isEqualTo(200);
        return Map.of();
    }

    private static void uncordon(String node) {
        assertThat(server.call("POST", "/api/v1/nodes/" + node + "/uncordon", admin, null, null).status()).isEqualTo(200);
    }

    private static void nodeUp(String node) {
        assertThat(server.call("POST", "/api/v1/nodes/" + node + "/up", admin, null, null).status()).isEqualTo(200);
    }

    /** A step no other cell reports; the allowed ones' are remembered, the newest being what the run must show. */
    private static Map<String, String> progressStep(boolean allowed) {
        long step = 1000 + FRESH.incrementAndGet();
        if (allowed) {
            lastAllowedStep = step;
        }
        return Map.of("step", Long.toString(step));
    }

    /**
     * A row of the table: a route (with what varies the call, if a route has several rows), the body, the expected
     * status per caller, and for calls that change something: the objects a cell acts on ({@code target}: fresh ones
     * when the call is allowed), how the admin sees them ({@code observe}), and what to undo afterwards.
     */
    record Row(String method, String path, String variant, String body, Map<Who, Integer> expected,
               Function<Boolean, Map<String, String>> target, Function<Map<String, String>, String> observe,
               Consumer<Map<String, String>> cleanUp) {
        String name() {
            return method + " " + path + (variant == null ? "" : " (" + variant + ")");
        }

        /** The route as registered: the path without the query. */
        String route() {
            return path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
        }

        /** Whether the call names an object of a workspace, which who may not see must not learn exists. */
        boolean scoped() {
            return Stream.of("{workspace}", "{run}", "{job}", "{quota}").anyMatch(this::names);
        }

        boolean names(String text) {
            return path.contains(text) || body != null && body.contains(text);
        }

        /** Allowed cells first: whatever they leave behind, the refused ones after them must not change. */
        Stream<Who> cells() {
            return Stream.concat(Arrays.stream(Who.values()).filter(w -> expected.get(w) < 300),
                    Arrays.stream(Who.values()).filter(w -> expected.get(w) >= 300));
        }

        Row body(String body) {
            return new Row(method, path, variant, body, expected, target, observe, cleanUp);
        }

        Row changes(Function<Boolean, Map<String, String>> target, Function<Map<String, String>, String> observe) {
            return new Row(method, path, variant, body, expected, target, observe, cleanUp);
        }

        Row cleanUp(Consumer<Map<String, String>> cleanUp) {
            return new Row(method, path, variant, body, expected, target, observe, cleanUp);
        }
    }

    private static Row row(String route, String expected) {
        String[] parts = route.trim().split("\\s+", 3);
        String variant = parts.length < 3 ? null : parts[2].replaceAll("^\\((.*)\\)$", "$1");
        String[] statuses = expected.trim().split("\\s+");
        if (statuses.length != Who.values().length) {
            throw new IllegalArgumentException(route + ": " + statuses.length + " statuses for " + Who.values().length + " callers");
        }
        Map<Who, Integer> byWho = new LinkedHashMap<>();
        for (Who who : Who.values()) {
            byWho.put(who, Integer.parseInt(statuses[who.ordinal()]));
        }
        return new Row(parts[0], parts[1], variant, null, Map.copyOf(byWho), null, null, null);
    }
}
