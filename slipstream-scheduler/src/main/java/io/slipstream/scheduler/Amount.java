package io.slipstream.scheduler;

import io.slipstream.api.spec.Resources;

/** A mutable amount of cpu (milli), memory (bytes) and GPUs, for the ledger's running sums. Not thread-safe. */
final class Amount {
    long milliCpu;
    long memory;
    long gpu;

    Amount() {
    }

    Amount(Resources resources) {
        add(resources, 1);
    }

    void add(Resources resources, int sign) {
        milliCpu = plus(milliCpu, sign * resources.milliCpu());
        memory = plus(memory, sign * resources.memoryBytes());
        gpu = plus(gpu, sign * (long) resources.gpu());
    }

    void add(Amount other, int sign) {
        milliCpu = plus(milliCpu, sign * other.milliCpu);
        memory = plus(memory, sign * other.memory);
        gpu = plus(gpu, sign * other.gpu);
    }

    /** Saturates instead of wrapping: overcommitted guarantees may add up to more than a long holds. */
    static long plus(long a, long b) {
        long sum = a + b;
        if (((a ^ sum) & (b ^ sum)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return sum;
    }

    /** Whether {@code this + extra <= limit} in every dimension. */
    boolean fitsWithin(Resources extra, Amount limit) {
        return milliCpu + extra.milliCpu() <= limit.milliCpu && memory + extra.memoryBytes() <= limit.memory && gpu + extra.gpu() <= limit.gpu;
    }

    Amount copy() {
        Amount copy = new Amount();
        copy.add(this, 1);
        return copy;
    }

    /** Makes this amount equal to {@code other}. */
    void setTo(Amount other) {
        milliCpu = other.milliCpu;
        memory = other.memory;
        gpu = other.gpu;
    }

    void clampAtZero() {
        milliCpu = Math.max(0, milliCpu);
        memory = Math.max(0, memory);
        gpu = Math.max(0, gpu);
    }

    /** As resources (no model); negative parts are zero, GPUs beyond an int are capped. */
    Resources toResources() {
        return new Resources(Math.max(0, milliCpu), Math.max(0, memory), (int) Math.max(0, Math.min(Integer.MAX_VALUE, gpu)), null);
    }

    /** Every part as it is, negative or beyond an int included (tests compare states by it). */
    String exact() {
        return milliCpu + "m/" + memory + "B/" + gpu + "gpu";
    }

    @Override
    public String toString() {
        return new Resources(Math.max(0, milliCpu), Math.max(0, memory), (int) Math.max(0, Math.min(Integer.MAX_VALUE, gpu)), null).toString();
    }
}
