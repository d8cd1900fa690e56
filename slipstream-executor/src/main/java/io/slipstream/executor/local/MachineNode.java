package io.slipstream.executor.local;

import io.slipstream.api.spec.Resources;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.process.ProcFs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Describes this machine as one node ({@code nodes: auto}): its CPUs, memory, and NVIDIA GPUs found with nvidia-smi. */
public final class MachineNode {
    /** One GPU as nvidia-smi lists it, with its PCI bus id ({@code 00000000:17:00.0}; empty where not listed). */
    public record Gpu(int index, String uuid, String name, String busId) {
        public Gpu(int index, String uuid, String name) {
            this(index, uuid, name, "");
        }
    }

    private MachineNode() {
    }

    public static NodeInfo detect() {
        List<Gpu> gpus = nvidiaGpus();
        String model = gpus.isEmpty() ? null : modelName(gpus.get(0).name());
        Resources capacity = new Resources(Runtime.getRuntime().availableProcessors() * 1000L, totalMemory(), gpus.size(), model);
        return new NodeInfo(hostName(), capacity, gpus.stream().map(Gpu::uuid).toList(), Map.of("slipstream.io/machine", "local"),
                deviceNodes(gpus, MachineNode::driverInformation));
    }

    /**
     * Each GPU's device node, {@code /dev/nvidia<minor>} with the minor the driver gave the GPU at its bus id
     * ({@code /proc/driver/nvidia/gpus/<bus id>/information}, "Device Minor"): not the index, which need not match it.
     * Empty when any is unknown (nothing is fenced rather than the wrong device).
     */
    static List<String> deviceNodes(List<Gpu> gpus, java.util.function.Function<String, String> information) {
        List<String> devices = new ArrayList<>();
        for (Gpu gpu : gpus) {
            String text = gpu.busId().isEmpty() ? null : information.apply(gpu.busId());
            java.util.regex.Matcher minor = text == null ? null : java.util.regex.Pattern.compile("(?m)^Device Minor:\\s*(\\d+)\\s*$").matcher(text);
            if (minor == null || !minor.find()) {
                return List.of();
            }
            devices.add("/dev/nvidia" + minor.group(1));
        }
        return devices;
    }

    /** The driver's information on the GPU at {@code busId} ({@code 00000000:17:00.0}: the driver names it 0000:17:00.0), or null. */
    private static String driverInformation(String busId) {
        String id = busId.toLowerCase(Locale.ROOT);
        id = id.length() > 12 ? id.substring(id.length() - 12) : id;
        try {
            return Files.readString(Path.of("/proc/driver/nvidia/gpus", id, "information"));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The GPUs nvidia-smi reports, in its (PCI bus) order; empty if there is no nvidia-smi or it fails. */
    public static List<Gpu> nvidiaGpus() {
        try {
            Process process = new ProcessBuilder("nvidia-smi", "--query-gpu=index,uuid,name,pci.bus_id", "--format=csv,noheader")
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
                gpus.add(new Gpu(Integer.parseInt(fields[0].trim()), fields[1].trim(), fields[2].trim(), fields.length >= 4 ? fields[3].trim() : ""));
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
