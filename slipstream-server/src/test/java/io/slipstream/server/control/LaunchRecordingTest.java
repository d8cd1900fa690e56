package io.slipstream.server.control;

import static io.slipstream.model.testing.Runs.aRun;
import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.executor.Executor;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.testing.FakeExecutor;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.model.testing.Runs;
import io.slipstream.server.auth.RunTokens;
import io.slipstream.server.secret.TokenHasher;
import io.slipstream.server.service.TokenService;
import io.slipstream.store.InterceptedStore;
import io.slipstream.store.Store;
import io.slipstream.store.memory.InMemoryStore;
import io.slipstream.testing.TestingClock;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a run's start writes, and in which transactions: its admission with its attempt's run token, then its
 * instances' launches with its STARTING -> RUNNING (two write transactions, where there were four); and that a launch
 * is recorded whatever happens after it.
 */
class LaunchRecordingTest {
    private final TestingClock clock = new TestingClock();
    private final TokenHasher hasher = new TokenHasher(new byte[TokenHasher.PEPPER_BYTES]);
    private InMemoryStore memory;
    /** The operations of each write transaction the loop made. */
    private final List<List<String>> writes = Collections.synchronizedList(new ArrayList<>());
    private Store store;
    private FakeExecutor fake;
    /** How long each call in a transaction takes on the test's clock (a slow store). */
    private Duration perCall = Duration.ZERO;
    /**
     * What the loop's thread wrote ({@code write}) and awaited ({@code awaitDurable}, the cycle's deferral opened and
     * closed), and what the executor was told ({@code launch}, {@code terminate}), in order.
     */
    private final List<String> timeline = Collections.synchronizedList(new ArrayList<>());
    /** Called after each launch the fake executor made, with its spec. */
    private Consumer<LaunchSpec> afterLaunch = spec -> { };

