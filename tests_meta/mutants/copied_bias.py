"""Materializes the broadcast: N real copies of b instead of a stride-0 view."""

import numpy as np


def broadcast_bias(b, n):
    return np.tile(b, (n, 1))


def torch_broadcast_bias(b, n):
    return b.unsqueeze(0).repeat(n, 1)
