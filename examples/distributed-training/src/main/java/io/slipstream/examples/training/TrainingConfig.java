package io.slipstream.examples.training;

import java.util.Map;

/**
 * The knobs of a training run, from the environment (set them in the job's env, or per run with
 * {@code --set nodeGroups.worker.env.STEPS=500}). Every rank must see the same values.
 *
 * @param steps           optimizer steps in all
 * @param checkpointEvery save a checkpoint every this many steps (0: never)
 * @param batch           samples per rank and step
 * @param hidden          width of the hidden layer
 */
record TrainingConfig(long seed, int steps, int checkpointEvery, int batch, int hidden, double learningRate, int logEvery) {
    static final int INPUTS = 64;
    static final int CLASSES = 10;

    static TrainingConfig from(Map<String, String> env) {
        return new TrainingConfig(
                number(env, "SEED", 42, 0, Long.MAX_VALUE),
                (int) number(env, "STEPS", 1500, 1, 10_000_000),
                (int) number(env, "CHECKPOINT_EVERY", 200, 0, 10_000_000),
                (int) number(env, "BATCH", 32, 1, 100_000),
                (int) number(env, "HIDDEN", 1024, 1, 100_000),
                Double.parseDouble(env.getOrDefault("LEARNING_RATE", "0.2")),
                (int) number(env, "LOG_EVERY", 100, 1, 10_000_000));
    }

    private static long number(Map<String, String> env, String name, long fallback, long min, long max) {
        String text = env.get(name);
        if (text == null || text.isBlank()) {
            return fallback;
        }
        long value;
        try {
            value = Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number (is '" + text + "')");
        }
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be between " + min + " and " + max + " (is " + value + ")");
        }
        return value;
    }
}
