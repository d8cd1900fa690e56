"""A learning-rate sweep from Python: 20 runs of sweep.yaml's job, each with its own LR, submitted at once, waited
for, and their results collected from their output. With a server up (./slipstream server) and as its admin:

    PYTHONPATH=sdk/python python3 examples/python-client/sweep.py

(or ``pip install ./sdk/python`` first). The client finds the server and token where the CLI does.
"""

import re
import sys
import uuid
from pathlib import Path
from typing import Dict, Iterable, Optional

from slipstream import Client

RESULT = re.compile(r"^result lr=(\S+) w=(\S+) loss=(\S+)$")


def sweep(client: Client, rates: Iterable[float], steps: int = 10, label: Optional[str] = None) -> Dict[float, float]:
    """Runs the job once per learning rate, its runs labelled ``sweep=<label>`` (a new label unless given); returns
    each rate's final loss (a run that failed has none)."""
    label = label or "lr-" + uuid.uuid4().hex[:8]
    runs = {lr: client.submit("sweeps", "fit", overrides={"nodeGroups.main.env.LR": str(lr), "nodeGroups.main.env.STEPS": str(steps)},
                              labels={"sweep": label, "lr": str(lr)})
            for lr in rates}
    losses = {}
    for lr, run in runs.items():
        done = client.wait(run.id, timeout=600)
        if not done.succeeded:
            print(f"{run.id} (lr={lr}) ended {done.state}: {done.reason}", file=sys.stderr)
            continue
        for line in client.logs(run.id, prefix=False):
            match = RESULT.match(line)
            if match:
                losses[lr] = float(match.group(3))
    return losses


def main() -> int:
    client = Client()
    client.apply(Path(__file__).with_name("sweep.yaml"))
    rates = [round(0.15 * (i + 1), 2) for i in range(20)]  # 0.15 to 3.0: the largest ones diverge
    losses = sweep(client, rates)
    for lr in rates:
        print(f"lr {lr:5.2f}  loss {losses[lr]:.3e}" if lr in losses else f"lr {lr:5.2f}  no result")
    if not losses:
        print(f"no result: 0 of {len(rates)} runs succeeded")
        return 1
    best = min(losses, key=losses.__getitem__)
    print(f"best: lr {best} (loss {losses[best]:.3e}), {len(losses)} of {len(rates)} runs")
    return 0 if len(losses) == len(rates) else 1


if __name__ == "__main__":
    sys.exit(main())
