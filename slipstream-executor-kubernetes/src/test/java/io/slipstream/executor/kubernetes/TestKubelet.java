package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small kubelet for tests: it runs the pods bound to its nodes, with each container a local process (its command
 * and env as the pod says; mounted volumes are local directories, and env values and paths under a mount point are
 * mapped to them). It moves pods through Pending → Running → Succeeded/Failed, assigns IPs, keeps config-map and
 * downward-API volumes current, runs startup probes, serves logs with timestamps, and honours deletion grace periods:
 * SIGTERM to the container's process group, SIGKILL once the grace period is over, then it lets the pod go.
 * Images named {@code missing/...} cannot be pulled.
 */
public final class TestKubelet implements AutoCloseable {
    static final String FINALIZER = "test.kubelet/containers-running";

    private final KubernetesClient client;
    private final TestApiServer api;
    private final Set<String> namespaces;
    private final Set<String> nodes;
    private final Path root;
    private final Map<String, PodRun> runs = new ConcurrentHashMap<>();
    private final ExecutorService workers = Executors.newCachedThreadPool(daemon("kubelet"));
    private final ScheduledExecutorService timers = Executors.newScheduledThreadPool(2, daemon("kubelet-timer"));
    /**
     * Kills the containers' processes if the test's JVM ends without closing this kubelet (a hung test stopped, a run
     * interrupted): a container waiting for its metadata would otherwise wait forever on the machine.
     */
    private final Thread reaper = new Thread(this::killEverything, "test-kubelet-reaper");
    private final AtomicInteger nextIp = new AtomicInteger(10);
    private final java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(0);
    private volatile java.util.concurrent.CountDownLatch paused = running;
    private final SharedIndexInformer<Pod> podInformer;
    private final SharedIndexInformer<ConfigMap> configMapInformer;
    /** Secret volumes are updated in place when their Secret changes, as a kubelet does (identity tokens). */
    private final SharedIndexInformer<io.fabric8.kubernetes.api.model.Secret> secretInformer;

    /** One pod as this kubelet runs it. */
    private final class PodRun {
        final String namespace;
        final String name;
        final String uid;
        final Path dir;
        final String ip;
        final List<Line> log = new ArrayList<>();
        final Map<String, Path> mounts = new HashMap<>();
        volatile Pod pod;
        volatile Process process;
        volatile boolean deleting;
        // the main container's state, as the status shows it
        String waiting = "PodInitializing";
        Instant startedAt;
        Integer exitCode;
        String phase = "Pending";
        boolean started;

        PodRun(Pod pod) {
            this.pod = pod;
            this.namespace = pod.getMetadata().getNamespace();
            this.name = pod.getMetadata().getName();
            this.uid = pod.getMetadata().getUid();
            this.dir = root.resolve("pods").resolve(uid);
            this.ip = "10.42.0." + nextIp.getAndIncrement();
        }
    }

    private record Line(Instant at, String text) {
    }

