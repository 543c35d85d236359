"""Timing by timeit.default_timer; warm-up runs timed and dropped; syncs leaf by leaf and by stream."""

import timeit

import jax


def timed_call(fn, sync=None) -> float:
    begin = timeit.default_timer()
    out = fn()
    if sync is not None:
        sync(out)
    return timeit.default_timer() - begin


def steady_state(fn, sync=None, trials: int = 9, warmup: int = 2) -> list[float]:
    times = [timed_call(fn, sync) for _ in range(warmup + trials)]
    return times[warmup:]


def jax_sync(value):
    for leaf in jax.tree.leaves(value):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return value


def torch_sync(device):
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.current_stream(torch.device(device)).synchronize()
