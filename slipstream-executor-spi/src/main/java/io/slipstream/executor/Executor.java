package io.slipstream.executor;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Runs instances on nodes. Implementations MUST be safe for concurrent use and MUST NOT block in
 * {@link #terminate}; reports are delivered to the listener from the executor's own threads, at least once.
 */
public interface Executor extends AutoCloseable {
    /** In a handle: which {@link LaunchSpec#restart restart in place} of its instance the handle is of (absent: 0). */
    String RESTART_KEY = "restart";

    /** Which restart in place of its instance a handle is of. */
    static int restartOf(Map<String, String> handle) {
        String value = handle.get(RESTART_KEY);
        try {
            return value == null ? 0 : Integer.parseInt(value);
        } catch (NumberFormatException e) {
            return -1; // matches no restart: such a handle is of no launch this control plane made
        }
    }

    /** The nodes instances can be placed on. */
    List<NodeInfo> nodes();

    /**
     * Where instance {@code id} of a run of {@code workspace} (named {@code name}, as in {@code worker-1}) placed on
     * {@code node} will be reached,
     * with {@code ports} ports that are free and not in {@code taken} (the ports of instances already placed on the
     * same address: the nodes of the same {@link #portDomain}). Called when a run is admitted, before any of its
     * instances starts, so that every instance's metadata lists all of them. The IP address may be {@code null} where
     * it is known only once the instance runs (then the executor fills it into the metadata the instances read).
     */
    io.slipstream.api.run.Endpoint endpoint(InstanceId id, String workspace, String name, String node, int ports, java.util.Set<Integer> taken);

    /**
     * The nodes whose instances must not share a port have the same port domain: one address, one machine. By default
     * every node is in one domain (ports are unique across the cluster, as where all nodes are this machine); an
     * executor whose nodes are hosts of their own names each its own, so that a large cluster is not held to one
     * machine's 64,000 ports.
     */
    default String portDomain(String node) {
        return "";
    }

    /** What ending an instance guarantees about the processes it started. */
    enum Containment {
        /** Every process an instance started is gone once its end is reported (a uid of the run's own, a container). */
        EVERY_PROCESS,
        /**
         * Only the instance's session, process group and their descendants are stopped: a process that detached itself
         * ({@code setsid} after a double fork) can outlive it.
         */
        PROCESS_TREE
    }

    /**
     * What this executor holds instances to beyond the scheduler's accounting (memory, CPU, processes, devices), for the
     * server's start line, {@code /readyz} and {@code get nodes}; {@code null} where it cannot say (a fake).
     */
    default ResourceEnforcement enforcement() {
        return null;
    }

    /**
     * What keeps the executor from following, launching or stopping instances now (the system it drives does not
     * answer), in a line for {@code /readyz}; {@code null} when nothing does. Returns at once: it says what the
     * executor last saw, it asks nothing.
     */
    default String problem() {
        return null;
    }

    /** What ending an instance guarantees about the processes it started. */
    default Containment containment() {
        return Containment.EVERY_PROCESS;
    }

    /**
     * Whether the nodes may grow (a cluster autoscaler may add nodes): a run that no node fits now is then accepted with
     * a warning, not refused.
     */
    default boolean nodesMayGrow() {
        return false;
    }

    /**
     * Whether an ended instance can be launched again under its id ({@link LaunchSpec#restart} above its last launch's),
     * on the same node and devices, while the other instances of its attempt run on ({@code faultTolerance.runType:
     * Async}). An executor that cannot has such jobs refused at submission.
     */
    default boolean restartsInPlace() {
        return false;
    }

    /** Whether every instance must name a container image (executors that run containers); a job without one is refused. */
    default boolean requiresImage() {
        return false;
    }

    /**
     * What of {@code job} this executor cannot run, checked when the job is applied: per field, its path below
     * {@code spec} ({@code nodeGroups[0].image}) and why. Empty when it can run all of it (the default); what only a
     * launch can find out (an image file that is missing) fails that launch instead.
     */
    default java.util.Map<String, String> refusals(io.slipstream.api.spec.JobSpec job) {
        return java.util.Map.of();
    }

    /**
     * What of a run's labels (its job's and its own) this executor refuses, checked when a job is applied and when a run
     * is created: per label key, why. Empty when it reads no labels (the default). {@code maxRuntime}: the longest the
     * run may run before it is timed out (its job's, else the installation's).
     */
    default java.util.Map<String, String> labelRefusals(java.util.Map<String, String> labels, java.time.Duration maxRuntime) {
        return java.util.Map.of();
    }

    /**
     * From now on this executor acts for the control loop that leads at {@code epoch} (replicas take turns; see the
     * store's leadership). Every later launch, stop and adoption checks, atomically with its effect, that no executor
     * has been fenced at a newer epoch since, and is refused with {@link ExecutorException} if one has: a leader that
     * lost its lease and woke up starts and kills nothing. Called before anything is launched or adopted.
     *
     * @throws EpochSupersededException if an executor was fenced at a newer epoch already (it says which)
     */
    void fence(long epoch);

    /** Where reports go; set once, before anything is launched or adopted. */
    void setListener(Consumer<InstanceReport> listener);

    /**
     * Starts an instance and returns its handle once its process exists. With a startup probe, a {@code Ready} or
     * {@code ProbeFailed} report follows (without one, a running instance is ready). Idempotent: if this instance was
     * launched before (say, just before a crash of the control plane), it is adopted instead of started twice. A
     * {@link LaunchSpec#restart restart} newer than the last launch of the id (whose end was reported) starts a new
     * process instead (executors that {@link #restartsInPlace}); its handle names the restart under {@link #RESTART_KEY}.
     *
     * @throws ExecutorException if the instance cannot be started at all
     * @throws LaunchNotReadyException if it cannot start yet (its image is being prepared) and nothing was started:
     *                                 launched again later, it may (the launch never waits for a pull)
     */
    Map<String, String> launch(LaunchSpec spec);

    /**
     * The handle of an instance if it was ever launched, else empty. Lets the control plane tell, after a crash,
     * whether an instance it had placed but not yet recorded as launched really started.
     */
    Optional<Map<String, String>> find(InstanceId id);

    /**
     * Finds instances launched before a restart of the control plane and watches them again. For each, a report
     * reaches the listener: {@code Running}, or {@code Exited} with the exit code if it ended meanwhile, or
     * {@code Lost}. An instance with a startup probe is probed again unless it was ready, which is reported again.
     */
    void adopt(Map<InstanceId, Map<String, String>> handles);

    /**
     * Stops an instance: a notice (where the executor has one: a file the instance can read, naming {@code reason}
     * and the deadline), a polite signal to its whole process tree, then after {@code gracePeriod} a forced kill,
     * or sooner once the instance acknowledged the notice (it saved its work and asks to be released). A zero
     * {@code gracePeriod} kills at once, without notice or polite signal (the instance's node is lost).
     * The listener gets {@code Exited(terminated = true)} once every process is confirmed gone. Idempotent.
     */
    void terminate(InstanceId id, Map<String, String> handle, Duration gracePeriod, String reason);

    /**
     * Replaces a running instance's identity tokens with {@code tokens}: new ones for the same audiences, in the same
     * files ({@link LaunchSpec#identity}), which the instance reads from then on; a reader never sees a file half
     * written. The control loop calls it well before the old ones expire, while the instance runs. Never follows or
     * blocks on anything the workload can change. Returns {@code false}, writing nothing, when the instance does not
     * run (it ended, or this executor never launched it).
     *
     * @throws ExecutorException if they cannot be written now (the control loop tries again), or this executor does not
     *                           {@link #deliversIdentity deliver identity tokens} (the default)
     */
    default boolean refreshIdentity(InstanceId id, Map<String, String> handle, List<IdentityToken> tokens) {
        throw new ExecutorException(getClass().getSimpleName() + " does not deliver identity tokens");
    }

    /**
     * Whether it delivers runs' identity tokens ({@link LaunchSpec#identity}) and {@link #refreshIdentity refreshes}
     * them; a job that asks for tokens is refused where it does not (the default).
     */
    default boolean deliversIdentity() {
        return false;
    }

    /**
     * When the instance last wrote output and what progress it last reported. Cheap enough to ask every few seconds
     * for every running instance; an instance that cannot be looked at gives {@link Activity#NONE}.
     */
    Activity activity(InstanceId id, Map<String, String> handle);

    /** Up to {@code maxBytes} of an instance's output starting at {@code offset}. */
    LogChunk readLog(InstanceId id, Map<String, String> handle, LogStream stream, long offset, int maxBytes);

    /** The last {@code maxBytes} (at most) of an instance's output, ending where the output ends now. */
    LogChunk readLogTail(InstanceId id, Map<String, String> handle, LogStream stream, int maxBytes);

    /**
     * Removes what is kept of a finished run: its instances' files and logs. The control plane calls it only once
     * every instance of the run is gone; afterwards {@link #find} knows none of them. Idempotent.
     */
    void forget(RunId runId);

    /** Stops watching; running instances are left running (a restarted control plane adopts them). */
    @Override
    void close();
}
