package io.slipstream.cli;

import io.slipstream.api.codec.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/** Runs the packaged slipstream jar as real processes: a server, and CLI commands against it. */
final class SlipstreamProcess {
    static final Path JAR = Path.of(System.getProperty("slipstream.jar", "target/slipstream.jar"));
    private static final Pattern LISTENING = Pattern.compile("Slipstream listening on (http://\\S+)");

    /** What a CLI command did. */
    record Result(int exit, String out, String err) {
        String lastLine() {
            List<String> lines = out.strip().lines().toList();
            return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
        }
    }

    private SlipstreamProcess() {
    }

    private static List<String> java(String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", JAR.toString()));
        command.addAll(List.of(args));
        return command;
    }

    /** A server started with {@code slipstream server --port 0}; the URL it printed. */
    record Server(Process process, String url, Path dataDir, Path log) implements AutoCloseable {
        /** SIGKILL: the server gets no chance to clean up. */
        void kill9() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }

        /** The admin's token, from the data dir. */
        String adminToken() {
            try {
                return Files.readString(dataDir.resolve("admin.token"), StandardCharsets.UTF_8).trim();
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }

        /**
         * Polls a run over HTTP (as {@code get run -o json} prints it) until {@code done} holds, with a deadline. Not
         * through the CLI: a JVM per poll would take the CPU that the run's instances need.
         */
        JsonNode awaitRun(String id, Duration timeout, java.util.function.Predicate<JsonNode> done) throws InterruptedException {
            return awaitRun(id, timeout, adminToken(), done);
        }

        JsonNode awaitRun(String id, Duration timeout, String token, java.util.function.Predicate<JsonNode> done) throws InterruptedException {
            HttpClient http = HttpClient.newHttpClient();
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                JsonNode run = Json.mapper().readTree(send(http, "GET", "/api/v1/runs/" + id, token));
                if (done.test(run)) {
                    return run;
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("run " + id + " never got there; last: " + run);
                }
                TimeUnit.MILLISECONDS.sleep(100); // polling with a deadline
            }
        }

        /**
         * Cancels every run that is still active and waits until each has ended, then stops the server. Instances
         * outlive the server by design: without this, a test that ends with a run still active (a schedule's, a
         * sleeping borrower's) would leave its processes running after the build.
         */
        @Override
        public void close() throws InterruptedException {
            if (!process.isAlive()) {
                return;
            }
            try {
                cancelEveryActiveRun();
            } finally {
                process.destroy();
                process.waitFor(30, TimeUnit.SECONDS);
            }
        }

        private void cancelEveryActiveRun() throws InterruptedException {
            HttpClient http = HttpClient.newHttpClient();
            String token;
            try {
                token = Files.readString(dataDir.resolve("admin.token"), StandardCharsets.UTF_8).trim();
            } catch (IOException e) {
                return; // it never got as far as making one
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (true) {
                List<String> active = new ArrayList<>();
                Json.mapper().readTree(send(http, "GET", "/api/v1/runs?limit=1000", token)).get("items").forEach(run -> {
                    if (!io.slipstream.api.run.RunState.valueOf(run.get("state").asString()).isFinal()) {
                        active.add(run.get("id").asString());
                    }
                });
                if (active.isEmpty()) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("runs still active 90 s after they were cancelled: " + active);
                }
                for (String id : active) {
                    try {
                        send(http, "POST", "/api/v1/runs/" + id + "/cancel", token);
                    } catch (AssertionError dropped) {
                        // a kept-alive connection the server had closed meanwhile: the next poll cancels it again
                    }
                }
                TimeUnit.MILLISECONDS.sleep(200); // polling with a deadline
            }
        }

