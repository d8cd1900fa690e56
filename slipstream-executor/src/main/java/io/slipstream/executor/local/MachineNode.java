package io.slipstream.executor.local;

import io.slipstream.api.spec.Resources;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.process.ProcFs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Describes this machine as one node ({@code nodes: auto}): its CPUs, memory, and NVIDIA GPUs found with nvidia-smi. */
public final class MachineNode {
    /** One GPU as nvidia-smi lists it. */
    public record Gpu(int index, String uuid, String name) {
    }

    private MachineNode() {
    }

    public static NodeInfo detect() {
        List<Gpu> gpus = nvidiaGpus();
        String model = gpus.isEmpty() ? null : modelName(gpus.get(0).name());
        Resources capacity = new Resources(Runtime.getRuntime().availableProcessors() * 1000L, totalMemory(), gpus.size(), model);
        return new NodeInfo(hostName(), capacity, gpus.stream().map(Gpu::uuid).toList(), Map.of("slipstream.io/machine", "local"));
    }

    /** The GPUs nvidia-smi reports, in its (PCI bus) order; empty if there is no nvidia-smi or it fails. */
    public static List<Gpu> nvidiaGpus() {
        try {
            Process process = new ProcessBuilder("nvidia-smi", "--query-gpu=index,uuid,name", "--format=csv,noheader")
                    .redirectErrorStream(true)
                    .start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                return List.of();
            }
            return parseNvidiaSmi(output);
        } catch (IOException e) {
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    static List<Gpu> parseNvidiaSmi(String output) {
        List<Gpu> gpus = new ArrayList<>();
        for (String line : output.split("\n")) {
            String[] fields = line.split(",");
            if (fields.length >= 3 && fields[0].trim().matches("\\d+")) {
                gpus.add(new Gpu(Integer.parseInt(fields[0].trim()), fields[1].trim(), fields[2].trim()));
            }
        }
        return gpus;
    }

    /** {@code "NVIDIA H200"} becomes {@code nvidia-h200}: GPU models are matched by name in specs. */
    static String modelName(String name) {
        String model = name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("(^-+|-+$)", "");
        return model.isEmpty() ? "gpu" : model;
    }

    private static long totalMemory() {
        return ProcFs.memTotal().orElse(Runtime.getRuntime().maxMemory());
    }

    private static String hostName() {
        String name;
        try {
            name = java.net.InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            name = "localhost";
        }
        String label = name.toLowerCase(Locale.ROOT).split("\\.")[0].replaceAll("[^a-z0-9-]", "-").replaceAll("(^-+|-+$)", "");
        return label.isEmpty() ? "local" : label.substring(0, Math.min(63, label.length()));
    }
}
