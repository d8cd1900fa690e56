package io.slipstream.api.spec;

import java.util.Objects;

/**
 * An amount of compute: millicores, bytes of memory, whole GPUs, and optionally the GPU model it needs or has
 * ({@code null}: any model).
 */
public record Resources(long milliCpu, long memoryBytes, int gpu, String gpuModel) {
    public static final Resources NONE = new Resources(0, 0, 0, null);

    public Resources {
        if (milliCpu < 0 || memoryBytes < 0 || gpu < 0) {
            throw new IllegalArgumentException("resources must not be negative: " + milliCpu + "m, " + memoryBytes + "B, " + gpu);
        }
    }

    public Resources plus(Resources other) {
        return new Resources(Math.addExact(milliCpu, other.milliCpu), Math.addExact(memoryBytes, other.memoryBytes),
                Math.addExact(gpu, other.gpu), gpuModel);
    }

    /** This minus {@code other}, dimension by dimension (never below zero). */
    public Resources minus(Resources other) {
        return new Resources(Math.max(0, milliCpu - other.milliCpu), Math.max(0, memoryBytes - other.memoryBytes),
                Math.max(0, gpu - other.gpu), gpuModel);
    }

    public Resources times(int factor) {
        return new Resources(Math.multiplyExact(milliCpu, factor), Math.multiplyExact(memoryBytes, factor),
                Math.multiplyExact(gpu, factor), gpuModel);
    }

    /** Whether every dimension of {@code other} is at most this one's (models are not compared). */
    public boolean covers(Resources other) {
        return milliCpu >= other.milliCpu && memoryBytes >= other.memoryBytes && gpu >= other.gpu;
    }

    // Written out, not left to the record, as QuotaId's: requests are map keys in every scheduling pass. The same values
    // as the record's own.
    @Override
    public boolean equals(Object other) {
        return other == this || other instanceof Resources r && milliCpu == r.milliCpu && memoryBytes == r.memoryBytes && gpu == r.gpu
                && Objects.equals(gpuModel, r.gpuModel);
    }

    @Override
    public int hashCode() {
        return ((Long.hashCode(milliCpu) * 31 + Long.hashCode(memoryBytes)) * 31 + gpu) * 31 + Objects.hashCode(gpuModel);
    }

    @Override
    public String toString() {
        return "cpu=" + Quantities.formatMilliCpu(milliCpu) + " memory=" + Quantities.formatBytes(memoryBytes)
                + " gpu=" + gpu + (gpuModel == null ? "" : " gpuModel=" + gpuModel);
    }
}
