"""Two ranks of a gloo group for test_torch: ``python -c 'import torch_ranks; torch_ranks.main()' MODE DIR``, with
RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set. Each rank seeds its generator differently, as a program with
per-rank dropout does.

MODE save: draws, saves with every_rank_rng at step 7, then prints its next draws. restore: a fresh process, seeded
otherwise, restores and prints its next draws: each rank's must be the ones it drew after the save. hook: one DDP step
with allreduce_in_rank_order; prints whether every gradient is the mean of the ranks' own, added in rank order.
elastic: three SGD steps of a model with dropout on 8 virtual shards, with elastic_backward and, as DDP would, with
all_reduce of each rank's sum; prints the weights' SHA-256 after each: ``ordered=<hex> allreduce=<hex>``.
"""

import datetime
import sys

import torch
import torch.distributed as dist

import support  # noqa: F401  (the SDK from this tree)
from slipstream.checkpoints import Checkpoints
from slipstream.torch import allreduce_in_rank_order, restore_state, save_state


def main():
    mode, directory = sys.argv[1], sys.argv[2]
    dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(seconds=60))
    rank = dist.get_rank()
    torch.manual_seed(1000 + rank if mode != "restore" else 5)
    model = torch.nn.Linear(4, 3)
    checkpoints = Checkpoints(directory)
    if mode == "elastic":
        print(f"ordered={elastic(rank, ordered=True)} allreduce={elastic(rank, ordered=False)}")
    elif mode == "save":
        torch.rand(5)
        save_state(checkpoints, 7, model, every_rank_rng=True)
        print(torch.rand(3).tolist())
    elif mode == "restore":
        restored = restore_state(checkpoints, model)
        print(restored.step, torch.rand(3).tolist())
    else:
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        ddp.register_comm_hook(None, allreduce_in_rank_order())
        inputs = torch.randn(8, 4)
        ddp(inputs).square().sum().backward()
        own = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        model(inputs).square().sum().backward()
        local = torch.cat([p.grad.flatten() for p in model.parameters()])
        every = [torch.empty_like(local) for _ in range(dist.get_world_size())]
        dist.all_gather(every, local)
        expected = (every[0] + every[1]) / 2
        print(torch.equal(torch.cat([g.flatten() for g in own]), expected))
    dist.destroy_process_group()


def elastic(rank, ordered):
    import hashlib

    from slipstream.shards import elastic_backward, shard_range, shard_seed

    torch.set_num_threads(1)
    shards, per_shard = 8, 4
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 32), torch.nn.ReLU(), torch.nn.Dropout(0.3), torch.nn.Linear(32, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    generator = torch.Generator().manual_seed(1)
    inputs, targets = torch.randn(3, shards * per_shard, 6, generator=generator), torch.randn(3, shards * per_shard, 3, generator=generator)
    for step in range(3):
        def loss_of_shard(shard):
            rows = slice(shard * per_shard, (shard + 1) * per_shard)
            return torch.nn.functional.mse_loss(model(inputs[step, rows]), targets[step, rows])

        if ordered:
            elastic_backward(model, loss_of_shard, step, shards, seed=7)
        else:  # the shards of this rank added up locally, then all_reduce: its order depends on the world size
            optimizer.zero_grad()
            for shard in shard_range(rank, dist.get_world_size(), shards):
                with torch.random.fork_rng(devices=[]):
                    torch.manual_seed(shard_seed(7, step, shard))
                    loss_of_shard(shard).backward()
            for parameter in model.parameters():
                dist.all_reduce(parameter.grad)
                parameter.grad /= shards
        optimizer.step()
    digest = hashlib.sha256()
    for tensor in model.state_dict().values():
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()


if __name__ == "__main__":
    main()
