"""PyTorch training state in Slipstream checkpoints, so that a resumed run continues exactly where it stopped.

A checkpoint holds the model's state_dict (a DistributedDataParallel or DataParallel wrapper is unwrapped), the
optimizer's, the random number generators' states (PyTorch's CPU generator, the current CUDA device's when CUDA is in
use, Python's ``random``, NumPy's global one if NumPy is there), where the data loader was, and anything ``extra``:
written with torch.save into the SDK's checkpoint format (``Checkpoints.save``). Restored, the next step draws the
same random numbers and sees the same data as it would have without the interruption, so the run ends bit-identical
to an uninterrupted one (same hardware, same PyTorch, deterministic kernels).

In DDP, every rank calls both: save_state writes on rank 0 only (the others return False); every rank restores from
the same newest checkpoint. By default the random states saved are rank 0's, which every rank restores: right when
the ranks seed alike (the sampler shards the data, not the generator). Ranks that draw their own random numbers
(dropout seeded per rank, say) pass ``every_rank_rng=True``: save_state then gathers each rank's states (a collective:
every rank must call it, for the same step) and each rank restores its own.

Bit-identical resumption also needs the gradients summed in the same order in every attempt: a ring all-reduce adds
each element in an order that depends on where it lies in its bucket, and DDP lays its buckets out anew in the first
step of every process. ``allreduce_in_rank_order`` is a DDP communication hook that sums in rank order instead.

Elastic runs change their world size while they train; for results that do not change with it, a fixed global batch
is split into a fixed number of virtual shards whose gradients are added in shard order on every rank:
``elastic_backward``, ``shard_range`` and ``shard_seed`` (from ``slipstream.shards``, which says why and what it costs).

This module imports PyTorch when one of its functions is called, never at ``import slipstream``.
"""

import io
import os
import random
from dataclasses import dataclass
from typing import Any, Optional

from .shards import elastic_backward, shard_range, shard_seed  # noqa: F401  (the elastic recipe, docs/pytorch.md)

FORMAT = 1


@dataclass(frozen=True)
class Restored:
    """What restore_state gives back: the step the checkpoint was taken after (training goes on at ``step + 1``, or
    at ``step`` if steps count from 0 — whatever the caller saved), where the data was, and the caller's extra."""

    step: int
    data_position: Any
    extra: Any


def is_writer(rank: Optional[int] = None) -> bool:
    """Whether this process writes checkpoints: rank 0. ``rank`` None: torch.distributed's rank if it is
    initialised, else SLIPSTREAM_RANK (or RANK), else 0."""
    return _rank(rank) == 0


def save_state(checkpoints, step: int, model, optimizer=None, data_position: Any = None, extra: Any = None,
               rank: Optional[int] = None, every_rank_rng: bool = False) -> bool:
    """Saves the training state as the checkpoint of ``step``; returns whether this process wrote it (rank 0).
    ``every_rank_rng``: gather every rank's random states (torch.distributed must be initialised; every rank calls)."""
    rng_by_rank = None
    if every_rank_rng:
        import torch
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized()):
            raise ValueError("every_rank_rng needs torch.distributed initialised (init_process_group)")
        rng_by_rank = [None] * dist.get_world_size()
        dist.all_gather_object(rng_by_rank, _rng_state(torch))
    if not is_writer(rank):
        return False
    import torch

    state = {
        "format": FORMAT,
        "step": int(step),
        "model": _unwrap(model).state_dict(),
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
        "data_position": data_position,
        "extra": extra,
        "rng": _rng_state(torch),
        "rng_by_rank": rng_by_rank,
    }
    buffer = io.BytesIO()
    torch.save(state, buffer)
    checkpoints.save(int(step), buffer.getbuffer())  # a view: a large state is not copied once more
    return True


