package io.slipstream.simulator.engine;

import io.slipstream.scheduler.Decision;

/** Applies one cycle's decisions to the simulated world (every kind handled, at compile time). */
final class Applier implements Decision.Handler<Void> {
    private final Simulation world;
    /** When the first change the cycle saw happened: where guarantee waits and reclaims are counted from. */
    private final long changedAt;

    Applier(Simulation world, long changedAt) {
        this.world = world;
        this.changedAt = changedAt;
    }

    @Override
    public Void admit(Decision.Admit admit) {
        world.admit(world.job(admit.runId()), admit);
        return null;
    }

    @Override
    public Void preempt(Decision.Preempt preempt) {
        SimJob job = world.job(preempt.runId());
        if (preempt.kind() == Decision.PreemptKind.Move) {
            world.moved(job);
        }
        world.preempt(job, world.job(preempt.forRun()), changedAt, preempt.kind());
        return null;
    }

    @Override
    public Void promote(Decision.Promote promote) {
        world.promote(world.job(promote.runId()));
        return null;
    }

    @Override
    public Void grow(Decision.Grow grow) {
        world.grow(world.job(grow.runId()), grow);
        return null;
    }

    @Override
    public Void shrink(Decision.Shrink shrink) {
        world.shrink(world.job(shrink.runId()), shrink, world.job(shrink.forRun()), changedAt);
        return null;
    }

    @Override
    public Void waiting(Decision.Wait wait) {
        world.waiting(world.job(wait.runId()), wait.reason(), changedAt);
        return null;
    }
}
