package io.slipstream.executor.kubernetes;

import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.InstanceReport;

/**
 * What the executor remembers of the newest launch of an instance it launched or adopted, to report each change once
 * (a restart in place is a new one, in place of the ended launch's). The pod's identity
 * ({@link #uid}, {@link #node}, {@link #probe}) is written by the launching or adopting thread and read by the watch.
 * What the instance went through changes under its own monitor (the methods below), so that each change is decided
 * once; it is volatile because the watch and the lost-node sweep also read it without the monitor.
 */
final class TrackedInstance {
    final InstanceId id;
    final String namespace;
    final String pod;
    /** Which launch of the instance this is (its restart in place; 0: the first): only its own pod's reports are its. */
    final int restart;
    volatile String uid;
    volatile String node;
    volatile boolean probe;
    private boolean ready;
    private boolean probeFailed;
    /** Its end as reported, once there is one. */
    volatile InstanceReport end;
    /** The grace period of the stop this executor asked for, in seconds; null while none was asked for. */
    volatile Long terminatingGrace;
    /** The last end its container was seen in: a pod deleted after it ended reports that exit. */
    volatile PodStatus.Ended lastEnded;

    TrackedInstance(InstanceId id, String namespace, String pod, int restart) {
        this.id = id;
        this.namespace = namespace;
        this.pod = pod;
        this.restart = restart;
    }

    /** Whether this is the first time its startup probe was seen passing. */
    synchronized boolean markReady() {
        boolean first = !ready;
        ready = true;
        return first;
    }

    /**
     * Records that its container ended, and whether that was the kubelet giving up on the startup probe (the first
     * time only): killed (SIGTERM or SIGKILL) before its probe passed, and not by us nor by the kernel for its memory
     * (an OOM kill has its cause). A container may also end on its own before its first probe; that is a plain exit.
     */
    synchronized boolean endedOnFailedProbe(PodStatus.Ended ended) {
        lastEnded = ended;
        boolean killed = (ended.exitCode() == 137 || ended.exitCode() == 143) && ended.cause() == null;
        boolean failed = probe && ended.neverStarted() && killed && !probeFailed && terminatingGrace == null;
        probeFailed |= failed;
        return failed;
    }

    /** Records its end, the first time only; returns whether it was the first. */
    synchronized boolean recordEnd(InstanceReport report) {
        if (end != null) {
            return false;
        }
        end = report;
        return true;
    }

    /** Records a stop with this grace period (seconds) unless it has ended; returns its end if it has. */
    synchronized InstanceReport stopping(long graceSeconds) {
        if (end == null) {
            terminatingGrace = graceSeconds;
        }
        return end;
    }
}
