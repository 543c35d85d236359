"""What a cuda test needs from the GPU, judged against a device profile (stackcheck.evidence.device_profile).

A test lists its needs in ``@pytest.mark.gpu_needs("flash-attention", ...)`` and, where it judges a
timing or counter line that differs by architecture, gives ``line=FUNCTION`` (a profile -> its line,
None where there is none). On a GPU that lacks a need, the test is skipped with the reason before
it runs. On a GPU without its line, the test runs to report what it measured
(``device_profile.no_line``: a skip with the numbers), and one that passes there ends as a skip too:
it judged nothing the line decides. Its errors and failed assertions stand. ``--gpu-table`` runs no
test: it judges the selected cuda tests against every recorded profile and this machine's, and prints
the claim x GPU table that docs/gpu.md publishes.
"""

from __future__ import annotations

import pytest

from stackcheck.evidence import device_profile
from stackcheck.plugin.marks import checks_of, claims_of
from stackcheck.toolchains import tiles

GATE = pytest.StashKey[str]()
NO_LINE = pytest.StashKey[str]()
TABLE = pytest.StashKey[list[str]]()
NOT_RUN = "from the profile, not run"


def outcome(item: pytest.Item, profile: device_profile.Profile) -> tuple[str, str]:
    """("runs" | "skipped" | "no line", why) for a cuda ``item`` on ``profile``."""
    missing = profile.missing(*(n for mark in item.iter_markers("gpu_needs") for n in mark.args))
    if missing:
        return "skipped", "needs " + " and ".join(missing)
    if item.get_closest_marker("ncu") and profile.counters_refused:
        return "skipped", f"ncu's counters {profile.counters}"
    lines = [mark.kwargs["line"] for mark in item.iter_markers("gpu_needs") if "line" in mark.kwargs]
    if any(line(profile) is None for line in lines):
        return "no line", f"no line for {profile.family}"
    return "runs", ""


def gate(items: list[pytest.Item], is_cuda) -> None:
    """Stash the skip reason of each cuda item this machine's GPU cannot run (read at setup)."""
    gated = [item for item in items if is_cuda(item) and item.get_closest_marker("gpu_needs")]
    profile = device_profile.current() if gated else None
    if profile is None:
        return
    for item in gated:
        verdict, why = outcome(item, profile)
        said = f"{', '.join(claims_of(item)) or item.name}: {why}; this is {profile.sm} ({profile.name})"
        if verdict == "skipped":
            item.stash[GATE] = said
        elif verdict == "no line":
            item.stash[NO_LINE] = said


def skip_if_gated(item: pytest.Item) -> None:
    if GATE in item.stash:
        pytest.skip(item.stash[GATE])
    if item.get_closest_marker("cuda"):
        device_profile.release_cached_memory()


def declared_tiles(item: pytest.Item) -> list[tiles.TileLaunch]:
    """The tiled launches ``item`` declares in its gpu_tiles markers."""
    return [launch for mark in item.iter_markers("gpu_tiles") for launch in mark.args]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """A cuda test's tiled launches on the GPU are the ones it declares (what the cross-compile
    self-test compiles for every GPU generation): a launch it does not declare fails it. A pass on a
    GPU without the test's line is a skip (the module's docstring)."""
    if not item.get_closest_marker("cuda"):
        return (yield)
    with tiles.checked(declared_tiles(item)):
        result = yield
    if NO_LINE not in item.stash:
        return result
    raise pytest.skip.Exception(
        f"{item.stash[NO_LINE]}; it judged nothing the line decides, so nothing is verified here",
        _use_item_location=True,
    )


def claim_cell(outcomes: list[tuple[str, str, bool]]) -> str:
    """One claim on one GPU, from its cuda tests' (verdict, why, whether the test shows the statement)."""
    runs = sum(verdict == "runs" for verdict, _, _ in outcomes)
    reasons = sorted({why for verdict, why, _ in outcomes if verdict != "runs"})
    if runs == len(outcomes):
        return "verified"
    if runs and not any(verdict == "runs" and shows for verdict, _, shows in outcomes):
        return f"partly ({runs} of {len(outcomes)} tests check an instrument; what shows it: {'; '.join(reasons)})"
    if runs:
        return f"verified ({runs} of {len(outcomes)} tests; the rest: {'; '.join(reasons)})"
    if any(verdict == "no line" for verdict, _, _ in outcomes):
        return "no line here"
    return "skipped: " + "; ".join(reasons)


def table(items: list[pytest.Item], profiles: dict[str, device_profile.Profile], run_on: set[str]) -> list[str]:
    """The claim x GPU table of ``items`` (cuda tests), as Markdown lines: a row for each claim whose
    outcome differs between the GPUs, then one for the claims verified on every one. A profile whose
    key is not in ``run_on`` is labelled as judged from its profile, not run."""
    claims: dict[str, list[pytest.Item]] = {}
    for item in items:
        for claim in sorted(set(claims_of(item))):
            claims.setdefault(claim, []).append(item)
    head = [f"{p.name} ({p.sm}{'' if key in run_on else ', ' + NOT_RUN})" for key, p in profiles.items()]
    lines = ["| claim | " + " | ".join(head) + " |", "|---|" + "---|" * len(head)]
    everywhere = []
    for claim, members in sorted(claims.items()):
        cells = [
            claim_cell([(*outcome(item, p), checks_of(item) is None) for item in members]) for p in profiles.values()
        ]
        if set(cells) == {"verified"}:
            everywhere.append(claim)
        else:
            lines.append(f"| {claim} | " + " | ".join(cells) + " |")
    if everywhere:
        lines.append(
            f"| the other {len(everywhere)} ({', '.join(everywhere)}) | " + " | ".join(["verified"] * len(head)) + " |"
        )
    return lines


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("gpu_table", None):
        return
    cuda = [item for item in items if item.get_closest_marker("cuda")]
    profiles = dict(device_profile.recorded())
    here = device_profile.current()
    if here is not None and here not in profiles.values():
        profiles["this machine"] = here
    config.stash[TABLE] = table(cuda, profiles, run_on={"h200", "this machine"})
    config.hook.pytest_deselected(items=list(items))
    items[:] = []


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    lines = config.stash.get(TABLE, None)
    if lines is None:
        return
    terminalreporter.section("claims x GPUs (cuda tests, judged from each device profile)")
    for line in lines:
        terminalreporter.write_line(line)
    target = config.getoption("gpu_table")
    if target != "-":
        with open(target, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if TABLE in session.config.stash and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK  # the table was the work asked for
