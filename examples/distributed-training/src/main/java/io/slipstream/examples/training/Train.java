package io.slipstream.examples.training;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import io.slipstream.sdk.ClusterMetadata;
import io.slipstream.sdk.Preemption;
import io.slipstream.sdk.Slipstream;

/**
 * Data-parallel training, as every rank of a run does it: read who is who from {@code SLIPSTREAM_METADATA_FILE},
 * join the ring, resume from the newest checkpoint if there is one, then for each step compute the gradient of its
 * own batch, sum gradients over the ring, and take the same step as every other rank. Rank 0 saves checkpoints and,
 * at the end, the weights, whose SHA-256 every rank prints: they must all agree.
 *
 * <p>When told to stop (preemption, a restart of the gang), every rank stops after the step it is in; rank 0 saves a
 * checkpoint of the last step all ranks finished, within the grace period, so the next attempt loses nothing.
 * Every rank reports its progress, which the platform reads for hang detection and lost-work accounting.
 */
public final class Train {
    private final Map<String, String> env;
    private final PrintStream out;
    private final Slipstream slipstream;
    /** Set when the platform asks this instance to stop; the training loop stops at the next step. */
    private final AtomicBoolean stopping = new AtomicBoolean();
    /** Counted down once this rank has saved what it saves on a stop (or has nothing to save). */
    private final CountDownLatch released = new CountDownLatch(1);

    private Train(Map<String, String> env, PrintStream out) {
        this.env = env;
        this.out = out;
        this.slipstream = Slipstream.of(env);
    }

