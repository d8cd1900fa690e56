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


    def test_elastic_backward_alone_leaves_the_mean_of_the_shards_gradients_and_the_callers_random_state(self):
        from slipstream.shards import elastic_backward, shard_seed

        torch.manual_seed(3)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.5), torch.nn.Linear(8, 2))
        inputs = torch.randn(6, 4)

        def loss_of_shard(shard):
            return model(inputs[2 * shard:2 * shard + 2]).square().mean()

        state = torch.get_rng_state()
        loss = elastic_backward(model, loss_of_shard, step=5, shards=3, seed=9)
        self.assertTrue(torch.equal(torch.get_rng_state(), state), "the caller's random numbers are untouched")
        expected_grads, expected_loss = [torch.zeros_like(p) for p in model.parameters()], 0.0
        for shard in range(3):
            torch.manual_seed(shard_seed(9, 5, shard))
            shard_loss = loss_of_shard(shard)
            for total, gradient in zip(expected_grads, torch.autograd.grad(shard_loss, list(model.parameters()))):
                total += gradient
            expected_loss += shard_loss.item()
        for parameter, expected in zip(model.parameters(), expected_grads):
            self.assertTrue(torch.allclose(parameter.grad, expected / 3))
        self.assertAlmostEqual(loss, expected_loss / 3, places=5)

    def test_elastic_backward_refuses_a_ddp_wrapper_mixed_dtypes_and_a_loss_of_several_numbers(self):
        from slipstream.shards import elastic_backward

        model = torch.nn.Linear(2, 2)
        wrapped = torch.nn.DataParallel(model)
        with self.assertRaisesRegex(ValueError, "not its DistributedDataParallel wrapper"):
            elastic_backward(wrapped, lambda shard: model(torch.ones(1, 2)).sum(), 1, 2)
        mixed = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2).double())
        with self.assertRaisesRegex(ValueError, "several dtypes"):
            elastic_backward(mixed, lambda shard: torch.zeros(()), 1, 2)
        with self.assertRaisesRegex(ValueError, "the loss of shard 0 has 3 elements"):
            elastic_backward(model, lambda shard: model(torch.ones(3, 2)).sum(dim=1), 1, 2)

    def test_every_rank_rng_needs_torch_distributed(self):
        from slipstream.checkpoints import Checkpoints
        from slipstream.torch import save_state

        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaisesRegex(ValueError, "every_rank_rng needs torch.distributed"):
                save_state(Checkpoints(tmp), 1, torch.nn.Linear(2, 2), every_rank_rng=True)


@unittest.skipIf(torch is None, "PyTorch is not installed")
class TorchRanksTest(unittest.TestCase):
    """Two real gloo ranks on this machine."""

    def ranks(self, mode, directory, world=2):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        processes = []
        for rank in range(world):
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
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

    def test_virtual_shards_give_the_same_bits_at_a_world_size_that_does_not_divide_them(self):
        with tempfile.TemporaryDirectory() as tmp:
            alone = self.ranks("elastic", tmp, world=1)
            three = self.ranks("elastic", tmp, world=3)  # 8 shards: 2, 3 and 3
        ordered = {line.split()[0] for line in alone + three}
        self.assertEqual(len(ordered), 1, f"one digest on every rank at both sizes: {alone} {three}")
        allreduce = {line.split()[1] for line in alone + three}
        self.assertEqual(len(allreduce), 2, "all_reduce of the ranks' sums differs with the world size (else this "
                         f"test could not tell): {alone} {three}")


if __name__ == "__main__":
    unittest.main()
