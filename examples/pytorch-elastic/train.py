#!/usr/bin/env python3
"""One rank of the elastic PyTorch example (examples/pytorch-elastic/job.yaml): real torch.distributed, gloo on CPU.

The run may have any number of instances from its group's minReplicas to its replicas, and that number changes while
it trains: the platform grows it onto idle GPUs and shrinks it when their owner needs them back. Each change is a new
world. Every instance of the old world gets the stop notice (a survivor's reason begins ``WorldChange:``, a removed
one's ``Shrunk:``): the ranks agree to stop after the same step, rank 0 saves a checkpoint, every rank acknowledges
and exits 0; the survivors are started again in place with the new WORLD_SIZE, RANK and SLIPSTREAM_WORLD_VERSION, the
new instances join them, and all resume from that checkpoint.

The weights do not depend on how many ranks there were, when: each step's global batch of BATCH samples is split
into SHARDS virtual shards, dealt to the ranks; each shard's gradient is computed with random numbers of its own
(dropout), and the shards' gradients are added in shard order on every rank (slipstream.torch.elastic_backward). A
run that went 4 -> 2 -> 4 ranks prints the `final weights sha256=...` of one that ran at 4, or at 2, throughout.

Settings come from the environment: STEPS, CHECKPOINT_EVERY, SEED, BATCH (the global batch), SHARDS (at least the
group's replicas; BATCH a multiple of it), HIDDEN, LOG_EVERY, and STEP_MILLIS (the least wall time a step takes, as a
bigger model's would: it changes no result).
"""
import datetime
import hashlib
import os
import sys
import time


def setting(name, default):
    value = os.environ.get(name, str(default))
    try:
        number = int(value)
    except ValueError:
        raise SystemExit(f"pytorch-elastic: {name} must be a whole number, not {value!r}")
    if number < 0:
        raise SystemExit(f"pytorch-elastic: {name} must not be negative, not {number}")
    return number


STEPS = setting("STEPS", 600)
CHECKPOINT_EVERY = setting("CHECKPOINT_EVERY", 100)
SEED = setting("SEED", 42)
BATCH = max(1, setting("BATCH", 64))
SHARDS = max(1, setting("SHARDS", 8))
HIDDEN = max(1, setting("HIDDEN", 64))
LOG_EVERY = max(1, setting("LOG_EVERY", 100))
STEP_MILLIS = setting("STEP_MILLIS", 0)
SAMPLES = 8192
FEATURES = 32
CLASSES = 4


