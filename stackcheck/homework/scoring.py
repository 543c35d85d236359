"""The homework score: points per claim (fixtures/claims.toml) earned by the tests that ran the
student's functions, plus the checkpoints; feedback for each claim in the course's words."""

from __future__ import annotations

import shlex
from dataclasses import replace

from stackcheck.claims import catalogue
from stackcheck.claims.results import CheckpointScore, ClaimScore, Outcome, Report, Score, TestResult, Ungradable
from stackcheck.grading.sandbox import INSTRUCTOR_TESTS

GRADED = ("passed", "failed", "interrupted")  # errors and timeouts are failures; interrupts count 0
SUITE_FOLDERS = ("tests_", "course/")  # where the suite's own tests live (their node ids start so)
HIDDEN_FAILED = "a test the instructor keeps hidden failed"


def by_instructor(test: TestResult) -> bool:
    """A test of the instructor's own (``stackcheck grade --tests``): it lives outside the suite's
    folders. Feedback never names it nor quotes its message."""
    return not test.nodeid.startswith(SUITE_FOLDERS)


def withhold_instructor_tests(report: Report) -> tuple[Report, list[dict]]:
    """(what the student may see, what is withheld): ``report`` with each instructor's test replaced
    by its outcome under one name that says it is hidden; the originals (with their claim's id), for
    the instructor's own file."""
    withheld, claims = [], []
    for claim in report.claims:
        tests = []
        for test in claim.tests:
            if by_instructor(test):  # named from the instructor's file on, not from the run's copy
                name = test.nodeid.rpartition(f"{INSTRUCTOR_TESTS}/")[2]
                withheld.append({**replace(test, nodeid=name).to_json(), "claim": claim.id})
                test = TestResult(
                    nodeid="instructor test (hidden)",
                    outcome=test.outcome,
                    device=test.device,
                    counts=test.counts,
                    student=test.student,
                    not_attempted=test.not_attempted,
                )
            tests.append(test)
        claims.append(replace(claim, tests=tests))
    return report.with_(claims=claims), withheld


def graded_tests(tests: list[TestResult]) -> list[TestResult]:
    """Of a curriculum report's ``tests``, those that grade: they ran the student's functions, count,
    and passed or failed."""
    return [t for t in tests if t.counts and t.student and t.outcome in GRADED]


def score(report: Report, checkpoints: list[CheckpointScore]) -> Score:
    """``report``: the curriculum report, whose tests carry ``student`` (the assigned functions
    they ran) and, when they failed, ``message``. A claim earns its points times the share of its
    graded tests that passed; tests that only skipped here are listed apart, not failed."""
    known = catalogue.catalogue()
    graded, ungradable = [], []
    for c in report.claims:
        if known[c.id].get("kind") == "stack-fact":  # a fact about the stacks earns no student points
            continue
        tests = [t for t in c.counted() if t.student]
        ran = graded_tests(tests)
        skipped = [t for t in c.counted() if t.outcome == Outcome.SKIPPED]
        if not ran:
            if skipped:  # skipped before they reached the student's code, or inconclusive
                reasons = sorted({t.reason or "skipped" for t in skipped})
                ungradable.append(Ungradable(c.id, c.section, c.title, reasons[0]))
            continue
        graded.append(_claim_score(c, known[c.id], tests, ran))
    not_here: dict[str, int] = {}
    skipped_here = {t.nodeid: t for c, t in report.tests() if c is not None and t.counts and t.outcome == "skipped"}
    for t in skipped_here.values():
        not_here[t.device] = not_here.get(t.device, 0) + 1
    result = Score(claims=tuple(graded), ungradable=tuple(ungradable), skipped_here=not_here)
    return with_checkpoints(result, checkpoints)


