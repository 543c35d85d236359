"""Keeps Y by the inputs' identity: a second call with the same X, W, b objects returns the first Y,
even after the caller changed their values in place (a cache keyed by id(), not by the data)."""

from stackcheck.impl import reference

_CACHE = {}


def numpy_forward(x, w, b):
    key = (id(x), id(w), id(b))
    if key not in _CACHE:
        _CACHE[key] = reference.numpy_forward(x, w, b).copy()
    return _CACHE[key]
