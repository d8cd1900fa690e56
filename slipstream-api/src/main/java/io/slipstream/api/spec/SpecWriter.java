package io.slipstream.api.spec;

import io.slipstream.api.codec.Json;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Writes documents back in the form users write them (quantities as {@code "64Gi"}), readable by {@link SpecReader}.
 * A Secret is never written: its values exist in clear only in memory (the server stores them encrypted, and shows
 * them as {@code ***}).
 */
public final class SpecWriter {
    private SpecWriter() {
    }

    public static ObjectNode write(Document<?> document) {
        ObjectNode root = Json.mapper().createObjectNode();
        root.put("apiVersion", Document.API_VERSION);
        root.put("kind", document.kind().name());
        ObjectNode metadata = root.putObject("metadata");
        metadata.put("name", document.name());
        if (document.workspace() != null) {
            metadata.put("workspace", document.workspace());
        }
        if (document.metadata().version() != null) {
            metadata.put("version", document.metadata().version());
        }
        root.set("spec", writeSpec(document.spec()));
        return root;
    }

    public static ObjectNode writeSpec(Spec spec) {
        ObjectNode node = Json.mapper().createObjectNode();
        if (spec instanceof SecretSpec) {
            throw new IllegalArgumentException("a Secret is never written as a document: its values stay encrypted");
        }
        if (spec instanceof WorkspaceSpec workspace) {
            ArrayNode members = node.putArray("members");
            workspace.members().forEach(members::add);
        } else if (spec instanceof ShapeSpec shape) {
            writeResources(node, shape.resources());
        } else if (spec instanceof QuotaSpec quota) {
            node.put("type", quota.type().name());
            if (quota.min().gpuModel() != null) {
                node.put("gpuModel", quota.min().gpuModel());
            }
            writeResources(node.putObject("min"), new Resources(quota.min().milliCpu(), quota.min().memoryBytes(), quota.min().gpu(), null));
            if (quota.max() != null) {
                ObjectNode max = node.putObject("max");
                if (quota.max().milliCpu() != Long.MAX_VALUE) {
                    max.put("cpu", Quantities.formatMilliCpu(quota.max().milliCpu()));
                }
                if (quota.max().memoryBytes() != Long.MAX_VALUE) {
                    max.put("memory", Quantities.formatBytes(quota.max().memoryBytes()));
                }
                if (quota.max().gpu() != QuotaSpec.UNCAPPED) {
                    max.put("gpu", quota.max().gpu());
                }
            }
            if (quota.parent() != null) {
                node.put("parent", quota.parent());
            }
            if (quota.overcommit()) {
                node.put("overcommit", true);
            }
            if (quota.withinQuota() != WithinQuota.Never) {
                node.put("withinQuota", quota.withinQuota().name());
            }
        } else if (spec instanceof JobSpec job) {
            node.put("priority", job.priority());
            if (job.quota() != null) {
                node.put("quota", job.quota());
            }
            node.put("idleResources", job.idleResources().name());
            if (job.preemptionGracePeriod() != null) {
                node.put("preemptionGracePeriod", Durations.format(job.preemptionGracePeriod()));
            }
            if (job.maxRuntime() != null) {
                node.put("maxRuntime", Durations.format(job.maxRuntime()));
            }
            if (job.maxRuntimePerAttempt()) {
                node.put("maxRuntimePerAttempt", true);
            }
            if (job.schedule() != null) {
                ObjectNode schedule = node.putObject("schedule");
                schedule.put("cron", job.schedule().cron());
                schedule.put("timeZone", job.schedule().timeZone().getId());
                schedule.put("concurrencyPolicy", job.schedule().concurrencyPolicy().name());
                if (job.schedule().startingDeadline() != null) {
                    schedule.put("startingDeadline", Durations.format(job.schedule().startingDeadline()));
                }
                if (job.schedule().suspend()) {
                    schedule.put("suspend", true);
                }
            }
            if (job.startupOrder() != StartupOrder.InParallel) {
                node.put("startupOrder", job.startupOrder().name());
            }
            if (!job.storage().isEmpty()) {
                ArrayNode storage = node.putArray("storage");
                for (StorageSpec item : job.storage()) {
                    ObjectNode entry = storage.addObject();
                    entry.put("name", item.name());
                    entry.put("scope", item.scope().name());
                    if (item.subPath() != null) {
                        entry.put("subPath", item.subPath());
                    }
                    if (item.mountPath() != null) {
                        entry.put("mountPath", item.mountPath());
                    }
                }
            }
            if (!job.faultTolerance().equals(FaultTolerance.DEFAULT)) {
                writeFaultTolerance(node.putObject("faultTolerance"), job.faultTolerance());
            }
            ArrayNode groups = node.putArray("nodeGroups");
            job.nodeGroups().forEach(group -> writeNodeGroup(groups.addObject(), group));
        }
        return node;
    }

