"""Timing by perf_counter_ns, warm-up by an explicit loop; syncs by tree_map and the device's type."""

import time

import jax


def timed_call(fn, sync=None) -> float:
    start = time.perf_counter_ns()
    result = fn()
    if sync is not None:
        sync(result)
    return (time.perf_counter_ns() - start) / 1e9


def steady_state(fn, sync=None, trials: int = 9, warmup: int = 2) -> list[float]:
    for _ in range(warmup):
        out = fn()
        if sync:
            sync(out)
    return [timed_call(fn, sync) for _ in range(trials)]


def jax_sync(value):
    jax.tree_util.tree_map(lambda leaf: leaf.block_until_ready() if hasattr(leaf, "block_until_ready") else leaf, value)
    return value


def torch_sync(device):
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
