"""Verdicts on one device queue, from the trials of mojo/device_context_order.mojo (course §10.5):
work runs in the order it was submitted, synchronize() waits for it without starting it, and a host
buffer a device copy writes is stale until then. A trial is a dict of the program's line: slept
(bool), before_sync, after_sync_min, after_sync_max (floats), sync_wait_ns (int)."""

from __future__ import annotations

from stackcheck.evidence import judged
from stackcheck.evidence.numerics import assert_exact
from stackcheck.evidence.timing import Measurement

UNWRITTEN = -1.0  # what the host buffer holds before the copy lands: never a value of the chain


def in_order_value(rounds: int) -> float:
    """X after ``rounds`` pairs (X * 2, then X + 1) from 0, in submission order: 2^rounds - 1."""
    return 2.0**rounds - 1


def assert_submission_order(trials: list[dict], rounds: int) -> None:
    """Every element of every trial, read after synchronize(), is what the submitted order gives."""
    __tracebackhide__ = True
    found = [[t["after_sync_min"], t["after_sync_max"]] for t in trials]
    assert_exact(
        found,
        [[in_order_value(rounds)] * 2] * len(trials),
        what="X after the chain (min, max per trial)",
        rounds=rounds,
        swapped_pairs_give=in_order_value(rounds) * 2,
    )


def sync_waits(trials: list[dict]) -> dict[str, Measurement]:
    """How long synchronize() waited: right after submitting ("at_once") and after the host slept
    past the work ("after_sleep")."""
    return {
        name: Measurement(name, "host-sync", [t["sync_wait_ns"] / 1e9 for t in trials if t["slept"] is slept])
        for slept, name in ((False, "at_once"), (True, "after_sleep"))
    }


def assert_sync_waits_not_starts(at_once_over_after_sleep: float, least: float) -> dict:
    """synchronize() right after submitting waits at least ``least`` times longer (medians of
    ``sync_waits``) than after the host slept past the work: the work ran without it, and it waited
    for what was left."""
    found = {
        "judged": [
            judged.line(
                "at_once_over_after_sleep", at_once_over_after_sleep, at_least=least, of=("at_once", "after_sleep")
            )
        ]
    }
    assert at_once_over_after_sleep >= least, (
        f"synchronize() waits for submitted work (long right after submitting) and does not start it "
        f"(short once the host slept past it): {at_once_over_after_sleep:.3g}x, {found}"
    )
    return found


def assert_host_copy_stale_before_sync(trials: list[dict]) -> dict:
    """Read right after the copy was submitted, the host buffer still holds what it held before."""
    early = [t["before_sync"] for t in trials]
    landed = sum(value != UNWRITTEN for value in early)
    found = {"trials": len(trials), "read_before_sync_saw_the_result": landed, "reads_before_sync": early}
    assert landed == 0, f"a host buffer read before synchronize() held the copied values already: {found}"
    return found
