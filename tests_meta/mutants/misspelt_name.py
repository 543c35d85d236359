"""A slip of Python, not of the course: the forward reads a name it never defined (NameError). The
failure must name this file and line first, and no course section before it."""

import numpy as np


def numpy_forward(x, w, b):
    return np.maximum(x @ weights + b, 0)  # noqa: F821 - the slip itself
