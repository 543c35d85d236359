"""The operand checks, shapes written as tuples ((2, 3)) and the checks in another order."""


def check_operands(x, w, b):
    shapes = {"X": tuple(x.shape), "W": tuple(w.shape), "b": tuple(b.shape)}
    for name, rank in (("X", 2), ("W", 2), ("b", 1)):
        if len(shapes[name]) != rank:
            raise ValueError(f"{name} has shape {shapes[name]}; it must have {rank} dimensions")
    (_, k), (k2, m) = shapes["X"], shapes["W"]
    if k != k2:
        raise ValueError(f"cannot multiply X {shapes['X']} by W {shapes['W']}: inner dimensions {k} and {k2} differ")
    if shapes["b"] != (m,):
        raise ValueError(f"b {shapes['b']} must have shape ({m},) to match W {shapes['W']}")
    devices = {str(getattr(t, "device", "cpu")) for t in (x, w, b)}
    if len(devices) > 1:
        raise ValueError(f"X, W and b are on different devices: {sorted(devices)}")