    @BeforeEach
    void setUp() {
        memory = new InMemoryStore();
        memory.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of())), clock.instant()));
        store = recording(memory);
        fake = new FakeExecutor(clock, 2, 8);
    }

    @AfterEach
    void tearDown() {
        memory.close();
    }

    private ControlLoop loop() {
        Executor executor = (Executor) Proxy.newProxyInstance(Executor.class.getClassLoader(), new Class<?>[] {Executor.class}, (proxy, method, args) -> {
            try {
                if (method.getName().equals("launch") || method.getName().equals("terminate")) {
                    timeline.add(method.getName());
                }
                Object result = method.invoke(fake, args);
                if (method.getName().equals("launch")) {
                    afterLaunch.accept((LaunchSpec) args[0]);
                }
                return result;
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        });
        RunTokens tokens = new RunTokens(new TokenService(store, clock, hasher), () -> null);
        return new ControlLoop(LoopParts.of(store, executor, clock).withRunTokens(tokens));
    }

    private RunId submit(JobSpec spec) {
        RunRecord run = aRun().workspace("team-a").spec(spec).createdAt(clock.instant()).build();
        clock.advance(Duration.ofSeconds(1));
        return memory.write(tx -> tx.createRun(run, Runs.created(run))).id();
    }

    @Test
    void theTokenIsStoredWithTheAdmissionAndTheLaunchesWithTheRunningState() {
        RunId id = submit(aJob("job").replicas(2).spec());
        perCall = Duration.ofMillis(1);
        loop().cycle();

        assertThat(memory.runs().get(id).orElseThrow().state()).isEqualTo(RunState.RUNNING);
        assertThat(writes).as("the admission, its token with it").filteredOn(w -> w.contains("createInstances")).singleElement()
                .satisfies(w -> assertThat(w).contains("updateRun", "createToken"));
        assertThat(writes).as("no token written on its own").noneMatch(w -> w.equals(List.of("createToken")));
        assertThat(writes).as("both launches, written with the run's RUNNING").filteredOn(w -> w.contains("updateInstance")).singleElement()
                .satisfies(w -> assertThat(w).contains("updateRun").filteredOn("updateInstance"::equals).hasSize(2));

        List<String> secrets = fake.launched().values().stream().map(spec -> spec.env().get(RunTokens.TOKEN_ENV)).distinct().toList();
        assertThat(secrets).as("one token for the attempt's instances").singleElement()
                .satisfies(secret -> assertThat(memory.credentials().tokenByHash(hasher.hash(secret))).hasValueSatisfying(t -> assertThat(t.user()).isEqualTo("run:" + id.value())));
        List<RunEvent> events = memory.runs().events(id, 0, 100);
        assertThat(events).extracting(RunEvent::type).containsSubsequence(EventType.InstanceStarted, EventType.InstanceStarted, EventType.StateChanged);
        assertThat(events.get(events.size() - 1).state()).as("the instances' starts come before the run's").isEqualTo("RUNNING");
        assertThat(events).extracting(RunEvent::time).as("the history never goes back in time").isSorted();
    }

    /**
     * One instance launches, the other cannot (its node refuses): the run fails and stops the one that started, in the
     * same cycle. The stop is decided on the launch as stored: it is recorded as sent (no conflict with the launch's
     * record), and sent once.
     */
    @Test
    void aStopDecidedRightAfterALaunchIsRecordedAndSentOnce() {
        fake.refuseLaunchesOn("node-2");
        RunId id = submit(aJob("job").replicas(2).gpus(8).spec());
        ControlLoop loop = loop();
        loop.cycle();

        assertThat(memory.runs().get(id).orElseThrow().state()).isEqualTo(RunState.TERMINATING);
        InstanceRecord started = memory.runs().instance(new InstanceId(id, 1, 0)).orElseThrow();
        assertThat(started.state()).isEqualTo(InstanceState.RUNNING);
        assertThat(started.stopRequestedAt()).as("the stop is recorded as sent").isNotNull();
        assertThat(memory.runs().instance(new InstanceId(id, 1, 1)).orElseThrow().state()).isEqualTo(InstanceState.FAILED);
        loop.cycle();
        assertThat(fake.terminated()).containsExactly(new InstanceId(id, 1, 0));
    }

    /**
     * The run changes while its instances launch (a cancel): the transaction of its launches and its RUNNING conflicts,
     * and the launches are recorded on their own; the next cycle stops them, and nothing is launched twice.
     */
    @Test
    void launchesAreRecordedWhenTheRunsNextStepConflicts() {
        RunId id = submit(aJob("job").replicas(2).spec());
        afterLaunch = spec -> {
            if (spec.id().rank() == 1) {
                memory.write(tx -> tx.updateRun(tx.runs().get(id).orElseThrow().withCancelRequestedAt(clock.instant())));
            }
        };
        ControlLoop loop = loop();
        loop.cycle();

        assertThat(memory.runs().get(id).orElseThrow().state()).isEqualTo(RunState.STARTING);
        assertThat(memory.runs().instancesOf(id)).as("both launches recorded").allSatisfy(i -> {
            assertThat(i.state()).isEqualTo(InstanceState.RUNNING);
            assertThat(i.handle()).isEqualTo(fake.find(i.id()).orElseThrow());
        });
        afterLaunch = spec -> { };
        loop.cycle();
        assertThat(memory.runs().get(id).orElseThrow().state()).isEqualTo(RunState.TERMINATING);
        assertThat(fake.terminated()).containsExactlyInAnyOrder(new InstanceId(id, 1, 0), new InstanceId(id, 1, 1));
        assertThat(fake.launched()).hasSize(2);
    }

    /**
     * A launch that fails unexpectedly is its run's failure alone: the cycle goes on (the next takes the run on), and the
     * instance launched before it is recorded all the same.
     */
    @Test
    void whatLaunchedBeforeAnUnexpectedFailureIsRecorded() {
        RunId id = submit(aJob("job").replicas(2).spec());
        afterLaunch = spec -> {
            if (spec.id().rank() == 1) {
                throw new IllegalStateException("a bug in the executor");
            }
        };
        assertThatCode(loop()::cycle).doesNotThrowAnyException();

        List<InstanceRecord> instances = memory.runs().instancesOf(id);
        assertThat(instances.get(0).state()).isEqualTo(InstanceState.RUNNING);
        assertThat(instances.get(0).handle()).isEqualTo(fake.find(instances.get(0).id()).orElseThrow());
        assertThat(memory.runs().events(id, 0, 100)).extracting(RunEvent::type).containsOnlyOnce(EventType.InstanceStarted);
    }

    /**
     * A cycle's writes are not each waited for until durable ({@link Store#deferDurability}), but before the executor
     * is told anything, what the loop wrote is: the admission before the launches, the run's TERMINATING before the
     * stop of the instance that started (its peer could not).
     */
    @Test
    void theExecutorIsToldToActOnlyOnceWhatTheLoopWroteIsDurable() {
        fake.refuseLaunchesOn("node-2");
        submit(aJob("job").replicas(2).gpus(8).spec());
        loop().cycle();

        assertThat(timeline).first().isEqualTo("deferDurability");
        assertThat(timeline).last().isEqualTo("closeDeferral");
        assertThat(timeline).contains("launch", "terminate");
        for (int i = 0; i < timeline.size(); i++) {
            if (timeline.get(i).equals("launch") || timeline.get(i).equals("terminate")) {
                List<String> before = timeline.subList(0, i);
                assertThat(before.lastIndexOf("awaitDurable")).as("%s at %d of %s: awaited after the last write", timeline.get(i), i, timeline)
                        .isGreaterThan(before.lastIndexOf("write"));
            }
        }
    }

    /** {@code target}, recording the operations of each write transaction in {@link #writes}; each call in one takes {@link #perCall}. */
    private Store recording(Store target) {
        return new InterceptedStore(target, new InterceptedStore.Interceptor() {
            @Override
            public Object call(String operation, Object[] args, Callable<Object> proceed) throws Exception {
                if (operation.equals("deferDurability")) {
                    timeline.add(operation);
                    Store.Deferral deferral = (Store.Deferral) proceed.call();
                    return (Store.Deferral) () -> {
                        timeline.add("closeDeferral");
                        deferral.close();
                    };
                }
                if (operation.equals("awaitDurable")) {
                    timeline.add(operation);
                }
                return proceed.call();
            }

            @Override
            public InterceptedStore.Interceptor transaction() {
                List<String> operations = new ArrayList<>();
                return (operation, args, proceed) -> {
                    if (operation.equals("write")) {
                        Object result = proceed.call();
                        writes.add(operations);
                        if (Thread.currentThread().getName().equals("main")) { // the loop's, driven by the test
                            timeline.add(operation);
                        }
                        return result;
                    }
                    if (!operation.equals("read")) {
                        operations.add(operation);
                        clock.advance(perCall);
                    }
                    return proceed.call();
                };
            }
        });
    }
}
