package io.slipstream.api.run;

import static java.util.Objects.requireNonNull;

/** One instance of one attempt of a run; {@code rank} is global across the run's node groups. */
public record InstanceId(RunId runId, int attempt, int rank) implements Comparable<InstanceId> {
    public InstanceId {
        requireNonNull(runId, "runId is null");
        if (attempt < 1 || rank < 0) {
            throw new IllegalArgumentException("bad attempt or rank: " + attempt + "/" + rank);
        }
    }

    @Override
    public int compareTo(InstanceId other) {
        int byRun = runId.compareTo(other.runId);
        if (byRun != 0) {
            return byRun;
        }
        return attempt != other.attempt ? Integer.compare(attempt, other.attempt) : Integer.compare(rank, other.rank);
    }

    @Override
    public String toString() {
        return runId + "/" + attempt + "/" + rank;
    }
}
