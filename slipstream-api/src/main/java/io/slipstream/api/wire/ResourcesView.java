package io.slipstream.api.wire;

import io.slipstream.api.spec.Quantities;
import io.slipstream.api.spec.Resources;

/** Resources on the wire, in the units users write ({@code cpu: "32"}, {@code memory: "256Gi"}). */
public record ResourcesView(String cpu, String memory, int gpu, String gpuModel) {
    public static ResourcesView of(Resources resources) {
        return new ResourcesView(Quantities.formatMilliCpu(resources.milliCpu()), Quantities.formatBytes(resources.memoryBytes()),
                resources.gpu(), resources.gpuModel());
    }
}
