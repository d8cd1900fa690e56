package io.slipstream.examples.training;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.DoubleBuffer;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Sums a vector across all ranks over TCP, the way NCCL and Horovod do: every rank talks only to its neighbours in a
 * ring (it receives from rank - 1 and sends to rank + 1); the vector is cut into one chunk per rank; a reduce-scatter
 * of n - 1 steps leaves every rank with one chunk fully summed, an all-gather of n - 1 steps hands the sums around.
 * Each rank sends 2 (n - 1) / n of the vector, whatever n is. Every chunk is summed in the same order on every run
 * with the same number of ranks, so results are bit-identical from run to run.
 */
final class RingAllReduce implements AutoCloseable {
    private final int rank;
    private final int size;
    private final ServerSocket server;
    private Socket toNext;
    private Socket fromPrevious;
    private DataOutputStream out;
    private DataInputStream in;
    private final ExecutorService sender = Executors.newSingleThreadExecutor(r -> {
        Thread thread = new Thread(r, "ring-sender");
        thread.setDaemon(true);
        return thread;
    });
    private long bytes;
    private long nanos;
    private long calls;

    /** Listens on this rank's port at once, so the platform's startup probe can tell it is ready to be connected to. */
    RingAllReduce(int rank, int size, InetAddress address, int port) throws IOException {
        this.rank = rank;
        this.size = size;
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(address, port), size);
    }

    /** Connects to the next rank (retrying while it starts) and accepts the previous one. */
    void connect(String nextHost, int nextPort, Duration timeout) throws IOException, InterruptedException {
        if (size == 1) {
            return;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        Future<Socket> accepted = sender.submit(server::accept);
        while (toNext == null) {
            try {
                Socket socket = new Socket();
                socket.connect(new InetSocketAddress(nextHost, nextPort), 1000);
                socket.setTcpNoDelay(true);
                toNext = socket;
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("rank " + rank + " could not reach rank " + ((rank + 1) % size) + " at " + nextHost + ":" + nextPort
                            + " within " + timeout.toSeconds() + "s", e);
                }
                Thread.sleep(100);
            }
        }
        try {
            fromPrevious = accepted.get();
        } catch (ExecutionException e) {
            throw new IOException("rank " + rank + " could not accept its previous rank", e.getCause());
        }
        fromPrevious.setTcpNoDelay(true);
        out = new DataOutputStream(new BufferedOutputStream(toNext.getOutputStream(), 1 << 16));
        in = new DataInputStream(new BufferedInputStream(fromPrevious.getInputStream(), 1 << 16));
    }

    /** Replaces {@code data} on every rank by its sum over all ranks. */
    void sum(double[] data) throws IOException {
        if (size == 1) {
            return;
        }
        long start = System.nanoTime();
        int[] bounds = new int[size + 1];
        for (int c = 0; c <= size; c++) {
            bounds[c] = (int) ((long) data.length * c / size);
        }
        for (int step = 0; step < size - 1; step++) { // reduce-scatter
            int send = Math.floorMod(rank - step, size);
            int receive = Math.floorMod(rank - step - 1, size);
            exchange(data, bounds[send], bounds[send + 1], bounds[receive], bounds[receive + 1], true);
        }
        for (int step = 0; step < size - 1; step++) { // all-gather
            int send = Math.floorMod(rank + 1 - step, size);
            int receive = Math.floorMod(rank - step, size);
            exchange(data, bounds[send], bounds[send + 1], bounds[receive], bounds[receive + 1], false);
        }
        nanos += System.nanoTime() - start;
        calls++;
    }

    /** Sends one chunk while receiving another (a separate thread sends, so big chunks cannot deadlock the ring). */
    private void exchange(double[] data, int sendFrom, int sendTo, int receiveFrom, int receiveTo, boolean add) throws IOException {
        ByteBuffer outgoing = ByteBuffer.allocate((sendTo - sendFrom) * Double.BYTES);
        outgoing.asDoubleBuffer().put(data, sendFrom, sendTo - sendFrom);
        Future<?> sent = sender.submit(() -> {
            out.write(outgoing.array());
            out.flush();
            return null;
        });
        byte[] incoming = new byte[(receiveTo - receiveFrom) * Double.BYTES];
        in.readFully(incoming);
        DoubleBuffer values = ByteBuffer.wrap(incoming).asDoubleBuffer();
        for (int i = receiveFrom; i < receiveTo; i++) {
            double value = values.get();
            data[i] = add ? data[i] + value : value;
        }
        try {
            sent.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } catch (ExecutionException e) {
            throw new IOException("sending to rank " + ((rank + 1) % size) + " failed", e.getCause());
        }
        bytes += outgoing.capacity();
    }

    /** Sums a vector of {@code megabytes} a few times and returns the rate, to compare machines and networks. */
    String benchmark(int megabytes, int rounds) throws IOException {
        double[] vector = new double[megabytes * 1_000_000 / Double.BYTES];
        java.util.Arrays.fill(vector, rank);
        sum(vector); // warm-up
        long start = System.nanoTime();
        for (int i = 0; i < rounds; i++) {
            sum(vector);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        return String.format(java.util.Locale.ROOT, "all-reduce benchmark: %d x %d MB across %d ranks in %.2f s: %.1f MB/s", rounds, megabytes,
                size, seconds, rounds * megabytes / seconds);
    }

    /**
     * Megabytes of the summed vectors per second spent in {@link #sum} during training (the "algorithm bandwidth"; it
     * includes waiting for the slowest rank's compute), and the bytes this rank sent.
     */
    String statistics(int vectorLength) {
        double seconds = nanos / 1e9;
        double megabytes = (double) calls * vectorLength * Double.BYTES / 1e6;
        return String.format(java.util.Locale.ROOT, "all-reduce: %d calls of %.2f MB in %.2f s: %.1f MB/s (sent %.1f MB per rank)",
                calls, vectorLength * Double.BYTES / 1e6, seconds, seconds == 0 ? 0 : megabytes / seconds, bytes / 1e6);
    }

    @Override
    public void close() throws IOException {
        sender.shutdownNow();
        for (AutoCloseable closeable : new AutoCloseable[] {toNext, fromPrevious, server}) {
            try {
                if (closeable != null) {
                    closeable.close();
                }
            } catch (Exception e) {
                // closing anyway
            }
        }
    }
}
