"""A leaky ReLU (slope 0.01): its small negative outputs fit inside the bf16 and fp16 tolerances."""

import numpy as np


def numpy_forward(x, w, b):
    z = x @ w + b
    return np.where(z > 0, z, z * np.asarray(0.01, dtype=z.dtype))


def torch_forward(x, w, b):
    import torch

    return torch.nn.functional.leaky_relu(x @ w + b, 0.01)
