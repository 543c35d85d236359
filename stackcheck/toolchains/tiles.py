"""The tiled matmuls (course §5.3) a cuda test launches on the GPU, and the record that keeps what a
test declares equal to what it launches; no Triton here, so test modules and the plugin read it at
collection.

A cuda test lists each tiled launch in ``@pytest.mark.gpu_tiles(TileLaunch(...), ...)`` (a profiled
workload lists its own in ``workloads.TILES``). ``triton_kernels.matmul_bias_relu`` reports every GPU
launch here; the plugin (stackcheck.plugin.gpu_gates) fails a test that launched a tile it does not
declare, or passed without launching one it declares; tests_plugin/test_cross_compile.py compiles
every declared launch for each GPU generation, unless the declaring test is gated there."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Tile:
    """One tiling of the fused matmul: the tile of Y a program owns, the K step, and how many K
    steps are kept in flight in shared memory (``stages``)."""

    n: int
    m: int
    k: int
    stages: int = 2
    warps: int = 4

    def constexprs(self, precision: str) -> dict:
        return {"BLOCK_N": self.n, "BLOCK_M": self.m, "BLOCK_K": self.k, "PRECISION": precision}


FUSED_TILE = Tile(128, 128, 32, stages=3, warps=8)  # a large tile for sm_90, as GEMM libraries use
TILES = [(16, 16, 16, 2), (32, 16, 16, 2), (32, 64, 32, 2), (64, 64, 32, 3)]  # tl.dot needs BLOCK_K >= 16


@dataclass(frozen=True)
class TileLaunch:
    """One tiled launch on the GPU: the tile, the inputs' Triton type (fp32, fp16, bf16) and tl.dot's
    input precision. ``may_not_fit``: launched to show Triton's OutOfResources where it does not fit
    (so it must compile everywhere, not fit everywhere)."""

    tile: Tile
    dtype: str
    precision: str
    may_not_fit: bool = False

    def key(self) -> tuple:
        return (self.tile, self.dtype, self.precision)

    def __str__(self) -> str:
        t = self.tile
        return f"{t.n}x{t.m}x{t.k} ({t.stages} stages, {t.warps} warps) {self.dtype}/{self.precision}"


FUSED = TileLaunch(FUSED_TILE, "fp32", "tf32")  # the fused forward the chip's counters read (Q3, MC05)
# S7.2-shared: the tiles whose reads from outside the SM are counted, small to large
REUSED = [TileLaunch(Tile(16, 16, 16, 2), "fp32", "tf32"), TileLaunch(Tile(64, 64, 32, 3), "fp32", "tf32"), FUSED]
_OPEN: list[tuple[int, list[TileLaunch]]] = []  # (thread, its launches) of each recording open


def launched(launch: TileLaunch) -> None:
    """Called by the kernel wrapper for each launch on the GPU: goes into the open recordings of this thread."""
    for thread, seen in _OPEN:
        if thread == threading.get_ident():
            seen.append(launch)


@contextlib.contextmanager
def recording():
    """The launches of this thread inside, as a list that grows while the block runs."""
    entry = (threading.get_ident(), [])
    _OPEN.append(entry)
    try:
        yield entry[1]
    finally:
        _OPEN.remove(entry)


@contextlib.contextmanager
def checked(declared: list[TileLaunch], owner: str = ""):
    """Runs the block recording its launches; when it finishes without an error, an AssertionError
    unless they are the ``declared`` ones (``owner``: whose declaration, for the message)."""
    with recording() as seen:
        yield seen
    why = mismatch(seen, declared, passed=True)
    if why:
        raise AssertionError(owner + why)


def mismatch(seen: list[TileLaunch], declared: list[TileLaunch], passed: bool) -> str | None:
    """Why ``seen`` (what ran) does not match ``declared`` (what the test's marker lists), or None."""
    keys = {d.key() for d in declared}
    undeclared = sorted({str(s) for s in seen if s.key() not in keys})
    ran = {s.key() for s in seen}
    unlaunched = sorted(str(d) for d in declared if d.key() not in ran) if passed else []
    if not (undeclared or unlaunched):
        return None
    words = [f"launched on the GPU without declaring: {', '.join(undeclared)}"] if undeclared else []
    words += [f"declared but not launched: {', '.join(unlaunched)}"] if unlaunched else []
    return (
        "; ".join(words) + ". List every tiled launch in @pytest.mark.gpu_tiles(TileLaunch(...)): "
        "tests_plugin/test_cross_compile.py compiles what is declared for every GPU generation"
    )
