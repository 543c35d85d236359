"""The GPU workloads whose hardware counters the course's chip claims are read from (course §7,
checkpoints 3 and 5). Each builder sets up seeded inputs, compiles and warms up, and returns the
step to measure; ``python -m stackcheck.toolchains.workloads '[[NAME, KWARGS], ...]'`` builds them all, then
runs each step between one cudaProfilerStart and cudaProfilerStop, each led by a marker kernel
(what ``stackcheck.toolchains.counters`` profiles), and tests call the same builders in-process for the
numbers and the timings.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from typing import Callable

import torch

from stackcheck.evidence.numerics import uniform
from stackcheck.toolchains import tiles

TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
DRAW = 1 << 20  # values drawn at most; longer inputs repeat them (the counters care about bytes)


def _uniform(*shape, dtype="float32", seed=0):
    count = math.prod(shape)
    drawn = torch.from_numpy(uniform((min(count, DRAW),), seed)).to("cuda", TORCH_DTYPES[dtype])
    return drawn.repeat(-(-count // DRAW))[:count].reshape(shape) if count > DRAW else drawn.reshape(shape)


@dataclass
class Prepared:
    """A warmed-up workload: ``step()`` runs what is measured; ``inputs`` are what it reads."""

    step: Callable[[], object]
    inputs: tuple


def _warm(step: Callable[[], object], *inputs) -> Prepared:
    step()
    torch.cuda.synchronize()
    return Prepared(step, inputs)


def matmul(n: int, dtype: str, tf32: bool = False, m: int | None = None, k: int | None = None, compiled: bool = False):
    """One [n, k] @ [k, m] GEMM, eager (cuBLAS) or by torch.compile, TF32 on or off for float32
    inside the step only (MC04, checkpoint 5)."""
    from stackcheck.evidence.precision import torch_tf32

    x, w = _uniform(n, k or n, dtype=dtype, seed=1), _uniform(k or n, m or n, dtype=dtype, seed=2)
    fn = torch.compile(torch.matmul) if compiled else torch.matmul

    def step():
        with torch_tf32(torch, tf32):
            return fn(x, w)

    return _warm(step, x, w)


def eager_forward(n: int, m: int, k: int):
    """ReLU(X @ W + b) in torch eager: a GEMM, an add and a clamp, A and Z in HBM between them (§7, Q3)."""
    x, w, b = _uniform(n, k, seed=1), _uniform(k, m, seed=2), _uniform(m, seed=3)
    return _warm(lambda: torch.relu(x @ w + b), x, w, b)


def fused_forward(n: int, m: int, k: int):
    """ReLU(X @ W + b) as one tiled Triton kernel with bias and ReLU in its epilogue (§5.3, Q3)."""
    from stackcheck.toolchains.triton_kernels import matmul_bias_relu

    x, w, b = _uniform(n, k, seed=1), _uniform(k, m, seed=2), _uniform(m, seed=3)
    return _warm(lambda: matmul_bias_relu(x, w, b, tiles.FUSED.tile, precision=tiles.FUSED.precision), x, w, b)


def tiled_matmuls(n: int):
    """ReLU(X @ W + b) at n^3 by the tiled Triton kernel once for each tile of ``tiles.REUSED``, in
    that order: what each program brings into its SM's shared memory (§5.3, §7.2)."""
    from stackcheck.toolchains.triton_kernels import matmul_bias_relu

    x, w, b = _uniform(n, n, seed=1), _uniform(n, n, seed=2), _uniform(n, seed=3)
    return _warm(lambda: [matmul_bias_relu(x, w, b, t.tile, precision=t.precision) for t in tiles.REUSED], x, w, b)


def bias_relu(n: int, m: int):
    """The course's Triton bias + ReLU kernel (§11.2) on an [n, m] A (MC05)."""
    from stackcheck.toolchains.triton_kernels import bias_relu as kernel

    a, b = _uniform(n, m, seed=1), _uniform(m, seed=2)
    return _warm(lambda: kernel(a, b), a, b)


def chain_ops(x):
    """Eight elementwise ops, each its own kernel in eager mode (checkpoint 5)."""
    return ((((x * 2 + 1).relu() - 0.5) * 0.5).abs() + 1).sqrt()


CHAIN_LENGTH = 8


def chain(n: int, compiled: bool):
    """``chain_ops`` on n float32 values, eager or by torch.compile (one fused kernel) (Q5)."""
    x = _uniform(n, seed=1)
    fn = torch.compile(chain_ops) if compiled else chain_ops
    return _warm(lambda: fn(x), x)


def l2_share(fraction: float) -> int:
    """Bytes: ``fraction`` of this GPU's L2 cache."""
    return int(torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size * fraction)


def reread(passes: int, nbytes: int | None = None, l2_fraction: float | None = None):
    """Read one float32 buffer of ``nbytes`` (or ``l2_fraction`` of the L2) ``passes`` times (a sum
    each): what stays in L2 (§7.2)."""
    nbytes = nbytes if l2_fraction is None else l2_share(l2_fraction)
    x = _uniform(nbytes // 4, seed=1)
    return _warm(lambda: [x.sum() for _ in range(passes)], x)


def gather(table_bytes: int, count: int):
    """``count`` float32 values gathered from a table of ``table_bytes`` at seeded random places: what
    each SM's L1 keeps for it (§7.2)."""
    import numpy as np

    table = _uniform(table_bytes // 4, seed=1)
    places = np.random.default_rng(7).integers(0, table.numel(), count)
    index = torch.from_numpy(places).to("cuda")
    return _warm(lambda: torch.index_select(table, 0, index), table, index)


WORKLOADS = {
    f.__name__: f for f in (matmul, eager_forward, fused_forward, tiled_matmuls, bias_relu, chain, reread, gather)
}
# The tiled launches each workload makes (stackcheck.toolchains.tiles): checked as it is built and run, and
# compiled for every GPU generation by tests_plugin/test_cross_compile.py for the tests that profile it.
TILES = {"fused_forward": [tiles.FUSED], "tiled_matmuls": tiles.REUSED}


def build(name: str, kwargs: dict) -> Prepared:
    """Workload ``name`` built and warmed up, its tiled launches checked against ``TILES``."""
    with tiles.checked(TILES.get(name, []), owner=f"workload {name} (workloads.TILES): "):
        return WORKLOADS[name](**kwargs)


def main(argv: list[str]) -> None:
    """Build every workload of the JSON list ``argv[0]``, then run each once inside the profiled
    region, after a marker kernel. One that cannot be built is reported and gets its marker only."""
    listed = json.loads(argv[0])
    unknown = sorted({name for name, _ in listed} - set(WORKLOADS))
    if unknown:
        raise SystemExit(f"unknown workload(s) {unknown}; known: {', '.join(WORKLOADS)}")
    steps = []
    for i, (name, kwargs) in enumerate(listed):
        try:
            steps.append(build(name, kwargs).step)
        except Exception as error:  # one broken workload fails its own tests, not the others'
            first = (str(error).splitlines() or [""])[0][:300]
            print(f"stackcheck-workload-failed {i} {type(error).__name__}: {first}", flush=True)
            steps.append(None)
    torch.cuda.profiler.start()
    for step in steps:
        torch.cuda._sleep(1)
        if step is not None:
            step()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
