package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** GET /api/v1/watch: what a stream sends, to whom, how many a user may hold, and how streams end. */
class WatchStreamTest {
    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static String admin;
    private static String alice;
    private static String bob;
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        server = TestServer.startInMemory(dataDir);
        admin = server.adminToken();
        apply("""
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-a}
                spec: {members: [alice]}
                ---
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-b}
                spec: {members: [bob]}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: wait, workspace: team-a}
                spec:
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sh, -c, "sleep 600"]}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: wait, workspace: team-b}
                spec:
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sh, -c, "sleep 600"]}
                """);
        alice = server.tokenFor("alice");
        bob = server.tokenFor("bob");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static void apply(String yaml) {
        TestServer.Response applied = server.post("/api/v1/apply", admin, yaml);
        assertThat(applied.status()).as(applied.text()).isEqualTo(200);
    }

    /** A stream read on a thread of its own into a queue of events (type and data). */
    record Stream(HttpResponse<InputStream> response, BlockingQueue<Map.Entry<String, String>> events) implements AutoCloseable {
        static Stream open(String query, String token) throws Exception {
            HttpRequest request = HttpRequest.newBuilder(URI.create(server.server().url() + "/api/v1/watch" + query))
                    .header("Authorization", "Bearer " + token).build();
            HttpResponse<InputStream> response = HTTP.send(request, HttpResponse.BodyHandlers.ofInputStream());
            BlockingQueue<Map.Entry<String, String>> events = new LinkedBlockingQueue<>();
            Thread reader = new Thread(() -> read(response.body(), events), "watch-reader");
            reader.setDaemon(true);
            reader.start();
            return new Stream(response, events);
        }

