"""PyTorch training state in Slipstream checkpoints, so that a resumed run continues exactly where it stopped.

A checkpoint holds the model's state_dict (a DistributedDataParallel or DataParallel wrapper is unwrapped), the
optimizer's, the random number generators' states (PyTorch's CPU generator, the current CUDA device's when CUDA is in
use, Python's ``random``, NumPy's global one if NumPy is there), where the data loader was, and anything ``extra``:
written with torch.save into the SDK's checkpoint format (``Checkpoints.save``). Restored, the next step draws the
same random numbers and sees the same data as it would have without the interruption, so the run ends bit-identical
to an uninterrupted one (same hardware, same PyTorch, deterministic kernels).

In DDP, every rank calls both: save_state writes on rank 0 only (the others return False at once); every rank
restores from the same newest checkpoint. The random states saved are rank 0's, which every rank restores: right
when the ranks seed alike, as DDP programs usually do (the sampler shards the data, not the generator).

This module imports PyTorch when one of its functions is called, never at ``import slipstream``.
"""

import io
import os
import random
from dataclasses import dataclass
from typing import Any, Optional

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
               rank: Optional[int] = None) -> bool:
    """Saves the training state as the checkpoint of ``step``; returns whether this process wrote it (rank 0)."""
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
        _set_rng_state(torch, state["rng"])
    return Restored(state["step"], state["data_position"], state["extra"])


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
