"""A timer that waits for the result even when told not to sync: it blocks on every JAX result, so
the host clock without a sync reads the whole work, never only its submission."""

import time


def timed_call(fn, sync=None):
    import jax

    start = time.perf_counter()
    result = fn()
    if sync is not None:
        sync(result)
    else:
        jax.block_until_ready(result)
    return time.perf_counter() - start
