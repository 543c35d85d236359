"""The suite's timer (course §6.5, checkpoint 2): interleaved trials, medians, and a noise floor.

Every measurement names its regime (what the clock includes). Candidates are timed A B A B ...
so drift hits all of them alike; results are medians with their interquartile range; a
comparison is called only when the two candidates differ by more than the A/A noise floor
(the spread between two timings of the same thing), otherwise it is inconclusive.
"""

from __future__ import annotations

import numbers
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from stackcheck.evidence import judged

REGIMES = {
    "host-no-sync": "host clock around the call only: measures submission, not the work",
    "host-sync": "host clock around the call and a synchronize / block_until_ready: end-to-end",
    "device-events": "events recorded on the stream that does the work: device time only",
    "first-call": "the first call: tracing, compiling and the first run together",
    "with-transfers": "host-to-device copy, the work, and the copy back",
    "profiled-kernels": "the kernels' own durations as the profiler records them, per call",
}


class ImplSeconds(float):
    """Seconds the implementation under test read (its ``timed_call``, ``steady_state``), and every
    number computed from them. Such a series is judged, but its scatter never excuses it (call_it,
    call_shortfall): a timer that forgets the sync reads microseconds one call and milliseconds the
    next, and would make its own error look like noise."""


def _keeps_its_clock(op: str):
    def method(self, *other):
        value = getattr(float, op)(self, *other)
        return ImplSeconds(value) if type(value) is float else value  # NotImplemented, a complex power

    return method


