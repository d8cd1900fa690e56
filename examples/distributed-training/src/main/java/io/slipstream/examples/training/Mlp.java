package io.slipstream.examples.training;

import java.util.SplittableRandom;

/**
 * A one-hidden-layer network (tanh, then softmax) with all its parameters in one flat array, so that gradients travel
 * through the all-reduce as one vector. Only StrictMath is used: the same inputs give the same bits everywhere.
 */
final class Mlp {
    private final int inputs;
    private final int hidden;
    private final int classes;
    private final int w1;
    private final int b1;
    private final int w2;
    private final int b2;
    private final int size;

    Mlp(int inputs, int hidden, int classes) {
        this.inputs = inputs;
        this.hidden = hidden;
        this.classes = classes;
        this.w1 = 0;
        this.b1 = w1 + hidden * inputs;
        this.w2 = b1 + hidden;
        this.b2 = w2 + classes * hidden;
        this.size = b2 + classes;
    }

    int size() {
        return size;
    }

    double[] initialParameters(long seed) {
        double[] parameters = new double[size];
        SplittableRandom random = new SplittableRandom(seed);
        double scale1 = 1 / StrictMath.sqrt(inputs);
        double scale2 = 1 / StrictMath.sqrt(hidden);
        for (int i = w1; i < b1; i++) {
            parameters[i] = random.nextDouble(-scale1, scale1);
        }
        for (int i = w2; i < b2; i++) {
            parameters[i] = random.nextDouble(-scale2, scale2);
        }
        return parameters;
    }

    /**
     * Adds the gradient of the cross-entropy loss of one sample to {@code gradient} (same layout as the parameters)
     * and returns the loss.
     */
    double accumulate(double[] parameters, double[] x, int label, double[] gradient, double[] h, double[] z) {
        for (int j = 0; j < hidden; j++) {
            double sum = parameters[b1 + j];
            int row = w1 + j * inputs;
            for (int i = 0; i < inputs; i++) {
                sum += parameters[row + i] * x[i];
            }
            h[j] = StrictMath.tanh(sum);
        }
        double max = Double.NEGATIVE_INFINITY;
        for (int c = 0; c < classes; c++) {
            double sum = parameters[b2 + c];
            int row = w2 + c * hidden;
            for (int j = 0; j < hidden; j++) {
                sum += parameters[row + j] * h[j];
            }
            z[c] = sum;
            max = Math.max(max, sum);
        }
        double total = 0;
        for (int c = 0; c < classes; c++) {
            z[c] = StrictMath.exp(z[c] - max);
            total += z[c];
        }
        double loss = -StrictMath.log(z[label] / total);
        for (int c = 0; c < classes; c++) {
            double dz = z[c] / total - (c == label ? 1 : 0);
            gradient[b2 + c] += dz;
            int row = w2 + c * hidden;
            for (int j = 0; j < hidden; j++) {
                gradient[row + j] += dz * h[j];
            }
        }
        for (int j = 0; j < hidden; j++) {
            double dh = 0;
            for (int c = 0; c < classes; c++) {
                dh += parameters[w2 + c * hidden + j] * (z[c] / total - (c == label ? 1 : 0));
            }
            double da = dh * (1 - h[j] * h[j]);
            gradient[b1 + j] += da;
            int row = w1 + j * inputs;
            for (int i = 0; i < inputs; i++) {
                gradient[row + i] += da * x[i];
            }
        }
        return loss;
    }
}