def main():
    if BATCH > SAMPLES:
        raise SystemExit(f"pytorch-elastic: BATCH ({BATCH}) must not be more than the {SAMPLES} samples")
    if BATCH % SHARDS:
        raise SystemExit(f"pytorch-elastic: BATCH ({BATCH}) must be a multiple of SHARDS ({SHARDS}): shards of one size")
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        print(f"pytorch-elastic: PyTorch is not installed for {sys.executable} ({e}); on Debian: apt-get install python3-torch",
              file=sys.stderr)
        return 2
    from slipstream import Slipstream
    from slipstream.torch import elastic_backward, restore_state, save_state

    # One thread, deterministic kernels: a shard's gradient has the same bits whichever process computes it.
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    slipstream = Slipstream.from_environment()
    preemption = slipstream.preemption
    # SIGTERM only sets preemption.stop_requested: the loop saves after a whole step, then acknowledges.
    preemption.watch()

    dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(minutes=5))
    rank, world = dist.get_rank(), dist.get_world_size()
    if world > SHARDS:
        raise SystemExit(f"pytorch-elastic: {world} ranks but {SHARDS} shards: SHARDS must be at least the replicas")

    torch.manual_seed(SEED)  # the same initial weights on every rank; no DDP wrapper, no broadcast needed
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                                torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, CLASSES))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    inputs, labels = dataset(torch)

    checkpoints = slipstream.checkpoints(keep=3)
    # No random states to restore: every shard's are seeded from (SEED, step, shard), whatever the world.
    restored = restore_state(checkpoints, model, optimizer, restore_rng=False)
    start = restored.step if restored is not None else 0
    if restored is not None:
        if restored.data_position != start:
            raise SystemExit(f"pytorch-elastic: the checkpoint's data position {restored.data_position} is not step {start}")
        print(f"rank {rank} resumes from the checkpoint of step {start}", flush=True)
    agree = torch.tensor([start, -start], dtype=torch.int64)
    dist.all_reduce(agree, op=dist.ReduceOp.MAX)
    if agree[0].item() != start or -agree[1].item() != start:
        raise SystemExit(f"pytorch-elastic: ranks disagree on the step to resume from (rank {rank} has {start})")
    if rank == 0:
        print(f"world {slipstream.world_version}: {world} ranks, {SHARDS} shards of {BATCH // SHARDS} samples, "
              f"{sum(p.numel() for p in model.parameters())} parameters, steps {start + 1}..{STEPS}", flush=True)

    def checkpoint(step):
        save_state(checkpoints, step, model, optimizer, data_position=step)  # rank 0 writes
        dist.barrier()  # nobody acknowledges a stop before the checkpoint is on disk

    completed = last_saved = start
    stopped = False
    loss = None
    loss_function = torch.nn.CrossEntropyLoss()
    try:
        for step in range(start + 1, STEPS + 1):
            # Every rank stops after the same step: a rank told first tells the others.
            stop = torch.tensor([1 if preemption.stop_requested.is_set() else 0])
            dist.all_reduce(stop, op=dist.ReduceOp.MAX)
            if stop.item():
                print(f"rank {rank}: {why(preemption)}", flush=True)
                stopped = True
                break
            if STEP_MILLIS:
                time.sleep(STEP_MILLIS / 1000)  # stands for a bigger model's compute
            x, y = batch(torch, inputs, labels, step)
            size = BATCH // SHARDS

            def loss_of_shard(shard):
                rows = slice(shard * size, (shard + 1) * size)
                return loss_function(model(x[rows]), y[rows])

            loss = elastic_backward(model, loss_of_shard, step, SHARDS, seed=SEED)
            optimizer.step()
            completed = step
            slipstream.progress.report(step, {"loss": loss})
            if rank == 0 and (step % LOG_EVERY == 0 or step == start + 1):
                print(f"step {step}/{STEPS} loss {loss:.6f}", flush=True)
            if CHECKPOINT_EVERY > 0 and step % CHECKPOINT_EVERY == 0:
                checkpoint(step)
                last_saved = step
        if stopped:
            if completed > last_saved:
                checkpoint(completed)
                if rank == 0:
                    print(f"rank 0 saved the checkpoint of step {completed} on the notice", flush=True)
            preemption.acknowledge()
            print(f"rank {rank} stops after step {completed}", flush=True)
            return 0
    except RuntimeError as e:  # gloo: a peer went away
        if preemption.stop_requested.is_set():
            print(f"rank {rank} stops after step {completed}: a peer stopped first", flush=True)
            preemption.acknowledge()
            return 0
        print(f"rank {rank}: lost a peer after step {completed}: {e}", file=sys.stderr, flush=True)
        return 1

    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().contiguous().numpy().tobytes())
    print(f"final loss {loss:.6f}" if loss is not None else "nothing left to train", flush=True)
    print(f"final weights sha256={digest.hexdigest()}", flush=True)
    leave(dist)
    return 0


def why(preemption):
    """What the stop means for this rank, for its log: the loop does the same in every case."""
    notice = preemption.notice()
    if notice is None:
        return "stop requested (no notice)" if preemption.stop_requested.is_set() else "stops with its peers"
    if notice.world_changing:
        return f"the world changes, saves and starts again in the new one ({notice.reason})"
    if notice.shrunk:
        return f"leaves the run, which goes on without it ({notice.reason})"
    return f"stop requested ({notice.reason})"


def leave(dist):
    """Leaves the group once every rank is done (see examples/pytorch-ddp/train.py: no destroy_process_group, whose
    gloo teardown can spin once rank 0, which hosts the store, is gone)."""
    try:
        dist.barrier()
    except RuntimeError as e:
        print(f"rank {dist.get_rank()}: a peer left before the final barrier ({e})", file=sys.stderr, flush=True)


def dataset(torch):
    """A fixed synthetic classification task: labels from a random linear map of the inputs."""
    generator = torch.Generator().manual_seed(SEED)
    inputs = torch.randn(SAMPLES, FEATURES, generator=generator)
    labels = (inputs @ torch.randn(FEATURES, CLASSES, generator=generator)).argmax(dim=1)
    return inputs, labels


def batch(torch, inputs, labels, step):
    """Step `step`'s global batch: each epoch is its own shuffle. The world size plays no part: the shards split it."""
    steps_per_epoch = SAMPLES // BATCH
    epoch, index = divmod(step - 1, steps_per_epoch)
    order = torch.randperm(SAMPLES, generator=torch.Generator().manual_seed(SEED * 100003 + epoch))
    chosen = order[index * BATCH:(index + 1) * BATCH]
    return inputs[chosen], labels[chosen]


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Straight out: the interpreter's own teardown would join gloo's threads, with nothing left to wait for.
    os._exit(code)
