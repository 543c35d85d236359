"""Forwards whose check lets any bias that broadcasts through: b of shape [1] or [] passes as if it
were b[M], and the framework broadcasts it silently."""

import numpy as np

from stackcheck.impl import reference


def check_operands(x, w, b):
    if len(b.shape) == 0 or tuple(b.shape) == (1,):
        b = np.zeros(w.shape[1], dtype="float32")  # checked as if it were [M]
    reference.check_operands(x, w, b)


def numpy_forward(x, w, b):
    check_operands(x, w, b)
    return np.maximum(x @ w + b, 0)


def torch_forward(x, w, b):
    check_operands(x, w, b)
    return (x @ w + b).relu()
