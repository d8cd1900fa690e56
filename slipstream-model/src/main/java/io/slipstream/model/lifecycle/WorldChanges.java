package io.slipstream.model.lifecycle;

import io.slipstream.api.run.InstanceState;
import io.slipstream.model.ElasticWorld;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The part of a run's life only an elastic run has (docs/elastic.md): a change of its world. A shrink or a grow, as the
 * control loop applied it, left the run's {@link ElasticWorld} changing; from there, as pure functions of the run and
 * its instances: every instance of the world before is told to stop (a member with a {@code WorldChange:} notice, one
 * leaving with its {@code Shrunk:} notice), nothing is launched until each is gone, then the members start again in
 * place, in the new world. An instance that ended as it was told is no failure; one that failed (or was lost) is judged
 * by the run's restart rules as any failure is.
 */
final class WorldChanges {
    private WorldChanges() {
    }

    /**
     * The instances that are the run's now: a rigid run's all; an elastic run's members, and while its world changes
     * those leaving. The others are history (slots a shrink removed): no rule judges them again.
     */
    static List<InstanceRecord> current(RunRecord run, List<InstanceRecord> instances) {
        ElasticWorld world = run.world();
        if (world == null) {
            return instances;
        }
        return instances.stream().filter(i -> world.isMember(i.id().rank()) || world.changing() && world.leavingOf(i.id().rank()) != null).toList();
    }

    /** Whether an instance ended as its run told it to (or finished on its own): a change of world is no failure. */
    static boolean endedAsTold(InstanceRecord instance) {
        return instance.state() == InstanceState.SUCCEEDED
                || instance.stopRequestedAt() != null && (instance.state() == InstanceState.KILLED || instance.state() == InstanceState.RESOURCE_PREEMPTED);
    }

    /** The members that failed while the world changes (those leaving may end as they do: they are leaving). */
    static List<InstanceRecord> failedMembers(RunRecord run, List<InstanceRecord> instances) {
        return instances.stream().filter(i -> run.world().isMember(i.id().rank()) && i.state().isFinal() && !endedAsTold(i)).toList();
    }

    /**
     * The next step of a run whose world changes and none of whose members failed: stop what is still of the world
     * before, wait for it to be gone, then start the new world.
     */
    static Step next(RunRecord run, List<InstanceRecord> instances, Duration grace) {
        ElasticWorld world = run.world();
        List<InstanceRecord> current = current(run, instances);
        List<Step.Stop> stops = new ArrayList<>();
        boolean waiting = false;
        for (InstanceRecord instance : current) {
            ElasticWorld.Leaving leaving = world.leavingOf(instance.id().rank());
            boolean launched = instance.state() != InstanceState.PENDING;
            if (instance.state().isFinal() || !launched && leaving == null) {
                continue; // gone, or a member not launched yet: it starts in the new world
            }
            waiting = true;
            if (instance.stopRequestedAt() == null) {
                stops.add(new Step.Stop(instance, grace, leaving != null ? leaving.reason() : notice(world)));
            }
        }
        if (!stops.isEmpty()) {
            return new Step.Terminate(run, stops);
        }
        if (waiting) {
            return new Step.Stay();
        }
        List<InstanceRecord> restarted = new ArrayList<>();
        for (InstanceRecord instance : current) {
            if (world.isMember(instance.id().rank()) && instance.state().isFinal()) {
                restarted.add(instance.restartedInPlace());
            }
        }
        return new Step.ChangeWorld(run.withWorld(world.changed()), restarted,
                "world " + world.version() + " starts with " + world.members().size() + " instance(s)");
    }

    /** What a surviving member's notice says. */
    static String notice(ElasticWorld world) {
        return ElasticWorld.WORLD_CHANGE + ": the run goes on with " + world.members().size() + " instance(s) in world " + world.version()
                + "; save, exit, and start again in it";
    }
}
