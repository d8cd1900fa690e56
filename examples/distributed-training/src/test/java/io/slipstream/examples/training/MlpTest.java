package io.slipstream.examples.training;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MlpTest {
    @Test
    void trainingIsDeterministicForASeed() {
        Mlp model = new Mlp(TrainingConfig.INPUTS, 16, TrainingConfig.CLASSES);
        SyntheticData data = new SyntheticData(3);
        double[] x = new double[TrainingConfig.INPUTS];
        double[] first = null;
        for (int round = 0; round < 2; round++) {
            double[] parameters = model.initialParameters(3);
            for (int step = 1; step <= 20; step++) {
                double[] gradient = new double[model.size()];
                for (int i = 0; i < 8; i++) {
                    int label = data.sample(step, 0, i, x);
                    model.accumulate(parameters, x, label, gradient, new double[16], new double[TrainingConfig.CLASSES]);
                }
                for (int p = 0; p < parameters.length; p++) {
                    parameters[p] -= 0.1 * gradient[p] / 8;
                }
            }
            if (first == null) {
                first = parameters;
            } else {
                assertThat(Train.sha256(parameters)).isEqualTo(Train.sha256(first));
            }
        }
    }

    @Test
    void aFewStepsOfGradientDescentLowerTheLoss() {
        Mlp model = new Mlp(TrainingConfig.INPUTS, 32, TrainingConfig.CLASSES);
        SyntheticData data = new SyntheticData(5);
        double[] x = new double[TrainingConfig.INPUTS];
        double[] parameters = model.initialParameters(5);
        double first = 0;
        double last = 0;
        for (int step = 1; step <= 200; step++) {
            double[] gradient = new double[model.size()];
            double loss = 0;
            for (int i = 0; i < 16; i++) {
                int label = data.sample(step, 0, i, x);
                loss += model.accumulate(parameters, x, label, gradient, new double[32], new double[TrainingConfig.CLASSES]);
            }
            for (int p = 0; p < parameters.length; p++) {
                parameters[p] -= 0.2 * gradient[p] / 16;
            }
            first = step == 1 ? loss / 16 : first;
            last = loss / 16;
        }
        assertThat(last).isLessThan(first / 2);
    }
}
