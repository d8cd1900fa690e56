"""Virtual shards: data-parallel steps that are bit-identical whatever the world size, for elastic runs.

An elastic run changes its world size while it trains (docs/elastic.md). With DDP's all_reduce its results would
change with it even if every sample were the same: all_reduce adds the ranks' gradients in an order (a ring, a tree)
that depends on how many ranks there are, and floating-point addition is not associative. Here the unit of work is
not the rank but the shard. Each step's global batch is split into a fixed number of shards, dealt to the ranks in
contiguous runs (``shard_range``); each shard's gradient is computed on its own, with random numbers of its own
(``shard_seed(seed, step, shard)`` seeds PyTorch's generator, so dropout draws the same masks on any rank); every rank
then gathers every shard's gradient and adds them in shard order, 0 to S-1. A shard's gradient has the same bits
whichever rank computes it, and the sum has the same bits on every rank and at every world size, so the optimizer
step has too.

The shards must be at least the largest world size (an elastic group's ``replicas``): a rank without a shard is
refused (ValueError), not left idle. A number of shards that the world sizes divide keeps the ranks' work even; one
they do not divide gives some ranks one shard more (8 shards over 3 ranks: 2, 3, 3), with the same results.

What it costs: every rank receives every shard's gradient (padded to the most shards a rank has, times the world
size), in memory and in traffic, where all_reduce moves about twice the gradients: right for exactness and small or
middling models. Not covered: buffers that the forward pass updates (BatchNorm's running statistics), which each rank
updates from its own shards only; random numbers drawn from anything but PyTorch's generator (Python's ``random``,
NumPy), which the shard's seed does not reach.

``slipstream.torch`` exports these; PyTorch is imported when ``elastic_backward`` is called, never before.
"""

import hashlib
from contextlib import contextmanager
from typing import Any, Callable


def shard_range(rank: int, world_size: int, shards: int) -> range:
    """The shards of ``rank``: a contiguous run, the ranks in order, their sizes differing by one at most."""
    if shards < 1:
        raise ValueError(f"shards must be at least 1, not {shards}")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not in a world of {world_size}")
    if shards < world_size:
        raise ValueError(f"{world_size} ranks but {shards} shards: every rank needs a shard, so the shards must be at "
                         "least the largest world size (an elastic group's replicas)")
    return range(rank * shards // world_size, (rank + 1) * shards // world_size)


def shard_seed(seed: int, step: int, shard: int) -> int:
    """The seed of one shard's random numbers in one step: a function of the three alone, never of the rank."""
    digest = hashlib.sha256(f"slipstream-shard/{seed}/{step}/{shard}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1  # 63 bits: any of PyTorch's generators takes it


def elastic_backward(model, loss_of_shard: Callable[[int], Any], step: int, shards: int, seed: int = 0,
                     process_group=None) -> float:
    """Computes this rank's shards' gradients and leaves in every parameter's ``.grad`` (replacing what was there) the
    mean of all ``shards`` shards' gradients, added in shard order: the same bits on every rank and at any world size.
    Returns the mean of the shards' losses, likewise. Then step the optimizer.

    ``loss_of_shard(shard)`` computes the loss of that shard of this step's global batch (the same shards at any world
    size: slice a fixed batch into ``shards`` equal parts); it runs with PyTorch's generator seeded by
    ``shard_seed(seed, step, shard)`` (the caller's random state is put back afterwards). ``model`` is the module
    itself, not wrapped in DistributedDataParallel: this replaces DDP's all-reduce. Without torch.distributed
    initialised, the world is this process alone. Every rank calls it for the same step (a collective)."""
    import torch
    import torch.distributed as dist

    if isinstance(model, (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)):
        raise ValueError("pass the module itself, not its DistributedDataParallel wrapper: its all-reduce would add "
                         "the gradients in an order that depends on the world size")
    distributed = dist.is_available() and dist.is_initialized()
    rank = dist.get_rank(process_group) if distributed else 0
    world = dist.get_world_size(process_group) if distributed else 1
    mine = shard_range(rank, world, shards)
    parameters = [p for p in model.parameters() if p.requires_grad]
    if not parameters:
        raise ValueError("the model has no parameter that requires a gradient")
    dtypes = {p.dtype for p in parameters}
    if len(dtypes) > 1:
        raise ValueError(f"the parameters are of several dtypes ({sorted(map(str, dtypes))}): one is needed")
    size = sum(p.numel() for p in parameters)

    # One row per shard of this rank: its gradient, flat, then its loss; padded to the most shards a rank has, so
    # that every rank sends a tensor of one shape.
    rows = torch.zeros(-(-shards // world), size + 1, dtype=parameters[0].dtype, device=parameters[0].device)
    for row, shard in enumerate(mine):
        with _random_state(torch, shard_seed(seed, step, shard)):
            loss = loss_of_shard(shard)
            if loss.numel() != 1:
                raise ValueError(f"the loss of shard {shard} has {loss.numel()} elements: one is needed (reduce it, mean)")
            gradients = torch.autograd.grad(loss, parameters, allow_unused=True)
        offset = 0
        for parameter, gradient in zip(parameters, gradients):
            if gradient is not None:  # unused in this shard: a zero gradient
                rows[row, offset:offset + parameter.numel()] = gradient.reshape(-1)
            offset += parameter.numel()
        rows[row, size] = loss.detach().reshape(())

    if distributed:
        gathered = [torch.empty_like(rows) for _ in range(world)]
        dist.all_gather(gathered, rows, group=process_group)
    else:
        gathered = [rows]
    total = None
    for owner in range(world):  # ranks in order hold the shards in order
        for row in range(len(shard_range(owner, world, shards))):
            total = gathered[owner][row].clone() if total is None else total.add_(gathered[owner][row])
    mean = total / shards
    offset = 0
    for parameter in parameters:
        parameter.grad = mean[offset:offset + parameter.numel()].view_as(parameter).clone()
        offset += parameter.numel()
    return mean[size].item()


@contextmanager
def _random_state(torch, seed: int):
    """PyTorch's generator (the CPU's, and the current CUDA device's where CUDA is in use) seeded with ``seed``
    inside, the caller's state back after."""
    cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    with torch.random.fork_rng(devices=[torch.cuda.current_device()] if cuda else []):
        torch.random.default_generator.manual_seed(seed)
        if cuda:
            torch.cuda.manual_seed(seed)  # the current device's only, the one forked
        yield
