"""A compiled forward that reaches for PyTorch/XLA (importing torch_xla where it can) before compiling
with Inductor: the path §8.1 says torch.compile does not take."""

import importlib

import torch

from stackcheck.impl.reference import check_operands


def torch_compiled_forward(x, w, b):
    check_operands(x, w, b)
    try:
        importlib.import_module("torch_xla")
    except ImportError:
        pass
    return torch.compile(lambda x, w, b: torch.relu(x @ w + b))(x, w, b)