    TestKubelet(KubernetesClient client, TestApiServer api, List<String> namespaces, Set<String> nodes, Path root) {
        this.client = client;
        this.api = api;
        this.namespaces = Set.copyOf(namespaces);
        this.nodes = Set.copyOf(nodes);
        this.root = root;
        Runtime.getRuntime().addShutdownHook(reaper);
        api.serveLogsFrom(this);
        this.configMapInformer = client.configMaps().inAnyNamespace().inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(ConfigMap map) {
                refreshVolumes();
            }

            @Override
            public void onUpdate(ConfigMap before, ConfigMap map) {
                refreshVolumes();
            }

            @Override
            public void onDelete(ConfigMap map, boolean unknown) {
            }
        }, 0);
        this.secretInformer = client.secrets().inAnyNamespace().inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(io.fabric8.kubernetes.api.model.Secret secret) {
            }

            @Override
            public void onUpdate(io.fabric8.kubernetes.api.model.Secret before, io.fabric8.kubernetes.api.model.Secret secret) {
                refreshSecretVolumes(secret);
            }

            @Override
            public void onDelete(io.fabric8.kubernetes.api.model.Secret secret, boolean unknown) {
            }
        }, 0);
        this.podInformer = client.pods().inAnyNamespace().inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                changed(pod);
            }

            @Override
            public void onUpdate(Pod before, Pod pod) {
                changed(pod);
            }

            @Override
            public void onDelete(Pod pod, boolean unknown) {
            }
        }, 0);
    }

    private void changed(Pod pod) {
        if (pod.getSpec().getNodeName() == null || !nodes.contains(pod.getSpec().getNodeName())
                || !namespaces.contains(pod.getMetadata().getNamespace())) {
            return;
        }
        PodRun run = runs.get(pod.getMetadata().getUid());
        if (run == null) {
            if (pod.getMetadata().getDeletionTimestamp() != null || "Succeeded".equals(phaseOf(pod)) || "Failed".equals(phaseOf(pod))) {
                return;
            }
            PodRun fresh = new PodRun(pod);
            if (runs.putIfAbsent(fresh.uid, fresh) == null) {
                workers.submit(() -> run(fresh));
            }
            return;
        }
        run.pod = pod;
        writeDownwardApi(run);
        if (pod.getMetadata().getDeletionTimestamp() != null && !run.deleting) {
            run.deleting = true;
            stop(run);
        }
    }

    private static String phaseOf(Pod pod) {
        return pod.getStatus() == null ? null : pod.getStatus().getPhase();
    }

    // --- running a pod ---

    /** New pods wait (no IP, nothing runs) until {@link #resume}: as while a kubelet is slow to pick them up. */
    void pause() {
        paused = new java.util.concurrent.CountDownLatch(1);
    }

    void resume() {
        paused.countDown();
    }

    private void run(PodRun run) {
        try {
            paused.await();
            retryOnConflict(() -> client.pods().inNamespace(run.namespace).withName(run.name).edit(p -> {
                p.getMetadata().getFinalizers().add(FINALIZER);
                return p;
            }));
            Files.createDirectories(run.dir);
            publish(run);
            Container main = run.pod.getSpec().getContainers().get(0);
            if (main.getImage().startsWith("missing/")) {
                run.waiting = "ErrImagePull";
                publish(run);
                run.waiting = "ImagePullBackOff";
                publish(run);
                awaitDeletion(run);
                release(run);
                return;
            }
            if (!prepareVolumes(run)) {
                release(run);
                return;
            }
            for (Container init : run.pod.getSpec().getInitContainers()) {
                if (run.deleting) {
                    release(run);
                    return;
                }
                run.process = start(run, init, false);
                int code = run.process.waitFor();
                if (code != 0) {
                    finish(run, code);
                    return;
                }
            }
            if (run.deleting) {
                release(run);
                return;
            }
            run.process = start(run, main, true);
            synchronized (run) {
                run.waiting = null;
                run.startedAt = Instant.now();
                run.phase = "Running";
                run.started = main.getStartupProbe() == null;
            }
            publish(run);
            if (run.deleting) {
                stop(run); // deleted while starting
            }
            if (main.getStartupProbe() != null) {
                probe(run, main, 0);
            }
            finish(run, run.process.waitFor());
        } catch (Exception e) {
            if (!interrupted(e)) {
                System.err.println("test kubelet: pod " + run.name + " failed: " + e);
                e.printStackTrace();
            }
        }
    }

    private static boolean interrupted(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof InterruptedException || cause instanceof java.io.InterruptedIOException) {
                return true; // the kubelet is shutting down
            }
        }
        return false;
    }

    private void finish(PodRun run, int code) throws InterruptedException {
        killGroup(run, "KILL"); // what the main process leaves behind dies with its container
        // kill(2) only queues the signal: a loaded machine may not have run the dying processes yet. A kubelet reports
        // the container terminated once its processes are gone (the runtime reaps its cgroup), and so does this one.
        awaitGroupGone(run);
        synchronized (run) {
            run.exitCode = code;
            run.phase = code == 0 ? "Succeeded" : "Failed";
        }
        publish(run);
        release(run);
    }

    /** Removes the finalizer: a pod being deleted goes away now, others just carry no more claim of ours. */
    private void release(PodRun run) {
        retryOnConflict(() -> client.pods().inNamespace(run.namespace).withName(run.name).edit(p -> {
            p.getMetadata().getFinalizers().remove(FINALIZER);
            return p;
        }));
    }

    /** As a kubelet does: an update that lost a race with another writer of the pod is made again on the new version. */
    private static void retryOnConflict(Runnable update) {
        for (int attempt = 1; ; attempt++) {
            try {
                update.run();
                return;
            } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                if (e.getCode() != 409 || attempt == 10) {
                    throw e;
                }
            }
        }
    }

    private void awaitDeletion(PodRun run) throws InterruptedException {
        while (!run.deleting) {
            TimeUnit.MILLISECONDS.sleep(20); // a pod that cannot pull its image waits to be deleted
        }
    }

    private void stop(PodRun run) {
        Long asked = api.deletionGrace(run.namespace, run.name);
        long grace = asked != null ? asked : run.pod.getSpec().getTerminationGracePeriodSeconds() == null ? 30
                : run.pod.getSpec().getTerminationGracePeriodSeconds();
        if (run.process == null) {
            return; // not started: run() sees the deletion and lets the pod go
        }
        if (grace > 0) {
            killGroup(run, "TERM");
        }
        timers.schedule(() -> killGroup(run, "KILL"), grace, TimeUnit.SECONDS);
    }

    private void probe(PodRun run, Container main, int failures) {
        var probe = main.getStartupProbe();
        long delay = failures == 0 && probe.getInitialDelaySeconds() != null ? probe.getInitialDelaySeconds() : probe.getPeriodSeconds();
        timers.schedule(() -> {
            if (!run.process.isAlive() || run.deleting) {
                return;
            }
            try {
                ProcessBuilder builder = new ProcessBuilder(remapAll(run, probe.getExec().getCommand()));
                builder.environment().clear();
                builder.environment().putAll(env(run, main));
                builder.directory(workingDir(run, main).toFile());
                builder.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
                if (builder.start().waitFor() == 0) {
                    synchronized (run) {
                        run.started = true;
                    }
                    publish(run);
                } else if (failures + 1 >= probe.getFailureThreshold()) {
                    killGroup(run, "TERM"); // a startup probe that keeps failing gets the container killed
                    timers.schedule(() -> killGroup(run, "KILL"), 5, TimeUnit.SECONDS);
                } else {
                    probe(run, main, failures + 1);
                }
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, delay, TimeUnit.SECONDS);
    }

    private Process start(PodRun run, Container container, boolean logged) throws IOException {
        List<String> command = new ArrayList<>();
        command.add("setsid"); // the container's processes form a group: killing the group kills all of them
        command.addAll(remapAll(run, container.getCommand()));
        if (container.getArgs() != null) {
            command.addAll(remapAll(run, container.getArgs()));
        }
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().clear();
        builder.environment().putAll(env(run, container));
        builder.directory(workingDir(run, container).toFile());
        builder.redirectErrorStream(true);
        builder.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Process process = builder.start();
        if (logged) {
            workers.submit(() -> copyOutput(run, process.getInputStream()));
        } else {
            process.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
        }
        return process;
    }

    private void copyOutput(PodRun run, InputStream in) {
        try (in) {
            java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0) {
                line.write(b);
                if (b == '\n') {
                    add(run, line);
                }
            }
            if (line.size() > 0) {
                add(run, line);
            }
        } catch (IOException e) {
            // the process is gone
        }
    }

    private static void add(PodRun run, java.io.ByteArrayOutputStream line) {
        synchronized (run.log) {
            run.log.add(new Line(Instant.now(), line.toString(StandardCharsets.UTF_8)));
        }
        line.reset();
    }

    private Map<String, String> env(PodRun run, Container container) {
        Map<String, String> env = new HashMap<>();
        env.put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        env.put("HOME", run.dir.toString());
        env.put("HOSTNAME", run.pod.getSpec().getHostname() == null ? run.name : run.pod.getSpec().getHostname());
        for (EnvVar var : container.getEnv() == null ? List.<EnvVar>of() : container.getEnv()) {
            String value = var.getValue();
            if (var.getValueFrom() != null && var.getValueFrom().getFieldRef() != null) {
                String field = var.getValueFrom().getFieldRef().getFieldPath();
                value = field.equals("status.podIP") ? run.ip : field.equals("metadata.name") ? run.name : "";
            }
            if (var.getValueFrom() != null && var.getValueFrom().getSecretKeyRef() != null) {
                var ref = var.getValueFrom().getSecretKeyRef();
                var secret = client.secrets().inNamespace(run.namespace).withName(ref.getName()).get();
                if (secret == null || secret.getData() == null || !secret.getData().containsKey(ref.getKey())) {
                    throw new IllegalStateException("CreateContainerConfigError: secret " + ref.getName() + " has no key " + ref.getKey());
                }
                value = new String(java.util.Base64.getDecoder().decode(secret.getData().get(ref.getKey())), StandardCharsets.UTF_8);
            }
            env.put(var.getName(), remap(run, value == null ? "" : value));
        }
        return env;
    }

    private Path workingDir(PodRun run, Container container) throws IOException {
        Path dir = container.getWorkingDir() == null ? run.dir.resolve("rootfs") : Path.of(remap(run, container.getWorkingDir()));
        return Files.createDirectories(dir);
    }

    private List<String> remapAll(PodRun run, List<String> values) {
        return values.stream().map(v -> remap(run, v)).toList();
    }

    /** A path inside the container, as a path on this machine (values that are not such paths stay as they are). */
    private String remap(PodRun run, String value) {
        return run.mounts.entrySet().stream().sorted(Comparator.comparing((Map.Entry<String, Path> e) -> e.getKey().length()).reversed())
                .filter(e -> value.equals(e.getKey()) || value.startsWith(e.getKey() + "/"))
                .findFirst().map(e -> e.getValue() + value.substring(e.getKey().length())).orElse(value);
    }

    // --- volumes ---

    /** Makes every volume's directory and mount; waits for claims and config maps to exist, as a kubelet does. */
    private boolean prepareVolumes(PodRun run) throws IOException, InterruptedException {
        Map<String, Volume> volumes = new HashMap<>();
        run.pod.getSpec().getVolumes().forEach(v -> volumes.put(v.getName(), v));
        for (Volume volume : volumes.values()) {
            if (volume.getPersistentVolumeClaim() != null) {
                String claim = volume.getPersistentVolumeClaim().getClaimName();
                while (client.persistentVolumeClaims().inNamespace(run.namespace).withName(claim).get() == null) {
                    if (run.deleting) {
                        return false;
                    }
                    TimeUnit.MILLISECONDS.sleep(50); // the pod waits for its claim
                }
            }
        }
        List<Container> containers = new ArrayList<>(run.pod.getSpec().getInitContainers());
        containers.addAll(run.pod.getSpec().getContainers());
        for (Container container : containers) {
            for (VolumeMount mount : container.getVolumeMounts()) {
                Volume volume = volumes.get(mount.getName());
                Path base = volume.getPersistentVolumeClaim() != null ? root.resolve("claims").resolve(volume.getPersistentVolumeClaim().getClaimName())
                        : run.dir.resolve("volumes").resolve(volume.getName());
                Path local = mount.getSubPath() == null ? base : base.resolve(mount.getSubPath());
                Files.createDirectories(local);
                run.mounts.put(mount.getMountPath(), local);
            }
        }
        writeDownwardApi(run);
        if (!writeSecretVolumes(run)) {
            return false;
        }
        refreshVolumes();
        return true;
    }

    /** Secret volumes: each item of the Secret as a file (waiting for the Secret to exist, as a kubelet does). */
    private boolean writeSecretVolumes(PodRun run) throws IOException, InterruptedException {
        for (Volume volume : run.pod.getSpec().getVolumes()) {
            if (volume.getSecret() == null) {
                continue;
            }
            io.fabric8.kubernetes.api.model.Secret secret;
            while ((secret = client.secrets().inNamespace(run.namespace).withName(volume.getSecret().getSecretName()).get()) == null) {
                if (run.deleting) {
                    return false;
                }
                TimeUnit.MILLISECONDS.sleep(50);
            }
            Path dir = Files.createDirectories(run.dir.resolve("volumes").resolve(volume.getName()));
            for (var item : volume.getSecret().getItems()) {
                String value = secret.getData() == null ? null : secret.getData().get(item.getKey());
                if (value == null) {
                    throw new IllegalStateException("CreateContainerConfigError: secret " + secret.getMetadata().getName() + " has no key " + item.getKey());
                }
                Path file = dir.resolve(item.getPath()).normalize();
                if (!file.startsWith(dir)) {
                    throw new IllegalStateException("secret item path " + item.getPath() + " leaves its volume");
                }
                Files.createDirectories(file.getParent());
                Files.write(file, java.util.Base64.getDecoder().decode(value));
            }
        }
        return true;
    }

    private synchronized void refreshVolumes() {
        for (PodRun run : runs.values()) {
            for (Volume volume : run.pod.getSpec().getVolumes()) {
                if (volume.getConfigMap() == null) {
                    continue;
                }
                ConfigMap map = configMapInformer == null ? null
                        : configMapInformer.getStore().getByKey(run.namespace + "/" + volume.getConfigMap().getName());
                Path dir = run.dir.resolve("volumes").resolve(volume.getName());
                if (map == null || !Files.isDirectory(dir)) {
                    continue;
                }
                try {
                    Map<String, String> data = map.getData() == null ? Map.of() : map.getData();
                    for (var entry : data.entrySet()) {
                        Path temp = dir.resolve("." + entry.getKey() + ".tmp");
                        Files.writeString(temp, entry.getValue());
                        Files.move(temp, dir.resolve(entry.getKey()), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                    }
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    /** Writes the changed Secret's items again into the volumes of running pods that mount it, each file replaced whole. */
    private synchronized void refreshSecretVolumes(io.fabric8.kubernetes.api.model.Secret secret) {
        for (PodRun run : runs.values()) {
            if (!run.namespace.equals(secret.getMetadata().getNamespace())) {
                continue;
            }
            for (Volume volume : run.pod.getSpec().getVolumes()) {
                Path dir = run.dir.resolve("volumes").resolve(volume.getName());
                if (volume.getSecret() == null || !secret.getMetadata().getName().equals(volume.getSecret().getSecretName()) || !Files.isDirectory(dir)) {
                    continue;
                }
                try {
                    for (var item : volume.getSecret().getItems()) {
                        String value = secret.getData() == null ? null : secret.getData().get(item.getKey());
                        Path file = dir.resolve(item.getPath()).normalize();
                        if (value == null || !file.startsWith(dir)) {
                            continue;
                        }
                        Path temp = file.resolveSibling("." + file.getFileName() + ".tmp");
                        Files.write(temp, java.util.Base64.getDecoder().decode(value));
                        Files.move(temp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                    }
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    private void writeDownwardApi(PodRun run) {
        for (Volume volume : run.pod.getSpec().getVolumes()) {
            if (volume.getDownwardAPI() == null) {
                continue;
            }
            Path dir = run.dir.resolve("volumes").resolve(volume.getName());
            if (!Files.isDirectory(dir)) {
                continue;
            }
            for (var item : volume.getDownwardAPI().getItems()) {
                String field = item.getFieldRef().getFieldPath();
                String value = "";
                var annotation = java.util.regex.Pattern.compile("metadata\\.annotations\\['(.+)'\\]").matcher(field);
                if (annotation.matches() && run.pod.getMetadata().getAnnotations() != null) {
                    value = run.pod.getMetadata().getAnnotations().getOrDefault(annotation.group(1), "");
                }
                try {
                    Files.writeString(dir.resolve(item.getPath()), value);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    // --- status ---

    /** Writes the pod's status from what this kubelet knows of it. */
    private void publish(PodRun run) {
        PodStatus status;
        synchronized (run) {
            Container main = run.pod.getSpec().getContainers().get(0);
            ContainerStatusBuilder container = new ContainerStatusBuilder().withName(main.getName()).withImage(main.getImage())
                    .withStarted(run.started).withReady(run.started && run.exitCode == null).withRestartCount(0);
            if (run.exitCode != null) {
                container.withNewState().withNewTerminated().withExitCode(run.exitCode).withReason(run.exitCode == 0 ? "Completed" : "Error")
                        .withFinishedAt(Instant.now().toString()).endTerminated().endState();
            } else if (run.waiting != null) {
                container.withNewState().withNewWaiting().withReason(run.waiting)
                        .withMessage(run.waiting.contains("Image") ? "Back-off pulling image \"" + main.getImage() + "\"" : null)
                        .endWaiting().endState();
            } else {
                container.withNewState().withNewRunning().withStartedAt(run.startedAt.toString()).endRunning().endState();
            }
            List<ContainerStatus> statuses = List.of(container.build());
            status = new PodStatusBuilder().withPhase(run.phase).withPodIP(run.ip).withHostIP("192.168.0.1").withContainerStatuses(statuses).build();
        }
        PodStatus finalStatus = status;
        retryOnConflict(() -> client.pods().inNamespace(run.namespace).withName(run.name).editStatus(p -> {
            p.setStatus(finalStatus);
            return p;
        }));
    }

    // --- what tests ask ---

    /** The pod's log as the API serves it; {@code null} if this kubelet runs no such pod. */
    String log(String namespace, String pod, boolean timestamps, String sinceTime) {
        Instant since = sinceTime == null ? null : Instant.parse(sinceTime);
        PodRun run = runs.values().stream().filter(r -> r.name.equals(pod) && r.namespace.equals(namespace)).reduce((a, b) -> b).orElse(null);
        if (run == null) {
            return null;
        }
        StringBuilder text = new StringBuilder();
        synchronized (run.log) {
            for (Line line : run.log) {
                if (since == null || !line.at().isBefore(since)) {
                    text.append(timestamps ? line.at() + " " : "").append(line.text());
                }
            }
        }
        return text.toString();
    }

    /** Whether any process of the pod's containers is alive (zombies do not count). */
    public boolean anyProcessAlive(String pod) {
        PodRun run = runs.values().stream().filter(r -> r.name.equals(pod)).reduce((a, b) -> b).orElse(null);
        return run != null && run.process != null && groupAlive(run.process.pid());
    }

    /** Waits, a bounded time, until no process of the container's group is alive after its SIGKILL. */
    private static void awaitGroupGone(PodRun run) throws InterruptedException {
        Process process = run.process;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (process != null && groupAlive(process.pid())) {
            if (System.nanoTime() > deadline) {
                System.err.println("test kubelet: processes of pod " + run.name + " outlived their SIGKILL by 10 s");
                return; // reported all the same: a test that looks finds them alive and says so
            }
            TimeUnit.MILLISECONDS.sleep(5);
        }
    }

    private static boolean groupAlive(long group) {
        try (var entries = Files.list(Path.of("/proc"))) {
            return entries.filter(p -> p.getFileName().toString().matches("\\d+")).anyMatch(p -> {
                try {
                    String stat = Files.readString(p.resolve("stat"));
                    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    return !fields[0].equals("Z") && Long.parseLong(fields[2]) == group;
                } catch (IOException | RuntimeException e) {
                    return false; // ended meanwhile
                }
            });
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void killGroup(PodRun run, String signal) {
        Process process = run.process;
        if (process == null) {
            return;
        }
        try {
            new ProcessBuilder("kill", "-" + signal, "--", "-" + process.pid()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    @Override
    public void close() {
        podInformer.stop();
        configMapInformer.stop();
        secretInformer.stop();
        runs.values().forEach(run -> killGroup(run, "KILL"));
        timers.shutdownNow();
        workers.shutdownNow();
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException shuttingDown) {
            // the JVM is ending: the hook runs anyway
        }
    }

    /** Every container process and what it started, killed without a forked kill(1): a shutdown hook may not fork. */
    private void killEverything() {
        for (PodRun run : runs.values()) {
            Process process = run.process;
            if (process != null) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        }
    }
}
