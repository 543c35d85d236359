"""A steady-state timer that warms up under torch.no_grad ('the warm-up need not build a graph for
backward'): the calls it then times run with grad enabled, a condition the warm-up never compiled."""

from stackcheck.impl.reference import timed_call


def steady_state(fn, sync=None, trials=9, warmup=2):
    import torch

    with torch.no_grad():
        for _ in range(warmup):
            result = fn()
            if sync is not None:
                sync(result)
    return [timed_call(fn, sync) for _ in range(trials)]
