package io.slipstream.store;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The runs, their instances and events, the schedules' last due times and the nodes declared down. */
public interface RunReads {

    /** The run; {@link UnreadableRecordException} if its row cannot be read. */
    Optional<RunRecord> get(RunId id);

    /** The runs of a query that can be read. */
    List<RunRecord> list(RunQuery query);

    /** The runs of a query, in its order, each read or saying why it cannot be (records held as objects always can). */
    default List<RunRow> rows(RunQuery query) {
        return list(query).stream().<RunRow>map(RunRow.Readable::new).toList();
    }

    /** Runs not in a final state, oldest first. */
    List<RunRecord> active();

    /** The run created with this idempotency key in this workspace, if any. */
    Optional<RunRecord> byIdempotencyKey(String workspace, String key);

    /** Finished runs that ended before {@code cutoff}, oldest first, at most {@code limit}. */
    List<RunRecord> finishedBefore(Instant cutoff, int limit);

    /** The instances of every attempt of a run, by attempt then rank. */
    List<InstanceRecord> instancesOf(RunId runId);

    Optional<InstanceRecord> instance(InstanceId id);

    /**
     * The instances of each run's current attempt, by rank, for a page of runs (a watch stream's poll): every run
     * asked for is a key, one without instances maps to an empty list. A store reads them in one go where it can.
     */
    default Map<RunId, List<InstanceRecord>> currentInstancesOf(Collection<RunRecord> runs) {
        Map<RunId, List<InstanceRecord>> byRun = new LinkedHashMap<>();
        for (RunRecord run : runs) {
            byRun.put(run.id(), instancesOf(run.id()).stream().filter(i -> i.id().attempt() == run.attempt()).toList());
        }
        return byRun;
    }

    /**
     * The instances of the current attempt of every run that is not in a final state, by run, then rank. A store may
     * look only at the runs that hold resources ({@link io.slipstream.api.run.RunState#holdsResources}) when every
     * active run's state is one it knows: a queued run has none of its current attempt (admission creates them as the
     * run leaves {@code QUEUED}, and a requeue begins a new attempt).
     */
    List<InstanceRecord> instancesOfActiveRuns();

    /** Instances not in a final state, of any run. */
    List<InstanceRecord> activeInstances();

    /** A run's events with {@code seq > afterSeq}, oldest first, at most {@code limit}. */
    List<RunEvent> events(RunId runId, long afterSeq, int limit);

    /** The last due time the job's schedule fired for. */
    Optional<Instant> lastScheduled(String workspace, String job);

    /** The nodes declared down, by name (those cordoned or draining are not). */
    Map<String, NodeDown> downNodes();

    /** Every node an administrator declared down, draining or cordoned, by name (a node not here is Ready). */
    Map<String, NodeCondition> nodeConditions();
}
