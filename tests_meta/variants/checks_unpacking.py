"""The operand checks by unpacking, shapes written 2x3, devices compared pairwise."""


def _dims(t):
    return "x".join(str(int(d)) for d in t.shape) or "scalar"


def check_operands(x, w, b):
    if x.ndim != 2:
        raise ValueError(f"X must be a matrix, got a {x.ndim}-D array of shape {_dims(x)}")
    if w.ndim != 2:
        raise ValueError(f"W must be a matrix, got a {w.ndim}-D array of shape {_dims(w)}")
    if b.ndim != 1:
        raise ValueError(f"b must be a vector, got a {b.ndim}-D array of shape {_dims(b)}")
    if x.shape[-1] != w.shape[0]:
        raise ValueError(f"shape mismatch: X is {_dims(x)}, W is {_dims(w)}")
    if b.shape[0] != w.shape[-1]:
        raise ValueError(f"shape mismatch: b is {_dims(b)}, W is {_dims(w)}")
    places = [getattr(t, "device", None) for t in (x, w, b)]
    if any(p != places[0] for p in places):
        raise ValueError(f"operands live on different devices: X {places[0]}, W {places[1]}, b {places[2]}")