        /**
         * One call of the API as the admin, for what a test does in bulk or polls (a JVM per CLI call would take the
         * CPU that the runs' instances need); fails unless it answers 2xx.
         */
        JsonNode api(String method, String path, String body) throws InterruptedException {
            HttpClient http = HttpClient.newHttpClient();
            HttpRequest request = HttpRequest.newBuilder(URI.create(url + path)).timeout(Duration.ofSeconds(30))
                    .header("Authorization", "Bearer " + adminToken()).header("Content-Type", "application/json")
                    .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body)).build();
            try {
                HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
                if (response.statusCode() / 100 != 2) {
                    throw new AssertionError(method + " " + path + ": " + response.statusCode() + " " + response.body());
                }
                return Json.mapper().readTree(response.body());
            } catch (IOException e) {
                throw new AssertionError(method + " " + path + ": " + e, e);
            }
        }

        private String send(HttpClient http, String method, String path, String token) throws InterruptedException {
            HttpRequest request = HttpRequest.newBuilder(URI.create(url + path)).timeout(Duration.ofSeconds(30))
                    .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                    .method(method, method.equals("GET") ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString("{}"))
                    .build();
            try {
                return http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)).body();
            } catch (IOException e) {
                throw new AssertionError(method + " " + path + ": " + e, e);
            }
        }
    }


    static Server startServer(Path dataDir, String... extraArgs) throws IOException, InterruptedException {
        return startServer(dataDir, java.util.Map.of(), extraArgs);
    }

    /** A server whose environment has {@code env} on top of this JVM's (what its instances inherit: PATH, say). */
    static Server startServer(Path dataDir, java.util.Map<String, String> env, String... extraArgs) throws IOException, InterruptedException {
        Files.createDirectories(dataDir.getParent());
        Path log = dataDir.resolveSibling(dataDir.getFileName() + "-server-" + System.nanoTime() + ".log");
        List<String> args = new ArrayList<>(List.of("server", "--port", "0", "--data-dir", dataDir.toString()));
        args.addAll(List.of(extraArgs));
        ProcessBuilder builder = new ProcessBuilder(java(args.toArray(String[]::new)))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().putAll(env);
        Process process = builder.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            String output = Files.readString(log, StandardCharsets.UTF_8);
            Matcher matcher = LISTENING.matcher(output);
            if (matcher.find()) {
                return new Server(process, matcher.group(1), dataDir, log);
            }
            if (!process.isAlive()) {
                throw new AssertionError("the server exited with " + process.exitValue() + ":\n" + output);
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
        process.destroyForcibly();
        throw new AssertionError("the server did not start within 60 s:\n" + Files.readString(log, StandardCharsets.UTF_8));
    }

    /** Runs {@code slipstream <args>} and waits for it. */
    static Result cli(Path workDir, String... args) throws IOException, InterruptedException {
        Path out = Files.createTempFile(workDir, "out", ".txt");
        Path err = Files.createTempFile(workDir, "err", ".txt");
        Process process = new ProcessBuilder(java(args)).directory(workDir.toFile())
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        if (!process.waitFor(120, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("slipstream " + String.join(" ", args) + " did not finish within 120 s");
        }
        return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    /** Whether Debian's /usr/bin/python3 has PyTorch with gloo (python3-torch), which the PyTorch example needs. */
    static boolean torchIsInstalled() throws IOException, InterruptedException {
        if (!Files.isExecutable(Path.of("/usr/bin/python3"))) {
            return false;
        }
        Process probe = new ProcessBuilder("/usr/bin/python3", "-c", "import torch.distributed as d; assert d.is_gloo_available()")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!probe.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
            probe.destroyForcibly();
            return false;
        }
        return probe.exitValue() == 0;
    }

    private static final Pattern FINAL_WEIGHTS = Pattern.compile("final weights sha256=([0-9a-f]{64})");

    /** The weights' digest the training examples print on every rank: {@code ranks} of them in {@code logs}, all equal. */
    static String agreedDigest(String logs, int ranks) {
        Matcher sha = FINAL_WEIGHTS.matcher(logs);
        List<String> digests = new ArrayList<>();
        while (sha.find()) {
            digests.add(sha.group(1));
        }
        org.assertj.core.api.Assertions.assertThat(digests).as(logs).hasSize(ranks);
        org.assertj.core.api.Assertions.assertThat(digests.stream().distinct()).as("every rank agrees").hasSize(1);
        return digests.get(0);
    }
}
