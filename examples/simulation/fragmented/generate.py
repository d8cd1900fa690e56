#!/usr/bin/env python3
"""Writes trace.csv: 4 tenants on 32 x 8 GPUs, 80% of the jobs 1 GPU, 20% 4 x 8-GPU gangs; offered load about 90%.

vision and speech (32 GPUs each) run 1-GPU jobs only, about 50 GPUs' worth each (the rest borrowed); nlp and
robotics (96 GPUs each) run the gangs and a few 1-GPU jobs, about 64 GPUs' worth each, so their gangs usually fit
their guarantee and wait only if no 4 nodes are whole. Seeded, so the file is the same on every run: python3 generate.py > trace.csv
"""
import random

rng = random.Random(19)
HOURS = 14 * 24          # two weeks of submissions
JOBS_PER_HOUR = 8.0      # 8 x (0.8 x 1 GPU x 20 h + 0.2 x 32 GPUs x 2 h) = 230 GPU-h/h of 256 GPUs
print("submit_time,duration,tenant,gpus,instances")
t = 0.0
while True:
    t += rng.expovariate(JOBS_PER_HOUR / 3600.0)
    if t > HOURS * 3600:
        break
    if rng.random() < 0.8:
        tenant = rng.choices(["vision", "speech", "nlp", "robotics"], weights=[4, 4, 1, 1])[0]
        print(f"{t:.0f},{rng.expovariate(1 / 72000.0) + 60:.0f},{tenant},1,1")
    else:
        tenant = rng.choice(["nlp", "robotics"])
        print(f"{t:.0f},{rng.expovariate(1 / 7200.0) + 600:.0f},{tenant},8,4")
