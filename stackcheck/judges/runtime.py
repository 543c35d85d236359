"""The course's verdicts on the runtime (§6, §9, §14): buffers, memory sharing, host overhead and
the library kernels a framework calls."""

from __future__ import annotations

import numpy as np

from stackcheck.evidence import judged, timing
from stackcheck.toolchains import counters


def assert_host_overhead_dominates(small: tuple[int, float], large: tuple[int, float], least: float = 0.5) -> dict:
    """§9.6: ``small`` and ``large`` are (multiply-adds, median seconds per synced call) of one
    compiled forward. Timed at the large size the call is work; at the rate it works there, the small
    call's own work takes a sliver of its time: the rest, at least ``least`` of it, is host overhead
    (dispatch, launch, the wait)."""
    rate = large[1] / large[0]  # seconds per multiply-add, where the work dominates
    share = 1 - small[0] * rate / small[1]
    found = {
        "overhead_share": round(share, 4),
        "small_call_us": round(small[1] * 1e6, 1),
        "large_call_us": round(large[1] * 1e6, 1),
        "work_ratio": round(large[0] / small[0]),
        "judged": [judged.line("overhead_share", share, at_least=least)],
    }
    assert share >= least, f"at the small size most of a call's time is host overhead, not work: {found}"
    return found


def assert_compile_not_paid_back(first: float, eager: float, compiled: float, calls: int, runs=()) -> dict:
    """MC09 (§8.2): for the course's tiny example compiling is not faster here: over ``calls`` calls (the
    first, with its compile, then steady ones at ``compiled`` seconds each) the compiled function takes
    longer in all than ``calls`` eager calls (``eager`` seconds each). Short of that by no more than the
    series in ``runs`` that the suite's clock timed scatter, the timing cannot decide: inconclusive
    with the numbers (timing.call_shortfall)."""
    total = (first + (calls - 1) * compiled) / max(calls * eager, 1e-12)
    found = {
        "calls": calls,
        "compiled_over_eager_in_all": round(total, 4),
        "judged": [judged.line(f"compiled over eager, {calls} calls in all", total, at_least=1.0)],
    }
    if runs:
        timing.call_shortfall(total, 1.0, list(runs), found)
    assert total >= 1.0, f"compiling paid for itself within {calls} calls of the course's example: {found}"
    return found


MATMUL_OPS = {"aten::mm", "aten::addmm", "aten::matmul", "aten::linear", "aten::bmm", "aten::baddbmm"}


def ops_with_device_time(averages) -> dict[str, float]:
    """§1.2: the ATen ops of a profile (torch.profiler's ``key_averages()``) that launched device work,
    with their device microseconds (the kernels counted under the op that launched them)."""
    found = {}
    for row in averages:
        spent = getattr(row, "self_device_time_total", None)
        spent = row.self_cuda_time_total if spent is None else spent
        if row.key.startswith("aten::") and spent > 0:
            found[row.key] = round(float(spent), 2)
    return found


def assert_donated_buffer_reused(donated: tuple, kept: tuple) -> None:
    """§6.1: (X's address, Y's address, X consumed) with X donated, and without: donated, Y lands in X's
    buffer and X is consumed; not donated, Y gets a buffer of its own and X stays."""
    assert donated[0] == donated[1] and donated[2], f"donated: Y in X's buffer, X consumed: {donated}"
    assert kept[0] != kept[1] and not kept[2], f"not donated: Y in a buffer of its own, X kept: {kept}"


def assert_same_memory(array: np.ndarray, addresses: dict, after_write: dict) -> None:
    """``addresses``: each library's data address for ``array``; ``after_write``: what each reads at
    [0, 0] after the array's [0, 0] was set."""
    copied = {name: a for name, a in addresses.items() if a != array.ctypes.data}
    stale = {name: v for name, v in after_write.items() if v != array[0, 0]}
    assert not copied and not stale, (
        f"shared memory, no copy: array at {array.ctypes.data}, copies at {copied}, stale reads {stale}"
    )


def assert_library_kernel(kernels: list[counters.Kernel], what: str) -> None:
    """S1.2: ``what`` ran as one precompiled library kernel (cuBLAS's naming), none generated."""
    names = [k.name for k in kernels]
    assert len(names) == 1 and counters.LIBRARY.search(names[0]) and not counters.GENERATED.search(names[0]), (
        f"{what}: expected one library (cuBLAS/CUTLASS) kernel, profiled {names}"
    )


PUT_LINE = 0.5  # put returned over put waited for: 0.03 measured on the H200 (64 MB; per-trial 0.02 to 0.04)


def assert_put_returns_first(returned: list[float], ready: list[float], line: float = PUT_LINE) -> dict:
    """§9.6: trial by trial, the seconds until ``jax.device_put`` returned and until its copy had been
    waited for. Input preparation is asynchronous: the call returns at a fraction of the copy's time,
    the median of the trials' ratios at most ``line``. Where the trials' ratios scatter as widely as
    the median is over the line, the timing cannot decide: inconclusive with the numbers."""
    ratios = sorted(r / max(w, 1e-12) for r, w in zip(returned, ready))
    share = float(np.median(ratios))
    found = {
        "put_returned_ms": round(float(np.median(returned)) * 1e3, 3),
        "put_waited_ms": round(float(np.median(ready)) * 1e3, 3),
        "returned_over_waited": round(share, 4),
        "judged": [judged.line("put returned over put waited for", share, at_most=line)],
    }
    if share > line:
        timing.call_it(share, share / line, ratios[-1] / max(ratios[0], 1e-12), found)
    assert share <= line, (
        f"jax.device_put returned only once its copy was done, or the wait did not wait for it: {found}"
    )
    return found


def assert_many_requests_cheaper(many_over_one: float, line: float, found: dict) -> None:
    """§6.5: requests queued behind one wait cost, each, at most ``line`` of the same requests each
    waited for: the mean over many requests is a number of its own (submission overlaps the device's
    work, and the wait is paid once)."""
    __tracebackhide__ = True
    assert many_over_one <= line, (
        f"queued requests should cost less each than waited ones (at most {line} of them); measured "
        f"{many_over_one:.3f}: {found}"
    )