def _claim_score(claim, entry: dict, tests: list[TestResult], ran: list[TestResult]) -> ClaimScore:
    failed = [t for t in ran if t.outcome != Outcome.PASSED]
    passed = len(ran) - len(failed)
    item = ClaimScore(
        id=claim.id,
        section=claim.section,
        title=claim.title,
        ko=entry["ko"],
        points=entry["points"],
        earned=round(entry["points"] * passed / len(ran), 2),
        passed=passed,
        graded=len(ran),
        functions=tuple(sorted({n for t in tests for n in t.student})),
        status="passed",
    )
    if not failed:
        return item
    # the student's own bug first, as the suite's tests found it (an instructor's is never shown)
    shown = sorted((t for t in failed if not by_instructor(t)), key=lambda t: bool(t.not_attempted))
    first = shown[0].revisit if shown else None  # the shown failure's own (none for a slip of Python)
    return replace(
        item,
        status="not attempted" if all(t.not_attempted for t in failed) else "failed",
        not_attempted=tuple(sorted({n for t in failed for n in t.not_attempted})),
        feedback=next((t.message for t in shown if t.message), "failed") if shown else HIDDEN_FAILED,
        first_failure=shown[0].nodeid if shown else None,
        rerun=shown[0].rerun if shown else None,  # made for where it is read (plugin.hooks)
        revisit=catalogue.pointer(first["id"], first["why"]) if first else None,  # claims.catalogue.revisit
    )


def with_checkpoints(result: Score, checkpoints: list[CheckpointScore]) -> Score:
    """``result`` with ``checkpoints`` in place of its own and its totals counted again (the grader
    settles the checkpoints outside the sandbox: checkpoints.settle)."""
    points = sum(i.points for i in result.claims) + sum(q.points for q in checkpoints)
    earned = sum(i.earned for i in result.claims) + sum(q.earned for q in checkpoints)
    return result.with_(
        percent=round(100 * earned / points, 1) if points else 0.0,
        earned=round(earned, 2),
        points=points,
        checkpoints=tuple(checkpoints),
        passport=f"{sum(q.passed for q in checkpoints)}/{len(checkpoints)}" if checkpoints else None,
    )


GRADED_RERUN = "python -m pytest --homework=."  # read by the student later, in their own folder (the copy is gone)


def rerun_line(item: ClaimScore, result: Score) -> str | None:
    """The line that reruns a failing claim's first failure: the test's own (made for where it is
    read, plugin.hooks), else the score's rerun command and the test's id."""
    if not item.first_failure:
        return None
    return item.rerun or f"{result.rerun or 'python -m pytest'} {shlex.quote(item.first_failure)}"


def lines(result: Score) -> list[str]:
    """The terminal's and the Markdown's feedback: one block per claim, the course's words included."""
    if result.no_score is not None:
        return [result.no_score]
    out = [f"score: {result.percent:g} % ({result.earned:g} of {result.points:g} points)"]
    if result.passport:
        out[0] += f" | checkpoints passport: {result.passport}"
    for item in result.claims:
        mark = {"passed": "PASS", "failed": "FAIL", "not attempted": "TODO"}[item.status]
        out.append(
            f"{mark} {item.id} (§{item.section}) {item.earned:g}/{item.points:g}: "
            f"{item.passed}/{item.graded} tests; {', '.join(item.functions)}"
        )
        if item.status == "not attempted":
            out.append(
                f"     not attempted yet: {', '.join(item.not_attempted)} (not written: missing from the file, "
                "or still raising NotImplementedError)"
            )
        elif item.status == "failed":
            out += [
                f"     {item.title}",
                f"     {item.ko}",
                f"     first failure: {item.feedback}",
            ]
            out += [f"     rerun: {rerun_line(item, result)}"] if item.first_failure else []
            out += [f"     revisit first: {item.revisit}"] if item.revisit else []
    for name, source in sorted(result.borrowed.items()):
        out.append(f"---- integrity: {name} uses {source}, the suite's own solution: 0 points for its tests")
    if result.answers_problem:
        out.append(f"---- checkpoints: {result.answers_problem}")
    for q in result.checkpoints:
        mark = "PASS" if q.passed else ("TODO" if not q.attempted else "FAIL")
        out.append(f"{mark} checkpoint {q.id} {q.earned:g}/{q.points:g}: {q.ko[:60]}...")
        out += [f"     {line}" for line in q.feedback if not line.startswith("ok")]
    if result.skipped_here:
        by_device = ", ".join(f"{d}: {n}" for d, n in sorted(result.skipped_here.items()))
        out.append(
            f"---- {sum(result.skipped_here.values())} tests could not run here ({by_device}); "
            "they count neither for nor against you"
        )
    for item in result.ungradable:
        out.append(f"---- {item.id} (§{item.section}) cannot be graded on this machine: {item.why}")
    return out
