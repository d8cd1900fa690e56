package io.slipstream.examples.training;

import java.util.SplittableRandom;

/**
 * A classification problem made up from a seed: inputs are standard normal, the label is the class a fixed random
 * linear "teacher" scores highest. A sample is a pure function of (seed, step, rank, index), so a run that resumes
 * from a checkpoint sees exactly the batches an uninterrupted run would have seen.
 */
final class SyntheticData {
    private final long seed;
    private final double[][] teacher = new double[TrainingConfig.CLASSES][TrainingConfig.INPUTS];

    SyntheticData(long seed) {
        this.seed = seed;
        SplittableRandom random = new SplittableRandom(seed ^ 0x5DEECE66DL);
        for (double[] row : teacher) {
            for (int i = 0; i < row.length; i++) {
                row[i] = random.nextDouble(-1, 1);
            }
        }
    }

    /** Fills {@code x} with the sample's inputs and returns its label. */
    int sample(long step, int rank, int index, double[] x) {
        SplittableRandom random = new SplittableRandom(mix(seed, step, rank, index));
        for (int i = 0; i < x.length; i++) {
            x[i] = gaussian(random);
        }
        int best = 0;
        double bestScore = Double.NEGATIVE_INFINITY;
        for (int c = 0; c < teacher.length; c++) {
            double score = 0;
            for (int i = 0; i < x.length; i++) {
                score += teacher[c][i] * x[i];
            }
            if (score > bestScore) {
                bestScore = score;
                best = c;
            }
        }
        return best;
    }

    /** Box-Muller with StrictMath: the same numbers on every JVM. */
    private static double gaussian(SplittableRandom random) {
        double u = 1 - random.nextDouble();
        double v = random.nextDouble();
        return StrictMath.sqrt(-2 * StrictMath.log(u)) * StrictMath.cos(2 * StrictMath.PI * v);
    }

    private static long mix(long seed, long step, int rank, int index) {
        long h = seed * 0x9E3779B97F4A7C15L;
        h = (h ^ step) * 0xBF58476D1CE4E5B9L;
        h = (h ^ rank) * 0x94D049BB133111EBL;
        h = (h ^ index) * 0x9E3779B97F4A7C15L;
        return h ^ (h >>> 31);
    }
}
