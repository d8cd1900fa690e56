"""A tiny training run for test_torch: ``python -c 'import torch_training; torch_training.main()' MODE DIR``.

MODE full: 10 steps; first: 5 steps, then save_state; resume: a fresh process (seeded otherwise, on purpose) restores
and trains the other 5. Each step draws from every generator the SDK restores (PyTorch's for the batch and dropout,
NumPy's and Python's for noise), so that a generator left unrestored changes the weights. Prints the weights' SHA-256.
"""

import hashlib
import random
import sys

import numpy
import torch

import support  # noqa: F401  (the SDK from this tree)
from slipstream import Slipstream
from slipstream.torch import restore_state, save_state

STEPS = 10


def build(seed):
    torch.manual_seed(seed)
    random.seed(seed)
    numpy.random.seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Dropout(0.2), torch.nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    return model, optimizer


def step(model, optimizer, data, targets, position):
    index = torch.randint(0, data.shape[0], (4,))
    noise = float(numpy.random.normal()) * 0.01 + random.random() * 0.01
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(data[index] + noise), targets[index] + position * 0.001)
    loss.backward()
    optimizer.step()


def weights(model):
    digest = hashlib.sha256()
    for tensor in model.state_dict().values():
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def main():
    mode, directory = sys.argv[1], sys.argv[2]
    torch.use_deterministic_algorithms(True)
    generator = torch.Generator().manual_seed(1234)  # the data set: the same in every process
    data, targets = torch.randn(64, 8, generator=generator), torch.randn(64, 1, generator=generator)
    checkpoints = Slipstream.of({"SLIPSTREAM_CHECKPOINT_DIR": directory}).checkpoints(keep=2)
    if mode == "resume":
        model, optimizer = build(seed=999)
        wrapped = torch.nn.DataParallel(model)  # restore unwraps it, as it does DistributedDataParallel
        restored = restore_state(checkpoints, wrapped, optimizer)
        start, end = restored.data_position, STEPS
        assert restored.extra == {"note": "half way"}, restored.extra
    else:
        model, optimizer = build(seed=7)
        start, end = 0, STEPS if mode == "full" else STEPS // 2
    for position in range(start, end):
        step(model, optimizer, data, targets, position)
    if mode == "first":
        assert not save_state(checkpoints, end, model, optimizer, data_position=end, rank=1)  # not the writer
        assert checkpoints.latest() is None
        assert save_state(checkpoints, end, model, optimizer, data_position=end, extra={"note": "half way"}, rank=0)
    print(weights(model))
