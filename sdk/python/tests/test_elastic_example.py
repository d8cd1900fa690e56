"""examples/pytorch-elastic/train.py run as an elastic run runs it, without the platform: real processes, gloo on this
machine, the variables and files each instance gets set by hand. Uninterrupted at 4 ranks and at 2, and one that
starts at 4, shrinks to 2 and grows back to 4 through the stop notices of docs/elastic.md: all end with one digest."""

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

import support  # noqa: F401  (the SDK from this tree)
from support import SDK
from slipstream.checkpoints import Checkpoints

try:
    import torch  # noqa: F401
except ImportError:
    torch = None

EXAMPLE = SDK.parent.parent / "examples" / "pytorch-elastic" / "train.py"
STEPS = 60
# Hang guards only: how long a world may take to get somewhere before the test gives up on it.
PATIENCE = 180


class Rank:
    """One instance's process in one world, with the files the platform gives each launch of it."""

    def __init__(self, rank, world, version, port, checkpoints: Path, launch: Path, settings):
        launch.mkdir(parents=True)
        self.rank = rank
        self.checkpoints = checkpoints
        self.notice, self.ack = launch / "preemption_notice.json", launch / "preemption_ack"
        env = dict(os.environ, PYTHONPATH=str(SDK), RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), SLIPSTREAM_RUN_ID="elastic-test", SLIPSTREAM_ATTEMPT="1",
                   SLIPSTREAM_RANK=str(rank), SLIPSTREAM_WORLD_SIZE=str(world), SLIPSTREAM_WORLD_VERSION=str(version),
                   SLIPSTREAM_CHECKPOINT_DIR=str(checkpoints), SLIPSTREAM_PREEMPTION_NOTICE_FILE=str(self.notice),
                   SLIPSTREAM_PREEMPTION_ACK_FILE=str(self.ack), SLIPSTREAM_PROGRESS_FILE=str(launch / "progress.json"),
                   STEPS=str(STEPS), CHECKPOINT_EVERY="20", SEED="42", LOG_EVERY="1", **settings)
        self.process = subprocess.Popen([sys.executable, str(EXAMPLE)], env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        self.lines = queue.Queue()
        self.output = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.output.append(line)
            self.lines.put(line)
        self.lines.put(None)  # the process closed its output

    def wait_for_step(self, step):
        """Polls rank 0's log (a line per step) until it has done ``step``."""
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                raise AssertionError(f"rank {self.rank} ended before step {step}:\n{self.text()}")
            done = re.match(r"step (\d+)/", line)
            if done and int(done.group(1)) >= step:
                return
        raise AssertionError(f"rank {self.rank} did not reach step {step} in {PATIENCE} s:\n{self.text()}")

    def notify(self, reason):
        """The notice as the platform writes it: whole (a temporary file renamed), before SIGTERM."""
        temporary = self.notice.with_suffix(".tmp")
        temporary.write_text(json.dumps({"reason": reason, "deadline": "2099-01-01T00:00:00Z"}))
        os.replace(temporary, self.notice)

    def finish(self):
        try:
            code = self.process.wait(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError(f"rank {self.rank} did not exit in {PATIENCE} s:\n{self.text()}") from None
        self.reader.join()
        self.process.stdout.close()
        if code != 0:
            raise AssertionError(f"rank {self.rank} exited with {code}:\n{self.text()}")
        return self.text()

    def text(self):
        return "".join(self.output)

    def close(self):
        """After a failure: nothing left running."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.reader.join()
        self.process.stdout.close()


@unittest.skipIf(torch is None, f"PyTorch is not installed for {sys.executable}: the elastic example is not run")
@unittest.skipUnless(EXAMPLE.is_file(), f"{EXAMPLE} is not there (the SDK was installed without its repository)")
class ElasticExampleTest(unittest.TestCase):
    def setUp(self):
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.tmp = Path(directory.name)

    def world(self, size, version, checkpoints, **settings):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        ranks = [Rank(rank, size, version, port, checkpoints, self.tmp / checkpoints.name / f"world-{version}" / f"rank-{rank}",
                      settings) for rank in range(size)]
        for rank in ranks:
            self.addCleanup(rank.close)
        return ranks

    def change(self, ranks, reasons):
        """Every instance gets its notice, then SIGTERM; each saves if rank 0, acknowledges and exits 0. Returns the
        step they stopped after."""
        for rank, reason in zip(ranks, reasons):
            rank.notify(reason)
        for rank in ranks:
            rank.process.send_signal(signal.SIGTERM)
        outputs = [rank.finish() for rank in ranks]
        self.assertTrue(all(rank.ack.exists() for rank in ranks), "every rank acknowledged")
        stopped = {int(step) for output in outputs for step in re.findall(r"rank \d+ stops after step (\d+)", output)}
        self.assertEqual(len(stopped), 1, f"every rank stops after the same step:\n{''.join(outputs)}")
        step = stopped.pop()
        latest = Checkpoints(ranks[0].checkpoints).latest()
        self.assertEqual(latest.step if latest else None, step, "the newest checkpoint is of that step (saved on the "
                         "notice, or periodic if the step was a multiple of CHECKPOINT_EVERY)")
        return step, outputs

    def digests(self, ranks):
        outputs = [rank.finish() for rank in ranks]
        found = [re.findall(r"final weights sha256=([0-9a-f]{64})", output) for output in outputs]
        self.assertTrue(all(len(each) == 1 for each in found), "\n".join(outputs))
        return {each[0] for each in found}

    def test_a_run_that_shrinks_and_grows_ends_with_the_weights_of_one_that_never_changed_size(self):
        at_4 = self.digests(self.world(4, 1, self.tmp / "at-4"))
        at_2 = self.digests(self.world(2, 1, self.tmp / "at-2"))
        self.assertEqual(len(at_4), 1, "one digest on every rank")
        self.assertEqual(at_2, at_4, "the world size changes no bit")

        # Steps take 50 ms at least (results unchanged) so that each notice lands mid-run however loaded the machine.
        checkpoints = self.tmp / "elastic"
        ranks = self.world(4, 1, checkpoints, STEP_MILLIS="50")
        ranks[0].wait_for_step(10)
        shrink = "the run shrinks from 4 to 2 instances (world 2)"
        first, outputs = self.change(ranks, [f"WorldChange: {shrink}"] * 2 + [f"Shrunk: {shrink}"] * 2)
        self.assertIn("rank 1: the world changes, saves and starts again in the new one", outputs[1])
        self.assertIn("rank 3: leaves the run, which goes on without it", outputs[3])

        ranks = self.world(2, 2, checkpoints, STEP_MILLIS="50")
        ranks[0].wait_for_step(first + 10)
        second, outputs = self.change(ranks, ["WorldChange: the run grows from 2 to 4 instances (world 3)"] * 2)
        self.assertIn(f"rank 1 resumes from the checkpoint of step {first}", outputs[1])
        self.assertIn("world 2: 2 ranks", outputs[0])
        self.assertLess(first, second)
        self.assertLess(second, STEPS, "the second notice came before the end")

        ranks = self.world(4, 3, checkpoints)
        self.assertEqual(self.digests(ranks), at_4, "grown back to 4: the weights of a run that never changed size")
        self.assertIn(f"rank 3 resumes from the checkpoint of step {second}", ranks[3].text())


if __name__ == "__main__":
    unittest.main()
