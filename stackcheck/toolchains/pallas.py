"""Course §12.1: what a Pallas kernel launch looks like to JAX: one ``pallas_call`` with its grid."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def recorded_grids(interpreted: list | None = None):
    """The grid of every ``pallas_call`` JAX binds inside the block, in order, however the kernel's
    author imported ``pallas_call`` (the primitive is what every path binds); whether each ran in
    Pallas's interpreter appended to ``interpreted`` (its ``interpret`` parameter: False is a kernel
    compiled for the device)."""
    from jax._src.pallas.pallas_call import pallas_call_p

    grids: list[tuple] = []
    original = pallas_call_p.bind

    def bind(*args, **params):
        grids.append(tuple(params["grid_mapping"].grid))
        if interpreted is not None:
            interpreted.append(bool(params.get("interpret")))
        return original(*args, **params)

    pallas_call_p.bind = bind
    try:
        yield grids
    finally:
        del pallas_call_p.bind  # the class's method again
