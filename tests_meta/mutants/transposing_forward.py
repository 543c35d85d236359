"""A forward that uses W.T whenever the shapes allow it (K == M): no shape error, wrong numbers."""

import numpy as np


def _w(w):
    return w.T if w.shape[0] == w.shape[1] else w


def numpy_forward(x, w, b):
    return np.maximum(x @ _w(w) + b, 0)


def torch_forward(x, w, b):
    return (x @ _w(w) + b).relu()
