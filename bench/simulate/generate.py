#!/usr/bin/env python3
"""Writes a synthetic trace and its experiment for the simulator's scale benchmark (bench/run simulate-scale).

   bench/simulate/generate.py OUT_DIR [--jobs 1000000] [--nodes 10000] [--days 30] [--seed 1]

The cluster is NODES x 8 GPUs; tenants are 20 teams whose quotas are proportional to their GPU-hours. Jobs arrive
as a Poisson process over DAYS: 70% one GPU (a notebook, a small fine-tune), 20% a whole 8-GPU node, 10% gangs of
2 to 8 whole nodes; durations are log-normal (median 1 h, heavy tail, at most 7 days), scaled so the cluster's
offered load equals its capacity (--load 1.0: Poisson arrivals then build a queue, and borrowers are reclaimed).
Deterministic for a seed. Standard library only.
"""
import argparse
import math
import os
import random


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--days", type=float, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--load", type=float, default=1.0, help="offered GPU-hours over the cluster's GPU-hours (1.0: a queue builds and borrowers are reclaimed)")
    args = parser.parse_args()
    if args.jobs < 1 or args.nodes < 1 or args.days <= 0 or not 0 < args.load <= 4:
        parser.error("jobs and nodes must be positive, days > 0, 0 < load <= 4")
    rng = random.Random(args.seed)
    tenants = [f"team{i:02d}" for i in range(20)]
    # Some teams submit far more than others (Zipf-like), as in every shared cluster.
    weights = [1 / (i + 1) ** 0.8 for i in range(len(tenants))]
    span = args.days * 86_400
    rows = []
    t = 0.0
    rate = args.jobs / span
    for _ in range(args.jobs):
        t += rng.expovariate(rate)
        shape = rng.random()
        if shape < 0.7:
            gpus, instances = 1, 1
        elif shape < 0.9:
            gpus, instances = 8, 1
        else:
            gpus, instances = 8, rng.choice((2, 2, 4, 4, 8))
        duration = min(7 * 86_400, rng.lognormvariate(math.log(3_600), 1.3))
        rows.append([t, duration, rng.choices(tenants, weights)[0], gpus, instances])
    offered = sum(r[1] * r[3] * r[4] for r in rows)
    capacity = args.nodes * 8 * span
    scale = args.load * capacity / offered
    hours = {name: 0.0 for name in tenants}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "trace.csv"), "w") as out:
        out.write("submit_time,duration,tenant,gpus,instances\n")
        for submit, duration, tenant, gpus, instances in rows:
            duration = max(1.0, min(7 * 86_400, duration * scale))
            hours[tenant] += duration * gpus * instances / 3_600
            out.write(f"{submit:.3f},{duration:.3f},{tenant},{gpus},{instances}\n")
    with open(os.path.join(args.out, "experiment.yaml"), "w") as out:
        out.write(f"""# Synthetic: {args.jobs:,} jobs of {len(tenants)} teams over {args.days:g} days on {args.nodes:,} nodes x 8 GPUs
# (bench/simulate/generate.py {args.out} --jobs {args.jobs} --nodes {args.nodes} --days {args.days:g} --seed {args.seed}).
name: synthetic-{args.jobs}
seed: {args.seed}
trace: {{csv: trace.csv}}
cluster: "{args.nodes} x 8"
quotas:
  proportionalTo: gpuHours
defaults:
  schedulingInterval: 10s
  gracePeriod: 30s
policies:
  - name: borrowing-checkpoint-on-notice
    idleMode: Acceptable
    checkpoint: {{interval: 30m, save: 30s, onNotice: true}}
""")
    print(f"{args.out}: {args.jobs:,} jobs, {sum(hours.values()):,.0f} GPU-hours offered on {args.nodes * 8:,} GPUs over {args.days:g} days")


if __name__ == "__main__":
    main()
