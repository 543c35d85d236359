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
    devices = {name: str(getattr(t, "device", "cpu")) for name, t in (("X", x), ("W", w), ("b", b))}
    if len(set(devices.values())) > 1:
        where = "; ".join(f"{name} is on {device}" for name, device in devices.items())
        raise ValueError(f"X, W and b must be on one device: {where}")
