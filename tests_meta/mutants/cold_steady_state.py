"""A steady-state timer without warm-up: the first call (tracing and compiling) is in its samples."""

from stackcheck.impl.reference import timed_call


def steady_state(fn, sync=None, trials=9, warmup=2):
    return [timed_call(fn, sync) for _ in range(trials)]