def restore_state(checkpoints, model, optimizer=None, restore_rng: bool = True,
                  weights_only: bool = False) -> Optional[Restored]:
    """Loads the newest complete checkpoint into ``model`` (and ``optimizer``), restores the random states; None if
    there is no checkpoint yet (a first attempt). ``weights_only=True`` unpickles tensors and plain types only: safer
    where others can write the checkpoint directory, if ``extra`` is plain too (PyTorch 2; 1.13's knows no floats).
    The default reads what save_state wrote on any PyTorch, whatever torch.load's own default is."""
    checkpoint = checkpoints.latest()
    if checkpoint is None:
        return None
    import torch

    options = {"map_location": "cpu"}  # load_state_dict copies onto the parameters' own devices
    if weights_only or _load_knows_weights_only(torch):
        options["weights_only"] = weights_only  # explicit: PyTorch 2.6 changed the default to True
    state = torch.load(io.BytesIO(checkpoint.data), **options)
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise ValueError(f"checkpoint {checkpoint.step} in {checkpoints.directory} was not written by "
                         "slipstream.torch.save_state (or by a version of another format)")
    _unwrap(model).load_state_dict(state["model"])
    if optimizer is not None:
        if state["optimizer"] is None:
            raise ValueError(f"checkpoint {checkpoint.step} has no optimizer state")
        optimizer.load_state_dict(state["optimizer"])
    if restore_rng:
        by_rank = state.get("rng_by_rank")
        if by_rank is not None:
            mine = _rank(None)
            if mine >= len(by_rank):
                raise ValueError(f"checkpoint {checkpoint.step} has the random states of {len(by_rank)} ranks, not of rank {mine}")
            _set_rng_state(torch, by_rank[mine])
        else:
            _set_rng_state(torch, state["rng"])
    return Restored(state["step"], state["data_position"], state["extra"])


def allreduce_in_rank_order(process_group=None):
    """A DDP communication hook: every rank gets the mean of all ranks' gradients, added up in rank order, so that the
    sums are the same whatever the bucket layout. ``ddp.register_comm_hook(None, allreduce_in_rank_order())``. It
    gathers every rank's buckets (world size times the memory of a bucket): meant for exactness, not for speed."""
    import torch
    import torch.distributed as dist

    def hook(state, bucket):
        gradients = bucket.buffer()
        world = dist.get_world_size(process_group)
        gathered = [torch.empty_like(gradients) for _ in range(world)]
        dist.all_gather(gathered, gradients, group=process_group)
        total = gathered[0].clone()
        for other in gathered[1:]:
            total += other
        future = torch.futures.Future()
        future.set_result(total / world)
        return future

    return hook


def _load_knows_weights_only(torch) -> bool:
    import inspect

    try:
        return "weights_only" in inspect.signature(torch.load).parameters
    except (TypeError, ValueError):
        return False


def _rank(rank: Optional[int]) -> int:
    if rank is not None:
        return int(rank)
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return dist.get_rank()
    except ImportError:
        pass
    for name in ("SLIPSTREAM_RANK", "RANK"):
        value = os.environ.get(name)
        if value:
            return int(value)
    return 0


def _unwrap(model):
    import torch

    wrappers = (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)
    while isinstance(model, wrappers):
        model = model.module
    return model


def _rng_state(torch) -> dict:
    # Plain types (lists, ints) besides tensors: loadable with weights_only as well.
    version, internal, gauss = random.getstate()
    state = {"torch": torch.get_rng_state(), "python": [version, list(internal), gauss], "cuda": None, "numpy": None}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state()  # this process's device only: DDP gives each rank one
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None:
        kind, keys, pos, has_gauss, cached = numpy.random.get_state()
        state["numpy"] = [kind, [int(k) for k in keys], int(pos), int(has_gauss), float(cached)]
    return state


def _set_rng_state(torch, state: dict) -> None:
    torch.set_rng_state(state["torch"])
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    if state.get("cuda") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"])
    if state.get("numpy") is not None:
        try:
            import numpy
        except ImportError:
            return  # saved where NumPy was, restored where it is not: nothing here draws from it
        kind, keys, pos, has_gauss, cached = state["numpy"]
        numpy.random.set_state((kind, numpy.array(keys, dtype=numpy.uint32), pos, has_gauss, cached))
