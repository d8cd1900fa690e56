package io.slipstream.examples.training;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Rings of real sockets on the loopback, one thread per rank. */
class RingAllReduceTest {
    private static int freePort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** Every rank's result of summing {@code vectors[rank]} over a ring of {@code vectors.length}. */
    private static double[][] allReduce(double[][] vectors) throws Exception {
        int size = vectors.length;
        int[] ports = new int[size];
        for (int i = 0; i < size; i++) {
            ports[i] = freePort();
        }
        ExecutorService pool = Executors.newFixedThreadPool(size);
        try {
            List<Future<double[]>> results = new ArrayList<>();
            for (int rank = 0; rank < size; rank++) {
                int r = rank;
                results.add(pool.submit(() -> {
                    try (RingAllReduce ring = new RingAllReduce(r, size, InetAddress.getLoopbackAddress(), ports[r])) {
                        ring.connect("127.0.0.1", ports[(r + 1) % size], Duration.ofSeconds(30));
                        double[] data = vectors[r].clone();
                        ring.sum(data);
                        return data;
                    }
                }));
            }
            double[][] out = new double[size][];
            for (int rank = 0; rank < size; rank++) {
                out[rank] = results.get(rank).get();
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void everyRankGetsTheSumAlsoWhenTheVectorDoesNotSplitEvenly() throws Exception {
        for (int size : new int[] {1, 2, 3, 5}) {
            int length = 7 + size; // chunks of different lengths, some possibly empty
            double[][] vectors = new double[size][length];
            double[] expected = new double[length];
            for (int rank = 0; rank < size; rank++) {
                for (int i = 0; i < length; i++) {
                    vectors[rank][i] = rank * 100 + i;
                    expected[i] += vectors[rank][i];
                }
            }
            for (double[] result : allReduce(vectors)) {
                assertThat(result).as("ring of %d", size).containsExactly(expected);
            }
        }
    }

    @Test
    void theSameInputsGiveTheSameBitsOnEveryRankAndEveryRun() throws Exception {
        double[][] vectors = new double[4][1000];
        java.util.SplittableRandom random = new java.util.SplittableRandom(7);
        for (double[] vector : vectors) {
            for (int i = 0; i < vector.length; i++) {
                vector[i] = random.nextDouble(-1e6, 1e6) * Math.pow(10, random.nextInt(-8, 8)); // rounding differs by order
            }
        }
        double[][] first = allReduce(vectors);
        double[][] second = allReduce(vectors);
        for (int rank = 0; rank < 4; rank++) {
            assertThat(first[rank]).containsExactly(first[0]);
            assertThat(second[rank]).containsExactly(first[0]);
        }
    }
}
