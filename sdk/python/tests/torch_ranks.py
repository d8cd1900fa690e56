"""Two ranks of a gloo group for test_torch: ``python -c 'import torch_ranks; torch_ranks.main()' MODE DIR``, with
RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set. Each rank seeds its generator differently, as a program with
per-rank dropout does.

MODE save: draws, saves with every_rank_rng at step 7, then prints its next draws. restore: a fresh process, seeded
otherwise, restores and prints its next draws: each rank's must be the ones it drew after the save. hook: one DDP step
with allreduce_in_rank_order; prints whether every gradient is the mean of the ranks' own, added in rank order.
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
    if mode == "save":
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


if __name__ == "__main__":
    main()