    private static void writeFaultTolerance(ObjectNode node, FaultTolerance policy) {
        node.put("runType", policy.runType().name());
        node.put("maxRestarts", policy.maxRestarts());
        if (policy.maxPreemptions() != null) {
            node.put("maxPreemptions", policy.maxPreemptions());
        }
        node.put("maxNodeLostRestarts", policy.maxNodeLost());
        node.put("maxHangRestarts", policy.maxHangs());
        ObjectNode backoff = node.putObject("backoff");
        backoff.put("base", Durations.format(policy.backoffBase()));
        backoff.put("cap", Durations.format(policy.backoffCap()));
        if (!policy.retryExitCodes().isEmpty() || !policy.retryPatterns().isEmpty()) {
            ObjectNode retryOn = node.putObject("retryOn");
            if (!policy.retryExitCodes().isEmpty()) {
                ArrayNode codes = retryOn.putArray("exitCodes");
                policy.retryExitCodes().forEach(range -> {
                    if (range.from() == range.to()) {
                        codes.add(range.from());
                    } else {
                        codes.add(range.toString());
                    }
                });
            }
            if (!policy.retryPatterns().isEmpty()) {
                ArrayNode patterns = retryOn.putArray("errorPatterns");
                policy.retryPatterns().forEach(patterns::add);
            }
        }
        node.put("otherFailures", policy.otherFailures().name());
        if (policy.sameErrorLimit() > 0) {
            node.put("sameErrorLimit", policy.sameErrorLimit());
        }
        if (policy.hangTimeout() != null) {
            node.put("hangTimeout", Durations.format(policy.hangTimeout()));
        }
        if (policy.exitHangTimeout() != null) {
            node.put("exitHangTimeout", Durations.format(policy.exitHangTimeout()));
        }
    }

    private static void writeNodeGroup(ObjectNode node, NodeGroupSpec group) {
        node.put("name", group.name());
        node.put("replicas", group.replicas());
        if (group.shape() != null) {
            node.put("shape", group.shape());
        }
        if (group.resources() != null) {
            writeResources(node.putObject("resources"), group.resources());
        }
        ArrayNode command = node.putArray("command");
        group.command().forEach(command::add);
        if (!group.env().isEmpty() || !group.secretEnv().isEmpty()) {
            ObjectNode env = node.putObject("env");
            java.util.SortedMap<String, Object> all = new java.util.TreeMap<>(group.env());
            all.putAll(group.secretEnv());
            all.forEach((name, value) -> {
                if (value instanceof SecretRef ref) {
                    env.putObject(name).put("secretRef", ref.toString());
                } else {
                    env.put(name, (String) value);
                }
            });
        }
        if (!group.secrets().isEmpty()) {
            ArrayNode secrets = node.putArray("secrets");
            for (SecretMount mount : group.secrets()) {
                ObjectNode entry = secrets.addObject();
                entry.put("name", mount.name());
                if (mount.mountPath() != null) {
                    entry.put("mountPath", mount.mountPath());
                }
            }
        }
        if (group.image() != null) {
            node.put("image", group.image());
        }
        if (group.workingDir() != null) {
            node.put("workingDir", group.workingDir());
        }
        if (group.maxRuntime() != null) {
            node.put("maxRuntime", Durations.format(group.maxRuntime()));
        }
        if (group.minSuccessReplicas() != null) {
            node.put("minSuccessReplicas", group.minSuccessReplicas());
        }
        if (group.startupProbe() != null) {
            ObjectNode probe = node.putObject("startupProbe");
            ArrayNode probeCommand = probe.putArray("command");
            group.startupProbe().command().forEach(probeCommand::add);
            probe.put("periodSeconds", group.startupProbe().periodSeconds());
            probe.put("failureThreshold", group.startupProbe().failureThreshold());
            probe.put("initialDelaySeconds", group.startupProbe().initialDelaySeconds());
        }
        if (group.ports() != 1) {
            node.put("ports", group.ports());
        }
    }

    private static void writeResources(ObjectNode node, Resources resources) {
        if (resources.milliCpu() % 1000 == 0) {
            node.put("cpu", resources.milliCpu() / 1000);
        } else {
            node.put("cpu", Quantities.formatMilliCpu(resources.milliCpu()));
        }
        node.put("memory", Quantities.formatBytes(resources.memoryBytes()));
        node.put("gpu", resources.gpu());
        if (resources.gpuModel() != null) {
            node.put("gpuModel", resources.gpuModel());
        }
    }
}
