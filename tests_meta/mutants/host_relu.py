"""A forward that keeps the ReLU out of the graph its stack captures: torch through a function
Dynamo may not trace (a graph break), JAX through a host callback. Right numbers; the captured
program has no ReLU, so the compiler never sees it."""

import jax
import numpy as np
import torch

_untraced_relu = torch._dynamo.disable(torch.relu)


def torch_forward(x, w, b):
    return _untraced_relu(x @ w + b)


def jax_forward(x, w, b):
    z = x @ w + b
    return jax.pure_callback(lambda v: np.maximum(v, 0).astype(v.dtype), jax.ShapeDtypeStruct(z.shape, z.dtype), z)
