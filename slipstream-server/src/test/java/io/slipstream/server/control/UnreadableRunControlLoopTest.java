package io.slipstream.server.control;

import static io.slipstream.model.testing.Runs.aRun;
import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.executor.testing.FakeExecutor;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.model.testing.Runs;
import io.slipstream.server.config.RunLimits;
import io.slipstream.store.InterceptedStore;
import io.slipstream.store.Store;
import io.slipstream.store.UnreadableRecordException;
import io.slipstream.store.memory.InMemoryStore;
import io.slipstream.testing.TestingClock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The control loop with a run whose stored record became unreadable while it ran (what JdbcStore does with such a
 * row, played over the in-memory store: lists leave it out, a lookup names it): the loop goes on with every other run,
 * and places nothing on the node its instance still holds. UnreadableRunApiTest does the same with a real damaged row.
 */
class UnreadableRunControlLoopTest {
    private final TestingClock clock = new TestingClock();
    private final InMemoryStore memory = new InMemoryStore();
    private final Set<RunId> unreadable = new HashSet<>();
    private final Store store = damageable(memory);
    private final FakeExecutor executor = new FakeExecutor(clock, 2, 8);
    private final ControlLoop loop = new ControlLoop(LoopParts.of(store, executor, clock));

    @AfterEach
    void close() {
        memory.close();
    }

    /**
     * The store, but the runs of {@link #unreadable} are as a row that does not bind: left out of lists, named when looked
     * up, in a transaction too.
     */
    private Store damageable(Store real) {
        return new InterceptedStore(real, (operation, args, proceed) -> {
            if (operation.equals("runs.get") && unreadable.contains((RunId) args[0])) {
                throw new UnreadableRecordException("run " + args[0], "team-a", "at nodeGroups: not a list", null);
            }
            if (operation.equals("runs.rows")) {
                @SuppressWarnings("unchecked")
                List<io.slipstream.store.RunRow> rows = (List<io.slipstream.store.RunRow>) proceed.call();
                return rows.stream().map(row -> row instanceof io.slipstream.store.RunRow.Readable readable && unreadable.contains(row.id())
                        ? new io.slipstream.store.RunRow.Unreadable(row.id(), readable.run().workspace(), readable.run().job(),
                                readable.run().state().name(), row.createdAt(), "at nodeGroups: not a list")
                        : row).toList();
            }
            Object result = proceed.call();
            if (result instanceof List<?> list && List.of("runs.active", "runs.list", "runs.finishedBefore").contains(operation)) {
                return list.stream().filter(r -> !unreadable.contains(((RunRecord) r).id())).toList();
            }
            return result;
        });
    }

    private RunId submit(JobSpec spec) {
        RunRecord run = aRun().workspace("team-a").spec(spec).createdAt(clock.instant()).build();
        clock.advance(Duration.ofSeconds(1));
        return store.write(tx -> tx.createRun(run, Runs.created(run))).id();
    }

    @Test
    void theOtherRunsGoOnAndNothingIsPlacedWhereItsInstanceStillRuns() {
        store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of())), clock.instant()));
        RunId broken = submit(aJob("broken").gpus(8).spec());
        loop.cycle();
        String held = store.runs().instancesOf(broken).get(0).node();
        assertThat(memory.runs().get(broken).orElseThrow().state()).isEqualTo(RunState.RUNNING);

        unreadable.add(broken);
        RunId wide = submit(aJob("wide").replicas(2).gpus(8).spec());
        RunId narrow = submit(aJob("narrow").gpus(8).spec());
        loop.cycle();
        loop.cycle();

        assertThat(store.runs().get(narrow).orElseThrow().state()).isEqualTo(RunState.RUNNING);
        assertThat(store.runs().instancesOf(narrow)).extracting(InstanceRecord::node).doesNotContain(held);
        assertThat(store.runs().get(wide).orElseThrow().state()).as("it would need the held node").isEqualTo(RunState.QUEUED);
        assertThat(memory.runs().get(broken).orElseThrow().state()).as("left alone").isEqualTo(RunState.RUNNING);

        unreadable.remove(broken); // repaired: the loop takes it up again
        executor.exit(store.runs().instancesOf(broken).get(0).id(), 0);
        loop.cycle();
        assertThat(store.runs().get(broken).orElseThrow().state()).isEqualTo(RunState.SUCCEEDED);
    }

    @Test
    void aForbidScheduleStillSeesItsActiveRunThatCannotBeRead() {
        store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of())), clock.instant()));
        Document<?> job = io.slipstream.api.spec.Documents.readAll("""
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: nightly, workspace: team-a}
                spec:
                  schedule: {cron: "* * * * *", timeZone: UTC, concurrencyPolicy: Forbid}
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: ["true"]}
                """.getBytes(java.nio.charset.StandardCharsets.UTF_8)).get(0);
        store.write(tx -> tx.createDocument(job, clock.instant()));
        Schedules schedules = new Schedules(store, clock, new RunFactory(clock, RunLimits.DEFAULTS));
        clock.advance(Duration.ofMinutes(1));
        schedules.tick();
        List<RunRecord> fired = memory.runs().list(new io.slipstream.store.RunQuery(null, "team-a", "nightly", Set.of(), 10, null));
        assertThat(fired).hasSize(1);

        unreadable.add(fired.get(0).id());
        clock.advance(Duration.ofMinutes(1));
        schedules.tick();
        assertThat(memory.runs().list(new io.slipstream.store.RunQuery(null, "team-a", "nightly", Set.of(), 10, null)))
                .as("Forbid: its run is still active, readable or not").hasSize(1);
    }
}
