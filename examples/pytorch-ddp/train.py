#!/usr/bin/env python3
"""One rank of the PyTorch DDP example (examples/pytorch-ddp/job.yaml): real torch.distributed, gloo on CPU.

Every instance runs this once, as torchrun would have run it: the environment has RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT. The ranks train a small MLP on a synthetic dataset with DistributedDataParallel, checkpoint every
CHECKPOINT_EVERY steps and on the stop notice (preemption), resume from the newest checkpoint, and print the final
weights' SHA-256. A run that was preempted or lost a rank ends with exactly the weights of one that was not: the
checkpoint holds the model, the optimizer, every rank's random number generator and the data position.

Settings come from the environment: STEPS, CHECKPOINT_EVERY, SEED, BATCH, HIDDEN, LOG_EVERY, and STEP_MILLIS (the least
wall time a step takes, as a bigger model's would: it changes no result).
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
        raise SystemExit(f"pytorch-ddp: {name} must be a whole number, not {value!r}")
    if number < 0:
        raise SystemExit(f"pytorch-ddp: {name} must not be negative, not {number}")
    return number


STEPS = setting("STEPS", 600)
CHECKPOINT_EVERY = setting("CHECKPOINT_EVERY", 100)
SEED = setting("SEED", 42)
BATCH = max(1, setting("BATCH", 32))
HIDDEN = max(1, setting("HIDDEN", 64))
LOG_EVERY = max(1, setting("LOG_EVERY", 100))
STEP_MILLIS = setting("STEP_MILLIS", 0)
SAMPLES = 8192
FEATURES = 32
CLASSES = 4


def main():
    try:
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel
    except ImportError as e:
        print(f"pytorch-ddp: PyTorch is not installed for {sys.executable} ({e}); on Debian: apt-get install python3-torch",
              file=sys.stderr)
        return 2
    from slipstream import Slipstream
    from slipstream.torch import allreduce_in_rank_order, restore_state, save_state

    # One thread, deterministic kernels: the same sums in the same order in every attempt.
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    slipstream = Slipstream.from_environment()
    preemption = slipstream.preemption
    # SIGTERM only sets preemption.stop_requested: the loop saves after a whole step, then acknowledges.
    preemption.watch()

    dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(minutes=5))
    rank, world = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(SEED)  # the same initial weights everywhere (DDP also broadcasts rank 0's)
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                                torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, CLASSES))
    ddp = DistributedDataParallel(model)
    # Gradients summed in rank order: a ring all-reduce adds each element in an order that depends on where it lies
    # in its bucket, and DDP lays its buckets out anew in the first step of every process (a resumed one too).
    ddp.register_comm_hook(None, allreduce_in_rank_order())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    inputs, labels = dataset(torch)
    steps_per_epoch = max(1, SAMPLES // (BATCH * world))
    torch.manual_seed(SEED + 1 + rank)  # each rank's own dropout masks

    checkpoints = slipstream.checkpoints(keep=3)
    start = 0
    restored = restore_state(checkpoints, model, optimizer)
    if restored is not None:
        start = restored.step
        expected = position(start, steps_per_epoch)
        if restored.data_position != expected:
            raise SystemExit(f"pytorch-ddp: the checkpoint's data position {restored.data_position} is not step {start}'s {expected}")
        print(f"rank {rank} resumes from the checkpoint of step {start}", flush=True)
    agree = torch.tensor([start, -start], dtype=torch.int64)
    dist.all_reduce(agree, op=dist.ReduceOp.MAX)
    if agree[0].item() != start or -agree[1].item() != start:
        raise SystemExit(f"pytorch-ddp: ranks disagree on the step to resume from (rank {rank} has {start})")
    if rank == 0:
        print(f"{world} ranks, {sum(p.numel() for p in model.parameters())} parameters, steps {start + 1}..{STEPS}", flush=True)

    def checkpoint(step):
        # Every rank's own random states (each draws its own dropout masks): a collective, rank 0 writes.
        save_state(checkpoints, step, model, optimizer, position(step, steps_per_epoch), every_rank_rng=True)
        dist.barrier()  # nobody acknowledges a stop before the checkpoint is on disk

    completed = last_saved = start
    stopped = False
    loss_function = torch.nn.CrossEntropyLoss()
    try:
        for step in range(start + 1, STEPS + 1):
            # Every rank stops after the same step: a rank told first tells the others.
            stop = torch.tensor([1 if preemption.stop_requested.is_set() else 0])
            dist.all_reduce(stop, op=dist.ReduceOp.MAX)
            if stop.item():
                notice = preemption.notice()
                print(f"rank {rank}: stop requested ({notice.reason if notice else 'by a peer'})", flush=True)
                stopped = True
                break
            if STEP_MILLIS:
                time.sleep(STEP_MILLIS / 1000)
            x, y = batch(torch, inputs, labels, step, rank, world, steps_per_epoch)
            optimizer.zero_grad()
            loss = loss_function(ddp(x), y)
            loss.backward()
            optimizer.step()
            completed = step
            slipstream.progress.report(step, {"loss": loss.item()})
            if rank == 0 and (step % LOG_EVERY == 0 or step == start + 1):
                print(f"step {step}/{STEPS} loss {loss.item():.6f}", flush=True)
            if CHECKPOINT_EVERY > 0 and step % CHECKPOINT_EVERY == 0:
                checkpoint(step)
                last_saved = step
        if stopped:
            if completed > last_saved:
                checkpoint(completed)
                if rank == 0:
                    print(f"rank 0 saved the checkpoint of step {completed} on the stop notice", flush=True)
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
    print(f"final loss {loss.item():.6f}" if STEPS > start else "nothing left to train", flush=True)
    print(f"final weights sha256={digest.hexdigest()}", flush=True)
    leave(dist)
    return 0


def leave(dist):
    """Leaves the group once every rank is done: after the barrier no peer still waits on this rank's part of the last
    all-reduce, so the process may end. No destroy_process_group: once rank 0, which hosts the store, is gone, gloo's
    teardown can spin inside C++ with the GIL held, where no Python watchdog runs; ending the process closes every
    socket. The results are printed by now, so a peer that went away during the barrier changes nothing."""
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


def position(step, steps_per_epoch):
    """Where the data stands after `step`: the epoch, and the batches of it done."""
    return {"epoch": step // steps_per_epoch, "batch": step % steps_per_epoch}


def batch(torch, inputs, labels, step, rank, world, steps_per_epoch):
    """Step `step`'s batch of this rank: each epoch is its own shuffle, each rank its own slice of it."""
    epoch, index = divmod(step - 1, steps_per_epoch)
    order = torch.randperm(SAMPLES, generator=torch.Generator().manual_seed(SEED * 100003 + epoch))
    begin = (index * world + rank) * BATCH
    chosen = order[begin:begin + BATCH]
    return inputs[chosen], labels[chosen]


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Straight out: the interpreter's own teardown would join gloo's threads, with nothing left to wait for.
    os._exit(code)
