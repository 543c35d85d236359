"""A JAX forward that hands the whole computation to NumPy through a host callback: it traces, it
compiles from shapes alone, and the numbers are right, but the device program only calls back."""

import jax
import numpy as np


def _on_host(x, w, b):
    return np.maximum(np.asarray(x) @ np.asarray(w) + np.asarray(b), 0).astype(np.float32)


def jax_forward(x, w, b):
    out = jax.ShapeDtypeStruct((x.shape[0], w.shape[1]), x.dtype)
    return jax.pure_callback(_on_host, out, x, w, b)