for _op in (
    *("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "rfloordiv"),
    *("mod", "rmod", "pow", "rpow", "neg", "pos", "abs"),
):
    setattr(ImplSeconds, f"__{_op}__", _keeps_its_clock(f"__{_op}__"))


def read_by_implementation(value):
    """``value`` (seconds, or a list of them) as read by the implementation under test: ImplSeconds."""
    if isinstance(value, (list, tuple)):
        return type(value)(read_by_implementation(v) for v in value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return ImplSeconds(value)
    return value


def suite_read(value: float) -> bool:
    """Whether ``value`` owes nothing to the implementation's clock."""
    return not isinstance(value, ImplSeconds)


@dataclass
class Measurement:
    name: str
    regime: str
    samples: list[float] = field(default_factory=list)  # seconds

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def iqr(self) -> float:
        q = statistics.quantiles(self.samples, n=4)
        return q[2] - q[0]

    @property
    def clock(self) -> str:
        """Whose clock read the samples: "suite" or "implementation" (any of them ImplSeconds)."""
        return "suite" if all(suite_read(s) for s in self.samples) else "implementation"

    @property
    def spread(self) -> float:
        """Slowest over fastest sample (>= 1): how far the same work drifted between trials, as on
        a GPU that other processes share."""
        return max(self.samples) / max(min(self.samples), 1e-12)

    def summary(self) -> dict:
        q = statistics.quantiles(self.samples, n=4)
        return {
            "regime": self.regime,
            "median_ms": round(self.median * 1e3, 4),
            "iqr_ms": round(self.iqr * 1e3, 4),
            "spread": round(self.spread, 2),
            "trials": len(self.samples),
            # the report's whiskers: quartiles, or the extremes where trials are few
            "q1_ms": round(q[0] * 1e3, 4),
            "q3_ms": round(q[2] * 1e3, 4),
            "min_ms": round(min(self.samples) * 1e3, 4),
            "max_ms": round(max(self.samples) * 1e3, 4),
        }


def host_timer(fn: Callable[[], object], sync: Callable[[object], None] | None = None) -> Callable[[], float]:
    """A timer for ``fn``: host clock, with ``sync(result)`` inside the timed region when given."""

    def run() -> float:
        start = time.perf_counter()
        result = fn()
        if sync is not None:
            sync(result)
        return time.perf_counter() - start

    return run


def stopwatch() -> Callable[[], float]:
    """Start a host clock now; each call of the result gives the seconds since (no sync: a
    measurement of what the host did, such as submitting work or building a graph)."""
    start = time.perf_counter()
    return lambda: time.perf_counter() - start


def drained_timer(
    timed_call: Callable, fn: Callable[[], object], sync: Callable[[object], None], *, synced: bool
) -> Callable[[], float]:
    """A timer for ``fn`` by ``timed_call`` (the implementation under test), with ``sync`` inside the
    clock or, with ``synced=False``, not (course checkpoint 2's bug). Either way the result is synced
    again after the clock stopped, so queued work never piles up into the next trial."""

    def run() -> float:
        results = []
        seconds = timed_call(lambda: results.append(fn()) or results[-1], sync if synced else None)
        sync(results.pop())
        return seconds

    return run


def cuda_event_timer(fn: Callable[[], object]) -> Callable[[], float]:
    """A timer for ``fn`` from CUDA events on the current stream (device time, in seconds)."""
    import torch

    def run() -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    return run


def interleaved(
    timers: dict[str, Callable[[], float]], regime: str | dict[str, str], trials: int = 21, warmup: int = 3
) -> dict[str, Measurement]:
    """Time each candidate ``trials`` times, round-robin, after ``warmup`` untimed rounds.

    ``regime`` names what every timer measures, or maps each timer's name to its own regime."""
    regimes = regime if isinstance(regime, dict) else {name: regime for name in timers}
    unknown = set(regimes.values()) - set(REGIMES)
    if unknown or set(regimes) != set(timers):
        raise ValueError(f"a regime for each timer, from {sorted(REGIMES)}; got {regimes}")
    for _ in range(warmup):
        for timer in timers.values():
            timer()
    results = {name: Measurement(name, regimes[name]) for name in timers}
    for _ in range(trials):
        for name, timer in timers.items():
            results[name].samples.append(timer())
    return results


def noise_floor(timer: Callable[[], float], regime: str, trials: int = 21) -> float:
    """A/A: the ratio of medians of two interleaved series of the same timer (>= 1)."""
    runs = interleaved({"A": timer, "A'": timer}, regime, trials)
    a, b = runs["A"].median, runs["A'"].median
    return max(a, b) / max(min(a, b), 1e-12)


def scatter(m: Measurement) -> float:
    """1 + interquartile range over median: a noise floor read from one series itself, for when a
    quiet A/A measurement was followed by a noisy trial (another process took the device)."""
    return 1 + m.iqr / max(m.median, 1e-12)


def ratio(slow: Measurement, fast: Measurement) -> float:
    return slow.median / max(fast.median, 1e-12)


def not_faster_somewhere(
    measured: dict[str, dict[str, Measurement]], candidate: str, margin: float, floors: dict[str, float]
) -> list[str]:
    """Regimes (keys of ``measured``) where ``candidate`` is not faster than the best other entry by
    more than ``margin``, counting only those whose A/A noise floor is below ``margin``."""
    found = []
    for regime, runs in measured.items():
        best_other = min((m for name, m in runs.items() if name != candidate), key=lambda m: m.median)
        if ratio(runs[candidate], best_other) * margin >= 1 and floors[regime] < margin:
            found.append(regime)
    return found


def race_seen(reads: list[float], written: float) -> bool:
    """§6.4: a consumer that did not wait read something other than what its producer wrote, at least once."""
    return any(r != written for r in reads)


def call_it(ratio_value: float, margin: float, floor: float | Iterable[float], evidence: dict) -> None:
    """Skip as inconclusive, with the evidence, when the A/A noise floor is as wide as the margin. The
    floor is the widest of ``floor`` (one or several) that the suite's own clock read: noise the
    implementation under test read is its own and excuses nothing (ImplSeconds)."""
    import pytest

    floor = _suite_noise(floor)
    if floor >= margin:
        pytest.skip(
            f"inconclusive: A/A noise floor {floor:.2f} >= margin {margin:.2f} (ratio {ratio_value:.2f}); "
            f"evidence: {evidence}"
        )


def call_shortfall(value: float, least: float, runs: list[Measurement], evidence: dict) -> None:
    """Skip as inconclusive when ``value`` (a ratio of two of ``runs``' medians) falls short of
    ``least`` by no more than those series scatter: a device shared with other work can halve one
    median of a good timer, but not bring a hundredfold error within reach. Only the series the
    suite's clock read count: one the implementation under test timed excuses nothing."""
    call_within(value, least, [scatter(m) for m in runs if m.clock == "suite"], evidence)


def call_within(value: float, least: float, noise: float | Iterable[float], evidence: dict) -> None:
    """Skip as inconclusive when ``value`` falls short of ``least`` by no more than the widest of
    ``noise`` (factors >= 1, one or several) that the suite's own clock read (as call_it)."""
    import pytest

    widest = _suite_noise(noise)
    if value < least <= value * widest:
        pytest.skip(
            f"inconclusive: ratio {value:.2f} < {least:.2f}, within the series' scatter {widest:.2f}; "
            f"evidence: {evidence}"
        )


def _suite_noise(noise: float | Iterable[float]) -> float:
    """The widest of ``noise`` that owes nothing to the implementation's clock; 0 where none does."""
    given = [noise] if isinstance(noise, numbers.Real) else list(noise)
    return max((n for n in given if suite_read(n)), default=0.0)


def call_early_return(unsynced: Measurement, work: Measurement, evidence: dict) -> None:
    """Skip as inconclusive a host timer without a sync that read too long, when one of its calls
    returned in under half the work's fastest time: that timer does not wait for the work, and its
    other calls waited for a core (a loaded host, where the work's own threads and other processes
    hold the cores the caller needs to return). A timer that waits for the work never returns that
    soon; where every sample of the work itself ran twice as slow as it can, it cannot be told apart,
    and that is inconclusive too. The work must be timed by the suite's clock: a series the
    implementation under test read excuses nothing."""
    import pytest

    soonest, fastest = min(unsynced.samples), min(work.samples)
    if soonest < fastest / 2 and work.clock == "suite":
        pytest.skip(
            f"inconclusive: one unsynced call returned in {soonest * 1e3:.3f} ms, under half the work's "
            f"fastest {fastest * 1e3:.3f} ms, and most took longer (a loaded host); evidence: {evidence}"
        )


def call_synchronous_backend(fn: Callable[[], object], sync: Callable[[object], None], evidence: dict) -> None:
    """Skip as inconclusive, with the numbers, where the backend finishes the work inside the call
    (a synchronous one): there a timer that does not wait reads the work all the same, and no timing
    can tell it from one that does. The suite's clock reads both: ``fn`` alone, then drained by
    ``sync``, and ``fn`` with ``sync`` inside, interleaved; submission that takes over half the whole
    call is no asynchronous dispatch."""
    import pytest

    def submitted() -> float:
        start = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - start
        sync(result)
        return seconds

    runs = interleaved({"submitted": submitted, "whole": host_timer(fn, sync)}, "host-sync", trials=3, warmup=1)
    share = ratio(runs["submitted"], runs["whole"])
    if share > 0.5:
        pytest.skip(
            f"inconclusive: this backend finishes the work inside the call (submission takes {share:.0%} of "
            f"the whole call): a timer that does not wait cannot be told from one that does here; "
            f"evidence: {evidence | {k: v.summary() for k, v in runs.items()}}"
        )


def device_idle_share(step: Callable, x, sync: Callable[[], None] | None, steps: int) -> float:
    """§6.4: ``steps`` dependent calls ``y = step(y)`` from ``x`` on a CUDA device, with ``sync()``
    after every call (or none), under the profiler: the share of the span from the first kernel's
    start to the last kernel's end in which no kernel ran (the device idle between its work)."""
    import torch
    from torch.autograd import DeviceType

    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        y = x
        for _ in range(steps):
            y = step(y)
            if sync is not None:
                sync()
        torch.cuda.synchronize()
    spans = sorted((e.time_range.start, e.time_range.end) for e in prof.events() if e.device_type == DeviceType.CUDA)
    busy, reach = 0.0, spans[0][0]
    for start, end in spans:  # the union of the kernels' intervals
        busy += max(0.0, end - max(start, reach))
        reach = max(reach, end)
    return 1 - busy / max(reach - spans[0][0], 1e-9)


def kernel_timer(fn: Callable[[], object], calls: int = 10) -> Callable[[], float]:
    """§8.4: seconds the device spent in kernels per call of ``fn`` (CUDA), as the profiler records
    them: ``calls`` calls under torch.profiler, their kernels' durations summed, over ``calls``."""
    import torch
    from torch.autograd import DeviceType

    def run() -> float:
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
        spans = [e.time_range for e in prof.events() if e.device_type == DeviceType.CUDA]
        return sum(span.end - span.start for span in spans) * 1e-6 / calls  # the profiler's microseconds

    return run


def assert_wall_is_not_the_kernel(runs: dict[str, Measurement], most: float) -> dict:
    """§8.4: the kernels' own time per call (``runs["profiled-kernels"]``) is at most ``most`` of the
    host-synced wall clock (``runs["host-sync"]``); inconclusive where the series scatter as much."""
    from stackcheck.evidence import judged

    ratio = runs["profiled-kernels"].median / max(runs["host-sync"].median, 1e-12)
    noise = max(scatter(m) for m in runs.values())
    report = {
        "kernel_over_wall": round(ratio, 3),
        "noise": round(noise, 3),
        **{k: v.summary() for k, v in runs.items()},
    }
    report["judged"] = [judged.line("kernel_over_wall", ratio, at_most=most)]
    if ratio > most:
        call_it(ratio, 1 / most, noise, report)
    assert 0 < ratio <= most, f"the wall clock of a small call is far more than its kernel's time: {report}"
    return report


def idle_shares(step: Callable, x, sync: Callable[[], None], steps: int, series: int) -> tuple[list, list]:
    """§6.4: ``device_idle_share`` of ``series`` chains waited for after every step and as many waited
    for once at the end, interleaved: (each, once)."""
    each, once = [], []
    for _ in range(series):
        each.append(device_idle_share(step, x, sync, steps))
        once.append(device_idle_share(step, x, None, steps))
    return each, once


def assert_waits_leave_the_device_idle(
    each: list[float], once: list[float], once_most: float, factor: float, shared: bool = False
) -> dict:
    """§6.4: idle shares of the device (``device_idle_share``) over repeated chains, waiting after
    every step (``each``, by its median) and once at the end (``once``, by its least: other
    processes' kernels on the GPU only add idle gaps). Submitted ahead, the steps' kernels run back
    to back: idle at most ``once_most``; waiting after every step leaves the device idle ``factor``
    times as much. ``shared``: other processes run on the GPU, and a line missed is inconclusive."""
    import pytest

    idle_each, idle_once = statistics.median(each), min(once)  # another process's kernels only add gaps
    found = {
        "idle_share_wait_each": [round(v, 3) for v in each],
        "idle_share_wait_once": [round(v, 3) for v in once],
        "judged": [
            judged.line("least idle share, submitted ahead", idle_once, at_most=once_most),
            judged.line(
                "idle waiting each step over submitted ahead", idle_each / max(idle_once, 1e-9), at_least=factor
            ),
        ],
    }
    if idle_once > once_most and shared:
        pytest.skip(
            f"inconclusive: submitted ahead, every chain left the GPU idle over {once_most:.0%}, and other "
            f"pytest-xdist workers share this GPU (their kernels run between ours); run it alone: {found}"
        )
    assert idle_once <= once_most, (
        f"submitted ahead, the steps must run back to back (idle <= {once_most:.0%}): {found}"
    )
    assert idle_each >= factor * idle_once, f"waiting after every step must leave the device idle ({factor}x): {found}"
    return found


def on_two_streams(first: Callable[[], object], second: Callable[[], object]) -> Callable[[], tuple]:
    """A step that runs ``first`` and ``second`` on two side streams, each starting after what the
    current stream has queued, and makes the current stream wait for both (§6.4): CUDA events on the
    current stream then time the pair from the first start to the last end."""
    import torch

    streams = torch.cuda.Stream(), torch.cuda.Stream()

    def step() -> tuple:
        here = torch.cuda.current_stream()
        results = []
        for stream, fn in zip(streams, (first, second)):
            stream.wait_stream(here)
            with torch.cuda.stream(stream):
                results.append(fn())
        for stream in streams:
            here.wait_stream(stream)
        return tuple(results)

    return step


def assert_overlap_needs_room(small: float, full: float, small_most: float = 0.7, full_least: float = 0.7) -> dict:
    """S6.4: two streams over one stream, by the time of the pair. Kernels that use a sliver of the GPU
    overlap (the pair takes about the time of one: ratio <= ``small_most``); kernels that each fill
    every SM do not (about the sum: ratio >= ``full_least``)."""
    found = {
        "small_kernels_two_over_one_stream": round(small, 3),
        "full_kernels_two_over_one_stream": round(full, 3),
        "judged": [
            judged.line("small_kernels_two_over_one_stream", small, at_most=small_most),
            judged.line("full_kernels_two_over_one_stream", full, at_least=full_least),
        ],
    }
    assert small <= small_most, f"kernels using a sliver of the GPU should overlap on two streams: {found}"
    assert full >= full_least, f"two kernels that each fill every SM cannot overlap much: {found}"
    return found


def assert_one_queue_serial(pair_over_one: float, least: float) -> dict:
    """§6.4: two independent kernels on one queue took ``pair_over_one`` times one of them: at least
    ``least`` (2 would be strictly one after the other) though each left room to run beside the other."""
    found = {
        "judged": [
            judged.line("pair on one stream over one kernel", pair_over_one, at_least=least, of=("pair", "one_kernel"))
        ]
    }
    assert pair_over_one >= least, (
        f"two independent kernels on one stream overlapped (pair {pair_over_one:.2f}x one kernel): a stream "
        f"runs its work in order, one after another: {found}"
    )
    return found