    /** Runs one rank; returns its exit code. */
    public static int run(Map<String, String> env, PrintStream out, PrintStream err) {
        try {
            new Train(env, out).train();
            return 0;
        } catch (IllegalArgumentException e) {
            err.println("train: " + e.getMessage());
            return 2;
        } catch (IOException e) {
            err.println("train: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("train: interrupted");
            return 130;
        }
    }

    private void train() throws IOException, InterruptedException {
        try {
            trainUntilDoneOrStopped();
        } finally {
            released.countDown();
        }
    }

    private void trainUntilDoneOrStopped() throws IOException, InterruptedException {
        TrainingConfig config = TrainingConfig.from(env);
        if (env.get("SLIPSTREAM_PREEMPTION_NOTICE_FILE") != null) {
            slipstream.preemption().onStop(this::stopAndWaitForTheCheckpoint);
        }
        ClusterMetadata metadata = metadata();
        int rank = Integer.parseInt(env.getOrDefault("SLIPSTREAM_RANK", "0"));
        int world = metadata.worldSize();
        ClusterMetadata.Instance me = metadata.instances().get(rank);
        ClusterMetadata.Instance next = metadata.instances().get((rank + 1) % world);
        Mlp model = new Mlp(TrainingConfig.INPUTS, config.hidden(), TrainingConfig.CLASSES);
        SyntheticData data = new SyntheticData(config.seed());
        Checkpoints checkpoints = env.get("SLIPSTREAM_CHECKPOINT_DIR") == null ? null : new Checkpoints(slipstream.checkpoints(3));
        boolean checkpointOnStop = !"false".equals(env.get("CHECKPOINT_ON_STOP"));

        try (RingAllReduce ring = new RingAllReduce(rank, world, InetAddress.getByName(me.ip()), me.ports().get(0))) {
            markListening(metadata.attempt(), rank);
            double[] parameters = model.initialParameters(config.seed());
            long start = 0;
            Optional<Checkpoints.Checkpoint> checkpoint = checkpoints == null ? Optional.empty() : checkpoints.latest(model.size());
            if (checkpoint.isPresent()) {
                parameters = checkpoint.get().parameters();
                start = checkpoint.get().step();
                out.println("rank " + rank + " resumes from the checkpoint of step " + start);
            }
            ring.connect(next.ip(), next.ports().get(0), Duration.ofMinutes(5));
            double[] agreed = {start};
            ring.sum(agreed);
            if (agreed[0] != (double) start * world) {
                throw new IOException("ranks disagree on the step to resume from (rank " + rank + " has " + start + ")");
            }
            out.printf(Locale.ROOT, "rank %d of %d: %d parameters, steps %d..%d, batch %d per rank%n", rank, world, model.size(), start + 1,
                    config.steps(), config.batch());

            double[] gradient = new double[model.size() + 1]; // the last element carries the loss
            double[] x = new double[TrainingConfig.INPUTS];
            double[] hidden = new double[config.hidden()];
            double[] scores = new double[TrainingConfig.CLASSES];
            double firstLoss = Double.NaN;
            double lastLoss = Double.NaN;
            long completed = start; // the last step whose update is in parameters
            long lastSaved = start;
            for (long step = start + 1; step <= config.steps() && !stopping.get(); step++) {
                java.util.Arrays.fill(gradient, 0);
                double loss = 0;
                for (int i = 0; i < config.batch(); i++) {
                    int label = data.sample(step, rank, i, x);
                    loss += model.accumulate(parameters, x, label, gradient, hidden, scores);
                }
                gradient[model.size()] = loss;
                try {
                    ring.sum(gradient);
                } catch (IOException e) {
                    if (stopping.get() || slipstream.preemption().notice().isPresent()) {
                        stopping.set(true);
                        break; // a peer stopped first: this step is not finished anywhere it matters
                    }
                    throw new IOException("lost a peer in the all-reduce of step " + step + ": " + e, e);
                }
                double scale = 1.0 / ((double) config.batch() * world);
                for (int p = 0; p < parameters.length; p++) {
                    parameters[p] -= config.learningRate() * gradient[p] * scale;
                }
                lastLoss = gradient[model.size()] * scale;
                if (Double.isNaN(firstLoss)) {
                    firstLoss = lastLoss;
                }
                if (rank == 0 && (step % config.logEvery() == 0 || step == start + 1 || step == config.steps())) {
                    out.printf(Locale.ROOT, "step %d/%d loss %.6f%n", step, config.steps(), lastLoss);
                }
                completed = step;
                slipstream.progress().report(step, Map.of("loss", lastLoss));
                if (rank == 0 && checkpoints != null && config.checkpointEvery() > 0 && step % config.checkpointEvery() == 0) {
                    checkpoints.save(step, parameters);
                    lastSaved = step;
                }
            }
            if (stopping.get()) {
                if (rank == 0 && checkpoints != null && checkpointOnStop && completed > lastSaved) {
                    long began = System.nanoTime();
                    checkpoints.save(completed, parameters);
                    out.printf(Locale.ROOT, "rank 0 saved the checkpoint of step %d on the stop notice in %.1f ms%n", completed,
                            (System.nanoTime() - began) / 1e6);
                } else if (rank == 0 && checkpoints != null && completed == lastSaved && completed > 0) {
                    // The notice came between the periodic checkpoint of this step and the next step: nothing to save.
                    out.println("rank 0 stops after step " + completed + ", whose checkpoint is already saved");
                } else {
                    out.println("rank " + rank + " stops after step " + completed);
                }
                out.flush();
                return;
            }
            String digest = sha256(parameters);
            String statistics = ring.statistics(gradient.length);
            int benchmarkMegabytes = Integer.parseInt(env.getOrDefault("BENCHMARK_MB", "16"));
            String benchmark = benchmarkMegabytes > 0 && world > 1 ? ring.benchmark(benchmarkMegabytes, 5) : null;
            if (rank == 0) {
                Path weights = saveWeights(metadata.runId(), parameters);
                out.println("saved the weights to " + weights);
                out.println(statistics);
                if (benchmark != null) {
                    out.println(benchmark);
                }
                out.printf(Locale.ROOT, "loss first %.6f last %.6f%n", firstLoss, lastLoss);
            }
            out.println("final weights sha256=" + digest);
        }
    }

    /** Runs on the shutdown hook (SIGTERM): stop training, and wait, until the deadline, for rank 0's checkpoint. */
    private void stopAndWaitForTheCheckpoint(Preemption.Notice notice) {
        stopping.set(true);
        Duration wait = notice.deadline() == null ? Duration.ofSeconds(10)
                : Duration.between(java.time.Instant.now(), notice.deadline()).minusMillis(500);
        try {
            released.await(Math.max(0, wait.toMillis()), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private ClusterMetadata metadata() throws IOException {
        String file = env.get("SLIPSTREAM_METADATA_FILE");
        if (file == null) {
            // Outside Slipstream: one rank on its own.
            var self = new ClusterMetadata.Instance("local-0", "local", 0, 0, "local", "localhost", "localhost", "127.0.0.1", java.util.List.of(0), true);
            return new ClusterMetadata(ClusterMetadata.FORMAT_VERSION, "local", "local", "local", 1, 1, "InParallel",
                    new ClusterMetadata.Address("127.0.0.1", 0), java.util.List.of(self), java.util.List.of());
        }
        return ClusterMetadata.read(Path.of(file));
    }

    /** Tells the startup probe (see job.yaml) that this rank accepts connections. */
    private void markListening(int attempt, int rank) throws IOException {
        String shared = env.get("SLIPSTREAM_SHARED_DIR");
        if (shared != null) {
            Files.writeString(Path.of(shared, "listening-" + attempt + "-" + rank), "");
        }
    }

    private Path saveWeights(String runId, double[] parameters) throws IOException {
        String dir = env.getOrDefault("SLIPSTREAM_STORAGE_OUTPUT", env.getOrDefault("SLIPSTREAM_SHARED_DIR", "."));
        Path target = Path.of(dir, "weights-" + runId + ".bin");
        Path temporary = Path.of(dir, ".weights-" + runId + ".tmp");
        Files.write(temporary, bytes(parameters));
        Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return target;
    }

    private static byte[] bytes(double[] values) {
        ByteBuffer buffer = ByteBuffer.allocate(values.length * Double.BYTES);
        for (double value : values) {
            buffer.putDouble(value);
        }
        return buffer.array();
    }

    static String sha256(double[] values) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes(values)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
