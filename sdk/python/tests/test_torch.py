import os
import socket
import subprocess
import sys
import tempfile
import unittest

import support  # noqa: F401  (the SDK from this tree)
from support import SDK, TESTS, run_python

try:
    import torch  # noqa: F401
except ImportError:
    torch = None


@unittest.skipIf(torch is None, "PyTorch is not installed")
class TorchStateTest(unittest.TestCase):
    def train(self, mode, directory):
        result = run_python("import torch_training; torch_training.main()", mode, directory)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout.strip()

    def test_a_run_stopped_and_resumed_in_a_fresh_process_ends_bit_identical_to_an_uninterrupted_one(self):
        with tempfile.TemporaryDirectory() as uninterrupted, tempfile.TemporaryDirectory() as interrupted:
            full = self.train("full", uninterrupted)
            half = self.train("first", interrupted)
            resumed = self.train("resume", interrupted)
        self.assertNotEqual(half, full)
        self.assertEqual(resumed, full)

    def test_without_a_checkpoint_there_is_nothing_to_restore(self):
        from slipstream.checkpoints import Checkpoints
        from slipstream.torch import restore_state

        with tempfile.TemporaryDirectory() as tmp:
            model = torch.nn.Linear(2, 2)
            self.assertIsNone(restore_state(Checkpoints(tmp), model, torch.optim.SGD(model.parameters(), lr=0.1)))

    def test_a_checkpoint_of_other_bytes_is_refused_by_name(self):
        import io

        from slipstream.checkpoints import Checkpoints
        from slipstream.torch import restore_state

        with tempfile.TemporaryDirectory() as tmp:
            checkpoints = Checkpoints(tmp)
            buffer = io.BytesIO()
            torch.save({"weights": torch.zeros(1)}, buffer)
            checkpoints.save(3, buffer.getvalue())
            with self.assertRaisesRegex(ValueError, "checkpoint 3 .* not written by slipstream.torch.save_state"):
                restore_state(checkpoints, torch.nn.Linear(2, 2))


    def test_every_rank_rng_needs_torch_distributed(self):
        from slipstream.checkpoints import Checkpoints
        from slipstream.torch import save_state

        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaisesRegex(ValueError, "every_rank_rng needs torch.distributed"):
                save_state(Checkpoints(tmp), 1, torch.nn.Linear(2, 2), every_rank_rng=True)


@unittest.skipIf(torch is None, "PyTorch is not installed")
class TorchRanksTest(unittest.TestCase):
    """Two real gloo ranks on this machine."""

    def ranks(self, mode, directory):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        processes = []
        for rank in range(2):
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                       PYTHONPATH=os.pathsep.join([str(SDK), str(TESTS)]))
            processes.append(subprocess.Popen([sys.executable, "-c", "import torch_ranks; torch_ranks.main()", mode, directory],
                                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        outputs = []
        for process in processes:
            out, err = process.communicate(timeout=120)
            self.assertEqual(process.returncode, 0, err)
            outputs.append(out.strip())
        return outputs

    def test_every_rank_restores_its_own_random_states(self):
        with tempfile.TemporaryDirectory() as tmp:
            after_save = self.ranks("save", tmp)
            after_restore = self.ranks("restore", tmp)
        self.assertNotEqual(after_save[0], after_save[1], "the ranks draw different numbers")
        self.assertEqual(after_restore, ["7 " + drawn for drawn in after_save])

    def test_the_gradient_hook_gives_every_rank_the_mean_in_rank_order(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(self.ranks("hook", tmp), ["True", "True"])


if __name__ == "__main__":
    unittest.main()
