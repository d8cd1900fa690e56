import tempfile
import unittest

import support  # noqa: F401  (the SDK from this tree)
from support import run_python

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


if __name__ == "__main__":
    unittest.main()
