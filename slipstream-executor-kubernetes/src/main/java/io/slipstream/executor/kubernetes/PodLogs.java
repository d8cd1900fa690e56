package io.slipstream.executor.kubernetes;

import io.slipstream.api.run.RunId;
import io.slipstream.executor.Activity;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import java.util.Map;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Instances' logs and the activity they show, served from the local copies of {@link LogSpool}: each read copies
 * what is new first, and serves what was copied before when the API server cannot be asked. A pod has one log per
 * container, stdout and stderr together: it is served as stdout, and stderr is empty.
 */
final class PodLogs {
    private static final Logger LOG = LoggerFactory.getLogger(PodLogs.class);

    private final KubernetesConfig config;
    private final LogSpool spool;

    PodLogs(KubernetesConfig config, LogSpool spool) {
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
        copyLastLines(instance.namespace, instance.pod);
    }

    /** Copies an ended pod's last lines; false (and a warning) when they cannot be copied now. */
    boolean copyLastLines(String namespace, String pod) {
        try {
            spool.sync(namespace, pod, true, true);
            return true;
        } catch (ExecutorException e) {
            LOG.warn("the last log lines of pod {} were not copied: {}", pod, e.getMessage());
            return false;
        }
    }

    /**
     * Deletes the copies of the logs of a run's pods in the namespace, by their names: the pods of stopped instances and
     * of launches before a restart in place are gone already.
     */
    void forget(RunId runId, String namespace) {
        Pattern ofRun = Pattern.compile(Pattern.quote("ss-" + Names.runKey(runId) + "-") + "\\d+-\\d+(-r\\d+)?");
        spool.deleteAll(namespace, pod -> ofRun.matcher(pod).matches());
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
