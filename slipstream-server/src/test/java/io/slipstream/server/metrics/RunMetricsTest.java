package io.slipstream.server.metrics;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.model.FaultState;
import io.slipstream.model.RunRecord;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class RunMetricsTest {
    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

    private final MutableClock clock = new MutableClock(T0);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final RunMetrics metrics = new RunMetrics(registry, clock);

    private static RunRecord queued(String job, String quota) {
        return RunRecord.queued(RunId.newFor(job), "team-a", job, 1, aJob(job).workspace("team-a").quota(quota).spec(), T0);
    }

    private double counter(String name, String... tags) {
        var counter = registry.find(name).tags(tags).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void anAdmissionCountsOnceWithItsWaitAndAReclaimIsTimedFromTheFirstVictimToTheOwnersAdmission() {
        RunRecord borrower = queued("borrower", "b");
        metrics.written(borrower); // created
        clock.advance(Duration.ofSeconds(5));
        RunRecord running = borrower.admitted(RealTimeResources.NotInQuota, "Admitted", clock.instant()).moveTo(RunState.RUNNING, "Running", clock.instant());
        metrics.written(running);
        metrics.written(running); // written again unchanged: nothing new
        assertThat(counter("slipstream.admissions", "quota", "team-a/b", "resources", "NotInQuota")).isEqualTo(1);
        assertThat(registry.find("slipstream.admission.wait").tag("quota", "team-a/b").timer().totalTime(java.util.concurrent.TimeUnit.SECONDS))
                .isEqualTo(5);

        RunRecord owner = queued("owner", "a");
        metrics.read(owner); // the loop read it: remembered, not counted
        clock.advance(Duration.ofSeconds(1));
        RunRecord preempting = running.preempting(owner.id(), "Preempted");
        metrics.written(preempting);
        metrics.written(preempting);
        assertThat(counter("slipstream.preemptions", "quota", "team-a/b")).isEqualTo(1);

        clock.advance(Duration.ofSeconds(3));
        metrics.written(preempting.requeued("Preempted", clock.instant()));
        assertThat(counter("slipstream.restarts", "quota", "team-a/b", "cause", "preemption")).isEqualTo(1);
        metrics.written(owner.admitted(RealTimeResources.InQuota, "Admitted", clock.instant()));
        assertThat(registry.find("slipstream.reclaim").tag("quota", "team-a/a").timer().totalTime(java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(3);
        assertThat(registry.find("slipstream.admission.wait").tag("quota", "team-a/a").timer().totalTime(java.util.concurrent.TimeUnit.SECONDS))
                .as("the owner waited since its creation").isEqualTo(9);
    }

    @Test
    void aRunOnlyReadIsNeverCountedSoThatReplicasDoNotCountEachOthersWork() {
        RunRecord run = queued("job", null);
        metrics.read(run);
        metrics.read(run.admitted(RealTimeResources.NotInQuota, "Admitted", T0)); // another replica admitted it
        assertThat(registry.find("slipstream.admissions").counters()).isEmpty();
    }

    @Test
    void aRunFirstSeenWhenWrittenIsRememberedNotCounted() {
        RunRecord run = queued("job", null).admitted(RealTimeResources.NotInQuota, "Admitted", T0);
        metrics.written(run);
        assertThat(registry.find("slipstream.admissions").counters()).isEmpty();
        metrics.written(run.moveTo(RunState.RUNNING, "Running", T0).moveTo(RunState.TERMINATING, "Cancel", T0).moveTo(RunState.CANCELLED, "Cancelled", T0));
        assertThat(counter("slipstream.runs.finished", "quota", "(none)", "state", "CANCELLED")).isEqualTo(1);
    }

    /**
     * A standby (or a leader that lost the lease and took it back) remembers a run as it last read it; another replica
     * then admitted it, failed and requeued it. This replica's next write counts only what it did itself.
     */
    @Test
    void aWriteOverWhatAnotherReplicaWroteCountsNothingOfTheOtherReplicasWork() {
        RunRecord run = queued("job", "a");
        metrics.read(run);
        RunRecord elsewhere = run.admitted(RealTimeResources.InQuota, "Admitted", T0).moveTo(RunState.RUNNING, "Running", T0)
                .restarting(FaultState.RestartCause.FAILURE, "Failed").withVersion(4);
        RunRecord failedOnce = elsewhere.withFaults(new FaultState(1, 0, 0, 0, null, 0, FaultState.RestartCause.FAILURE, null, null, null, null, null, 0));
        metrics.written(failedOnce.withCancelRequestedAt(T0).withVersion(5)); // a cancel request through this replica's API
        assertThat(registry.find("slipstream.admissions").counters()).isEmpty();
        assertThat(registry.find("slipstream.restarts").counters()).isEmpty();
    }

    @Test
    void aNewerVersionReadReplacesWhatWasRememberedSoThatThisReplicasNextWriteCountsOnlyItsOwnChange() {
        RunRecord run = queued("job", "a");
        metrics.read(run);
        RunRecord running = run.admitted(RealTimeResources.InQuota, "Admitted", T0).moveTo(RunState.RUNNING, "Running", T0).withVersion(3);
        metrics.read(running); // the new leader's first cycle reads what the old one wrote
        RunRecord cancelling = running.withCancelRequestedAt(T0).withVersion(4);
        metrics.written(cancelling);
        assertThat(registry.find("slipstream.admissions").counters()).as("another replica admitted it").isEmpty();
        metrics.written(cancelling.terminating(RunState.CANCELLED, "Cancel").moveTo(RunState.CANCELLED, "Cancelled", T0).withVersion(5));
        assertThat(counter("slipstream.runs.finished", "quota", "team-a/a", "state", "CANCELLED")).isEqualTo(1);

        RunRecord other = queued("other", "a");
        metrics.read(other);
        RunRecord requeued = other.admitted(RealTimeResources.InQuota, "Admitted", T0).moveTo(RunState.RUNNING, "Running", T0)
                .restarting(FaultState.RestartCause.PREEMPTION, "Preempted").requeued("Preempted", T0).withVersion(4);
        metrics.read(requeued); // another replica ran it and put it back in the queue
        metrics.written(requeued.admitted(RealTimeResources.InQuota, "Admitted", T0).withVersion(5));
        assertThat(counter("slipstream.admissions", "quota", "team-a/a", "resources", "InQuota")).as("this replica admitted it again").isEqualTo(1);
    }

    /** The writer's own read in its transaction (handed on before its write) is a read; another thread's waits for the write. */
    @Test
    void whileARunIsWrittenOnlyOtherThreadsReadsOfItAreLeftToTheWriter() throws Exception {
        RunRecord run = queued("job", "a");
        metrics.read(run);
        RunRecord requeued = run.admitted(RealTimeResources.InQuota, "Admitted", T0).moveTo(RunState.RUNNING, "Running", T0)
                .restarting(FaultState.RestartCause.PREEMPTION, "Preempted").requeued("Preempted", T0).withVersion(4);
        metrics.writing(run.id());
        Thread other = new Thread(() -> metrics.read(requeued.admitted(RealTimeResources.InQuota, "Admitted", T0).withVersion(5)));
        other.start();
        other.join(); // another thread saw the write committed before the writer handed it on
        metrics.read(requeued); // the writer's own read, in its transaction: another replica ran the run and queued it again
        metrics.written(requeued.admitted(RealTimeResources.InQuota, "Admitted", T0).withVersion(5));
        metrics.doneWriting(run.id());
        assertThat(counter("slipstream.admissions", "quota", "team-a/a", "resources", "InQuota")).as("this replica admitted it again").isEqualTo(1);
    }

    @Test
    void runsEndedByAnotherReplicaAreForgottenWhenTheActiveRunsNoLongerListThem() {
        RunRecord ended = queued("ended", "a");
        RunRecord owner = queued("owner", "a");
        RunRecord borrower = queued("borrower", "b").admitted(RealTimeResources.NotInQuota, "Admitted", T0);
        metrics.written(borrower);
        metrics.written(borrower.preempting(owner.id(), "Preempted").withVersion(2)); // the owner waits for it
        metrics.read(ended);
        metrics.read(owner);
        long before = metrics.generation();
        RunRecord late = queued("late", "a");
        metrics.written(late); // created while the read below was under way: not in what it lists
        metrics.readActive(java.util.List.of(borrower.withVersion(2)), before); // another replica ended both
        assertThat(metrics.remembered()).containsExactlyInAnyOrder(borrower.id(), late.id());
    }

    @Test
    void aRunListedByOneReadOfTheActiveRunsAndNotByTheNextIsForgotten() {
        RunRecord kept = queued("kept", "a");
        RunRecord ended = queued("ended", "a");
        metrics.readActive(java.util.List.of(kept, ended), metrics.generation());
        metrics.readActive(java.util.List.of(kept, ended), metrics.generation()); // nothing new: every mark listed again
        assertThat(metrics.remembered()).containsExactlyInAnyOrder(kept.id(), ended.id());
        metrics.readActive(java.util.List.of(kept), metrics.generation()); // another replica ended it
        assertThat(metrics.remembered()).containsExactly(kept.id());
        metrics.readActive(java.util.List.of(), metrics.generation());
        assertThat(metrics.remembered()).isEmpty();
    }

    @Test
    void restartsCountByCauseAndWorkLostInSeconds() {
        RunRecord run = queued("job", "a").admitted(RealTimeResources.InQuota, "Admitted", T0).moveTo(RunState.RUNNING, "Running", T0);
        metrics.written(run);
        FaultState lost = new FaultState(0, 0, 0, 0, null, 0, null, null, null, null, null, null, 90_500);
        RunRecord restarting = run.restarting(FaultState.RestartCause.NODE_LOST, "NodeLost");
        metrics.written(restarting.withFaults(new FaultState(0, 0, 0, 0, null, 0, FaultState.RestartCause.NODE_LOST, null, null, null, null, null, 90_500)));
        metrics.written(restarting.withFaults(lost.restarting(FaultState.RestartCause.NODE_LOST)).requeued("NodeLost", T0));
        assertThat(counter("slipstream.restarts", "quota", "team-a/a", "cause", "node_lost")).isEqualTo(1);
        assertThat(counter("slipstream.work.lost.seconds", "quota", "team-a/a")).isEqualTo(90.5);
        assertThat(counter("slipstream.preemptions", "quota", "team-a/a")).isZero();
    }

    static final class MutableClock extends Clock {
        private Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        void advance(Duration by) {
            now = now.plus(by);
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
