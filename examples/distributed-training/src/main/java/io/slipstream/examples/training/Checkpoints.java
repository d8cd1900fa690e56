package io.slipstream.examples.training;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Optional;

/** The model's parameters as checkpoints of the SDK (atomic, checksummed, the newest few kept). */
final class Checkpoints {
    record Checkpoint(long step, double[] parameters) {
    }

    private final io.slipstream.sdk.Checkpoints store;

    Checkpoints(io.slipstream.sdk.Checkpoints store) {
        this.store = store;
    }

    void save(long step, double[] parameters) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(parameters.length * Double.BYTES);
        for (double value : parameters) {
            buffer.putDouble(value);
        }
        store.save(step, buffer.array());
    }

    /** The newest checkpoint that reads back whole and fits a model of {@code expectedLength} parameters, if any. */
    Optional<Checkpoint> latest(int expectedLength) throws IOException {
        Optional<io.slipstream.sdk.Checkpoints.Checkpoint> latest = store.latest();
        if (latest.isEmpty() || latest.get().data().length != expectedLength * Double.BYTES) {
            return Optional.empty();
        }
        ByteBuffer buffer = ByteBuffer.wrap(latest.get().data());
        double[] parameters = new double[expectedLength];
        for (int i = 0; i < expectedLength; i++) {
            parameters[i] = buffer.getDouble();
        }
        return Optional.of(new Checkpoint(latest.get().step(), parameters));
    }
}
