"""Writes every result into one preallocated buffer (to 'save memory'): each call is right, but
it overwrites the result an earlier call returned."""

from stackcheck.impl import reference

_BUFFERS = {}


def torch_compiled_forward(x, w, b):
    y = reference.torch_compiled_forward(x, w, b)
    key = (tuple(y.shape), y.dtype, y.device)
    if key not in _BUFFERS:
        _BUFFERS[key] = y.clone()
    return _BUFFERS[key].copy_(y)
