package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.Activity;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Instances' logs and the activity they show, served from the local copies of {@link LogSpool}: each read copies
 * what is new first, and serves what was copied before when the API server cannot be asked. A pod has one log per
 * container, stdout and stderr together: it is served as stdout, and stderr is empty.
 */
final class PodLogs {
    private static final Logger LOG = LoggerFactory.getLogger(PodLogs.class);

    private final KubernetesClient client;
    private final KubernetesConfig config;
    private final LogSpool spool;

    PodLogs(KubernetesClient client, KubernetesConfig config, LogSpool spool) {
        this.client = client;
        this.config = config;
        this.spool = spool;
    }

    Activity activity(Map<String, String> handle) {
        String pod = handle.get("pod");
        if (pod == null) {
            return Activity.NONE;
        }
        String namespace = PodHandles.namespace(handle, config);
        copyNewLines(namespace, pod);
        return new Activity(spool.lastOutputAt(namespace, pod), null);
    }

    LogChunk read(Map<String, String> handle, LogStream stream, long offset, int maxBytes) {
        String pod = handle.get("pod");
        if (pod == null || stream == LogStream.STDERR) {
            return new LogChunk(new byte[0], offset);
        }
        String namespace = PodHandles.namespace(handle, config);
        copyNewLines(namespace, pod);
        return spool.read(namespace, pod, offset, maxBytes);
    }

    LogChunk tail(Map<String, String> handle, LogStream stream, int maxBytes) {
        String pod = handle.get("pod");
        if (pod == null || stream == LogStream.STDERR) {
            return new LogChunk(new byte[0], 0);
        }
        String namespace = PodHandles.namespace(handle, config);
        copyNewLines(namespace, pod);
        return spool.tail(namespace, pod, maxBytes);
    }

    /** Copies an ended pod's last lines; its end is reported even when they cannot be copied. */
    void copyLastLines(TrackedInstance instance) {
        try {
            spool.sync(instance.namespace, instance.pod, true, true);
        } catch (ExecutorException e) {
            LOG.warn("the last log lines of pod {} were not copied: {}", instance.pod, e.getMessage());
        }
    }

    /** Deletes the copies of the logs of a run's pods in the namespace. */
    void forget(RunId runId, String namespace) {
        for (Pod pod : client.pods().inNamespace(namespace).withLabel(Names.RUN, Names.runKey(runId)).list().getItems()) {
            spool.delete(namespace, pod.getMetadata().getName());
        }
    }

    /** Copies what is new of a pod's log; if the API server cannot be asked, what was copied before is served. */
    private void copyNewLines(String namespace, String pod) {
        try {
            spool.sync(namespace, pod, false, false);
        } catch (ExecutorException e) {
            LOG.debug("log of {} not copied: {}", pod, e.getMessage());
        }
    }
}
