package io.slipstream.model.testing;

import io.slipstream.api.run.Endpoint;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunId;
import io.slipstream.model.InstanceRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/** Builds an {@link InstanceRecord}: a placed (PENDING) instance, then the steps asked for. See {@link Runs}. */
public final class InstanceBuilder {
    private final RunId runId;
    private int attempt;
    private int rank;
    private String nodeGroup = "main";
    private Integer groupRank;
    private String node = "node-1";
    private List<Integer> gpus = List.of();
    private Endpoint endpoint;
    private Long version;
    private final List<UnaryOperator<InstanceRecord>> steps = new ArrayList<>();

    InstanceBuilder(RunId runId, int attempt) {
        this.runId = runId;
        this.attempt = attempt;
    }

    public InstanceBuilder attempt(int value) {
        this.attempt = value;
        return this;
    }

    /** Its rank in the run (and in its group, unless {@link #group} says otherwise). */
    public InstanceBuilder rank(int value) {
        this.rank = value;
        return this;
    }

    public InstanceBuilder group(String name, int rankInGroup) {
        this.nodeGroup = name;
        this.groupRank = rankInGroup;
        return this;
    }

    public InstanceBuilder node(String name) {
        this.node = name;
        return this;
    }

    public InstanceBuilder gpus(Integer... indices) {
        this.gpus = List.of(indices);
        return this;
    }

    public InstanceBuilder endpoint(Endpoint address) {
        this.endpoint = address;
        return this;
    }

    /** The version the record says it was read at (default: 0, as {@code Store.createInstances} expects). */
    public InstanceBuilder version(long value) {
        this.version = value;
        return this;
    }

    /** Launched at {@code at} with this executor handle. */
    public InstanceBuilder running(Map<String, String> handle, Instant at) {
        return then(i -> i.running(handle, at));
    }

    public InstanceBuilder finished(InstanceState finalState, Integer exitCode, String why, Instant at) {
        return then(i -> i.finished(finalState, exitCode, why, at));
    }

    public InstanceBuilder then(UnaryOperator<InstanceRecord> step) {
        steps.add(step);
        return this;
    }

    public InstanceRecord build() {
        InstanceRecord instance = InstanceRecord.pending(new InstanceId(runId, attempt, rank), nodeGroup, groupRank == null ? rank : groupRank,
                node, gpus, endpoint);
        for (UnaryOperator<InstanceRecord> step : steps) {
            instance = step.apply(instance);
        }
        return version == null ? instance : instance.withVersion(version);
    }

    /** Ranks {@code 0..count-1} of group {@code main}, all on this builder's node, as they are placed. */
    public List<InstanceRecord> gang(int count) {
        List<InstanceRecord> all = new ArrayList<>();
        for (int r = 0; r < count; r++) {
            all.add(new InstanceBuilder(runId, attempt).node(node).rank(r).build());
        }
        return List.copyOf(all);
    }
}