        private static void read(InputStream body, BlockingQueue<Map.Entry<String, String>> events) {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
                String type = "message";
                StringBuilder data = new StringBuilder();
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    if (line.isEmpty()) {
                        events.add(Map.entry(type, data.toString()));
                        type = "message";
                        data.setLength(0);
                    } else if (line.startsWith(":")) {
                        events.add(Map.entry("comment", line));
                    } else if (line.startsWith("event: ")) {
                        type = line.substring(7);
                    } else if (line.startsWith("data: ")) {
                        data.append(line.substring(6));
                    }
                }
                events.add(Map.entry("closed", ""));
            } catch (IOException e) {
                events.add(Map.entry("closed", e.toString()));
            }
        }

        /** The next event of {@code type} (others skipped), within a deadline. */
        JsonNode next(String type) throws InterruptedException {
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline) {
                Map.Entry<String, String> event = events.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                if (event != null && event.getKey().equals(type)) {
                    // "closed" carries how the body ended (a stopped server may reset the connection), not JSON
                    return event.getValue().isEmpty() || type.equals("closed") ? null : Json.mapper().readTree(event.getValue());
                }
                if (event != null && event.getKey().equals("closed") && !type.equals("closed")) {
                    throw new AssertionError("the stream closed before a '" + type + "' event");
                }
            }
            throw new AssertionError("no '" + type + "' event in time");
        }

        @Override
        public void close() throws IOException {
            response.body().close();
        }
    }

    private static String run(String token, String workspace) {
        TestServer.Response created = server.post("/api/v1/runs", token, Json.mapper().writeValueAsString(Map.of("workspace", workspace, "job", "wait")));
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        return created.json().get("id").asString();
    }

    private static void cancel(String id) {
        server.post("/api/v1/runs/" + id + "/cancel", admin, "{}");
        server.awaitRun(admin, id, run -> io.slipstream.api.run.RunState.valueOf(run.get("state").asString()).isFinal());
    }

    @Test
    void aStreamSendsEachVisibleRunThatChangesAndNoOtherWorkspaces() throws Exception {
        try (Stream alices = Stream.open("?workspace=team-a&timeoutSeconds=60", alice); Stream bobs = Stream.open("?timeoutSeconds=60", bob)) {
            assertThat(alices.response().statusCode()).isEqualTo(200);
            assertThat(alices.response().headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
            alices.next("ready");
            bobs.next("ready");
            String a = run(alice, "team-a");
            JsonNode created = alices.next("run");
            assertThat(created.get("id").asString()).isEqualTo(a);
            assertThat(created.get("workspace").asString()).isEqualTo("team-a");
            cancel(a);
            JsonNode last;
            do {
                last = alices.next("run");
            } while (!last.get("state").asString().equals("CANCELLED"));
            assertThat(last.get("id").asString()).isEqualTo(a);

            String b = run(bob, "team-b");
            assertThat(bobs.next("run").get("id").asString()).as("bob sees his own run").isEqualTo(b);
            assertThat(alices.events().stream().filter(e -> e.getKey().equals("run")).map(Map.Entry::getValue))
                    .as("alice never sees team-b's run").noneMatch(data -> data.contains(b));
            cancel(b);
        }
    }

    @Test
    void aRunThatLeavesTheFilteredStatesIsGone() throws Exception {
        try (Stream active = Stream.open("?workspace=team-a&state=QUEUED,STARTING,RUNNING&timeoutSeconds=60", alice)) {
            active.next("ready");
            String a = run(alice, "team-a");
            assertThat(active.next("run").get("id").asString()).isEqualTo(a);
            cancel(a);
            assertThat(active.next("gone").get("id").asString()).isEqualTo(a);
        }
    }

    @Test
    void aStreamOfOneRunSendsItsChangesAndAnUnseenRunIs404() throws Exception {
        String a = run(alice, "team-a");
        try (Stream one = Stream.open("?run=" + a + "&timeoutSeconds=60", alice)) {
            one.next("ready");
            cancel(a);
            JsonNode last;
            do {
                last = one.next("run");
            } while (!last.get("state").asString().equals("CANCELLED"));
        }
        assertThat(server.get("/api/v1/watch?run=" + a, bob).status()).as("bob may not see team-a's run").isEqualTo(404);
    }

    @Test
    void badFiltersAreNamedAndRunTokensAndStrangersAreRefused() {
        TestServer.Response bad = server.get("/api/v1/watch?state=SLEEPING&timeoutSeconds=0", alice);
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.text()).contains("\"state\"").contains("timeoutSeconds");
        assertThat(server.get("/api/v1/watch", null).status()).isEqualTo(401);
    }

    @Test
    void aUsersStreamBeyondTheBoundTakesThePlaceOfTheirOldest() throws Exception {
        String carol = server.tokenFor("carol"); // a user of its own: streams other tests closed may still be counted a moment
        List<Stream> open = new ArrayList<>();
        try {
            for (int i = 0; i < RunWatch.Limits.DEFAULTS.perUser(); i++) {
                Stream stream = Stream.open("?timeoutSeconds=60", carol);
                stream.next("ready");
                open.add(stream);
            }
            Stream newest = Stream.open("?timeoutSeconds=60", carol);
            open.add(newest);
            newest.next("ready");
            assertThat(open.get(0).next("end").get("reason").asString()).isEqualTo("replaced by a newer stream of this user");
            open.get(0).next("closed");
            for (Stream other : open.subList(1, open.size())) {
                assertThat(other.events()).as("the others stay open").noneMatch(e -> e.getKey().equals("end") || e.getKey().equals("closed"));
            }
        } finally {
            for (Stream stream : open) {
                stream.close();
            }
        }
    }

    @Test
    void aStoppingServerEndsItsStreamsWithAnEndEvent(@TempDir Path otherDir) throws Exception {
        TestServer other = TestServer.startInMemory(otherDir);
        boolean closed = false;
        try {
            HttpRequest request = HttpRequest.newBuilder(URI.create(other.server().url() + "/api/v1/watch"))
                    .header("Authorization", "Bearer " + other.adminToken()).build();
            HttpResponse<InputStream> response = HTTP.send(request, HttpResponse.BodyHandlers.ofInputStream());
            BlockingQueue<Map.Entry<String, String>> events = new LinkedBlockingQueue<>();
            Thread reader = new Thread(() -> Stream.read(response.body(), events), "watch-reader");
            reader.setDaemon(true);
            reader.start();
            Stream stream = new Stream(response, events);
            stream.next("ready");
            other.close();
            closed = true;
            assertThat(stream.next("end").get("reason").asString()).isEqualTo("server stopping");
            stream.next("closed");
        } finally {
            if (!closed) {
                other.close();
            }
        }
    }

    @Test
    void aStreamOfARevokedTokenEnds() throws Exception {
        TestServer.Response created = server.post("/api/v1/tokens", admin, "{\"user\": \"alice\"}");
        String token = created.json().get("token").asString();
        try (Stream stream = Stream.open("?workspace=team-a&timeoutSeconds=600", token)) {
            stream.next("ready");
            assertThat(server.call("DELETE", "/api/v1/tokens/" + created.json().get("id").asString(), admin, null, null).status()).isEqualTo(204);
            assertThat(stream.next("end").get("reason").asString()).isEqualTo("the token is no longer valid");
            stream.next("closed");
        }
    }

    @Test
    void aStreamShowsNoMoreOfAWorkspaceItsUserLeft() throws Exception {
        apply("""
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-x}
                spec: {members: [xavier]}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: wait, workspace: team-x}
                spec:
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sh, -c, "sleep 600"]}
                """);
        String xavier = server.tokenFor("xavier");
        try (Stream stream = Stream.open("?timeoutSeconds=600", xavier)) {
            stream.next("ready");
            String before = run(xavier, "team-x");
            assertThat(stream.next("run").get("id").asString()).isEqualTo(before);
            apply("apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: team-x}\nspec: {members: []}\n");
            assertThat(stream.next("gone").get("id").asString()).as("a run of a workspace no longer theirs leaves the stream").isEqualTo(before);
            String after = run(admin, "team-x");
            cancel(before);
            cancel(after);
            List<String> later = new ArrayList<>(); // what the stream sends until two heartbeats after both changed
            for (int heartbeats = 0; heartbeats < 2; ) {
                Map.Entry<String, String> event = stream.events().poll(30, TimeUnit.SECONDS);
                assertThat(event).as("a heartbeat in time").isNotNull();
                if (event.getKey().equals("comment")) {
                    heartbeats++;
                } else {
                    later.add(event.getKey() + " " + event.getValue());
                }
            }
            assertThat(later).as("nothing of team-x after xavier left it").noneMatch(data -> data.contains(after) || data.contains(before));
        }
    }

    @Test
    void aStreamEndsWithAnEndEventAtItsTimeout() throws Exception {
        try (Stream stream = Stream.open("?timeoutSeconds=1", alice)) {
            stream.next("ready");
            assertThat(stream.next("end").get("reason").asString()).isEqualTo("timeout");
            stream.next("closed");
        }
    }
}
