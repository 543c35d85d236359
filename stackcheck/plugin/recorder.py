"""Per-run state and the curriculum report. Every process of a run keeps a ``Run`` in
``config.stash`` (the implementations under test, ``--require``, the environment's fingerprint).
The ``Recorder``, which reads every test's report and writes the curriculum report, lives where the
reports arrive: the xdist controller, or the one process of a run without workers (as pytest's
junitxml registers its LogXML). A worker has only its small ``WorkerPart``: at its end it tells the
controller its GPUs and the claim ids it did not know. Test metadata travels in
``report.user_properties``.
"""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from stackcheck.claims import catalogue, drift
from stackcheck.claims.results import Report, Status, TestResult
from stackcheck.evidence import gpus, precision
from stackcheck.impl.loader import Impl
from stackcheck.plugin import gpu_gates
from stackcheck.report import render as rendering
from stackcheck.stacks import fingerprint
from stackcheck.stacks.records import DEVICES

RUN = pytest.StashKey["Run"]()
RECORDER = pytest.StashKey["Recorder"]()  # the controller's (or a run without workers) alone
DRAWN = pytest.StashKey[list[str]]()  # the random inputs a test drew, printed when it fails
MISSING_REASON = pytest.StashKey[tuple[str, str]]()  # an item's missing stack or device: (reason, hint)
PROPS = "stackcheck"  # user_properties key: claims, device, meta, counts of a test
EVIDENCE = "stackcheck_evidence"
MISSING = "stackcheck_missing"  # what a skipped test lacked (a device, a stack, a tool)
RERUN = "stackcheck_rerun"  # a failure: the command that reruns it (stackcheck.run.invocation's record)
OWN_CODE = "stackcheck_own_code"  # a failure raised in the student's code: what and where (its message)
REQUIRED = "stackcheck_required"  # what a test lacked that --require asked for: the run fails, the claim is not refuted
STUDENT = "stackcheck_student"  # homework: the assigned functions a test ran
NOT_ATTEMPTED = "stackcheck_not_attempted"  # homework: the stubs a test ran into
REVISIT = "stackcheck_revisit"  # a failure: the claim or misconception to revisit first
LISTING = "stackcheck_listing"  # a course listing's description (--course)
LISTING_NOTE = "stackcheck_listing_note"  # how a listing ran when not as written
LISTING_LINE = "stackcheck_listing_line"  # the document's line a listing failed at, and its error


def skipped_at_collection(item: pytest.Item) -> bool:
    """Whether ``item`` is skipped before it runs: its stack or device missing, a GPU it cannot run
    on (gpu_gates), or a skip mark (judge_traces, ungradable)."""
    return MISSING_REASON in item.stash or gpu_gates.GATE in item.stash or item.get_closest_marker("skip") is not None


def failure_line(report: pytest.TestReport) -> str:
    """The one line that says why a test failed: the exception's message, as pytest's short summary."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "failed")
    return first if len(first) <= 300 else first[:297] + "..."


def failure_details(report: pytest.TestReport, limit: int = 4000) -> str | None:
    """A failure's whole message (every line of it: got and expected, the tolerance, the inputs), capped."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = (crash.message if crash is not None else str(report.longrepr)).strip()
    return (text if len(text) <= limit else text[: limit - 3] + "...") or None


def failure_location(report: pytest.TestReport, root: Path) -> str | None:
    """Where the failure was raised, as "path:line" (the path from ``root`` when under it)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is None or not crash.path:
        return None
    path = Path(crash.path)
    if path.is_absolute() and path.is_relative_to(root):
        path = path.relative_to(root)
    return f"{path.as_posix()}:{crash.lineno}"


def skip_reason(report: pytest.TestReport) -> str | None:
    """Why this phase skipped (an expected failure is not a skip), or None."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return None
    return report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)


def outcome_after(outcome: str, report: pytest.TestReport) -> str:
    """A test's (or listing's) outcome once this phase's report is in: the call decides; an error in
    setup or teardown fails it; a skip in setup skips it."""
    if report.when == "call":
        if hasattr(report, "wasxfail"):
            return "xfailed" if report.skipped else "passed"  # a non-strict xpass passes
        return report.outcome
    if report.failed:
        return "failed"
    if report.when == "setup" and report.skipped:
        return "skipped"
    return outcome


@dataclass
class TestRecord:
    claims: list[str]
    device: str
    meta: bool
    counts: bool  # exercises the implementation under test or runs a stack
    checks: str | None = None  # what it checks instead of the statement (hooks.checks_of)
    outcome: str = "interrupted"  # until a call (or a setup that skipped or failed) says otherwise
    evidence: list[dict] = field(default_factory=list)
    missing: str | None = None
    reason: str | None = None
    student: list[str] = field(default_factory=list)  # homework: the assigned functions it ran
    not_attempted: list[str] = field(default_factory=list)  # homework: stubs it ran into
    message: str | None = None  # one line: why it failed
    details: str | None = None  # the whole failure message, capped
    rerun: str | None = None  # the command that reruns it
    location: str | None = None  # a failure: where it was raised, "path:line"
    seconds: float = 0.0  # set-up, call and teardown together
    revisit: dict | None = None  # a failure: {id, why} to revisit first (claims.catalogue.revisit)

    def result(self, nodeid: str) -> TestResult:
        """What the report keeps of this test (a skip's reason only when it ended skipped)."""
        return TestResult(
            nodeid=nodeid,
            outcome=self.outcome,
            device=self.device,
            counts=self.counts,
            checks=self.checks,
            evidence=self.evidence,
            reason=self.reason if self.outcome == "skipped" else None,
            message=self.message,
            details=self.details,
            rerun=self.rerun,
            location=self.location,
            student=self.student,
            not_attempted=self.not_attempted,
            revisit=self.revisit,
            seconds=self.seconds,
        )


@dataclass(eq=False)
class Run:
    """What every process of a run needs."""

    config: pytest.Config
    impl: Impl
    require: frozenset[str]
    environment: dict | None = None
    frameworks_read: tuple[str, ...] = ()  # the frameworks loaded when the environment was read
    unknown_claims: set[str] = field(default_factory=set)  # claim ids of tests this process collected

    @property
    def is_worker(self) -> bool:
        return hasattr(self.config, "workerinput")

    @property
    def is_controller(self) -> bool:
        """The xdist controller: it runs no test, so it must not start a framework on any GPU."""
        return not self.is_worker and getattr(self.config.option, "numprocesses", None) not in (None, 0)

    def environment_fingerprint(self) -> dict:
        """Read once; read again where a framework was loaded since (a test's first use loads it)."""
        loaded = fingerprint.loaded()
        if self.environment is None:
            self.environment = fingerprint.fingerprint(precision.pinned, frameworks=not self.is_controller)
            self.environment["impl"] = self.impl.describe()
        elif loaded != self.frameworks_read:
            self.environment = fingerprint.with_frameworks(self.environment, precision.pinned, not self.is_controller)
        self.frameworks_read = loaded
        return self.environment

    def describe_process(self) -> dict:
        env = self.environment_fingerprint()
        build = {"torch_cuda": env["versions"]["torch_cuda"]} if "torch_cuda" in env["versions"] else {}
        return {**gpus.describe(), "backends": env["backends"], "precision": env["precision"], **build}


def read_by_workers(environment: dict) -> dict:
    """``environment`` with torch's CUDA build and the precision the tests ran with, where only its
    workers read them: under xdist the frameworks are loaded by the workers' tests alone."""
    workers = environment["workers"]
    builds = sorted({w["torch_cuda"] for w in workers if "torch_cuda" in w})
    if builds:
        environment = {**environment, "versions": {**environment["versions"], "torch_cuda": ", ".join(builds)}}
    if environment.get("precision") == "n/a":
        read = {k: v for w in workers if isinstance(w.get("precision"), dict) for k, v in w["precision"].items()}
        environment = {**environment, "precision": read or "n/a"}
    return environment


@dataclass(eq=False)  # a plugin object: hashed by identity
class WorkerPart:
    """An xdist worker's part: what the controller cannot read from the test reports."""

    run: Run

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.run.config.workeroutput["stackcheck_worker"] = self.run.describe_process()
        self.run.config.workeroutput["stackcheck_unknown_claims"] = sorted(self.run.unknown_claims)


@dataclass(eq=False)  # a plugin object: hashed by identity
class Recorder:
    run: Run
    report_path: str | None
    grade: Callable[[Report], Report] = lambda report: report  # homework mode: adds the score
    results: dict[str, TestRecord] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    written: tuple[Path, ...] = ()
    workers: list[dict] = field(default_factory=list)  # each xdist worker's GPUs (controller only)
    final: Report | None = None  # the report as written at the session's end
    listings: dict[str, dict] = field(default_factory=dict)  # --course: each listing's record
    baseline: Report | None = None  # --baseline: the report to compare with

    @property
    def config(self) -> pytest.Config:
        return self.run.config

    @property
    def impl(self) -> Impl:
        return self.run.impl

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        """xdist: a worker finished; keep what it said of its GPUs and frameworks, and the claim ids
        its tests named that the catalogue does not hold."""
        output = getattr(node, "workeroutput", {})
        if output.get("stackcheck_worker"):
            self.workers.append(output["stackcheck_worker"])
        self.run.unknown_claims.update(output.get("stackcheck_unknown_claims", []))

    # ---- hooks ------------------------------------------------------------------------------

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        lines = fingerprint.header_lines(self.run.environment_fingerprint())
        lines.append(f"  implementations: {self.impl.describe()}")
        if self.run.require:
            lines.append(f"  required (missing means fail): {', '.join(sorted(self.run.require))}")
        return lines

    def record_listing(self, report: pytest.TestReport, described: dict) -> None:
        record = self.listings.setdefault(report.nodeid, {**described, "outcome": "interrupted", "first_error": None})
        props = dict(report.user_properties)
        if props.get(LISTING_NOTE):
            record["note"] = props[LISTING_NOTE]
        failed_at = props.get(LISTING_LINE)  # {line, error} of a listing that failed in the document
        if failed_at:
            record["failing_line"] = failed_at["line"]
        if report.failed or hasattr(report, "wasxfail"):
            crash = getattr(report.longrepr, "reprcrash", None)
            if record["first_error"] is None and (report.failed or crash is not None):
                said = failure_line(report).removeprefix("stackcheck.course.listings.ListingError: ")
                record["first_error"] = failed_at["error"] if failed_at else said
        record["reason"] = skip_reason(report) or record.get("reason")
        record["outcome"] = outcome_after(record["outcome"], report)

    @pytest.hookimpl(tryfirst=True)  # before junitxml writes the properties, at teardown
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.read(report)
        if report.when == "teardown":
            # JUnit XML writes str(value): make that JSON, so CI tools can parse every property
            report.user_properties = [
                (k, json.dumps(v, default=str, ensure_ascii=False)) for k, v in report.user_properties
            ]

    def read(self, report: pytest.TestReport) -> None:
        given = dict(report.user_properties)
        described = given.get(LISTING)
        if described is not None:
            self.record_listing(report, described)
            return
        props = given.get(PROPS)
        if props is None:
            return
        record = self.results.get(report.nodeid)
        if record is None:
            record = self.results[report.nodeid] = TestRecord(**props)
        record.evidence += [v for k, v in report.user_properties if k == EVIDENCE and v not in record.evidence]
        for key, value in report.user_properties:
            if key == STUDENT:
                record.student = sorted(set(record.student) | set(value))
            elif key == NOT_ATTEMPTED:
                record.not_attempted = sorted(set(record.not_attempted) | set(value))
            elif key == REVISIT and record.revisit is None:
                record.revisit = value
        record.seconds += report.duration
        if report.failed and record.message is None:
            own = given.get(OWN_CODE)
            record.message = f"your code raised {own}" if own else failure_line(report)
            record.details = failure_details(report)
            record.rerun = given.get(RERUN)
            record.location = failure_location(report, self.config.rootpath)
        if skip_reason(report):
            record.missing = given.get(MISSING)
            record.reason = skip_reason(report)
        required = given.get(REQUIRED)
        if required is not None:  # it could not run: a skip for its claim; the run fails by --require
            record.missing, record.reason, record.message = required, str(report.longrepr), None
            record.outcome = "skipped"
            return
        record.outcome = outcome_after(record.outcome, report)

    def report(self) -> Report:
        environment = dict(self.run.environment_fingerprint())
        environment["workers"] = sorted(self.workers, key=lambda w: w["worker"]) or [self.run.describe_process()]
        environment = read_by_workers(environment)
        report = catalogue.build_report([(r.claims, r.result(n)) for n, r in self.results.items()], environment)
        if self.listings:
            listings = sorted(self.listings.values(), key=lambda r: r["line"])
            errata = [self.erratum(r, environment) for r in listings if r["outcome"] in ("failed", "xfailed")]
            report = report.with_(listings=listings, errata=errata)
        if self.baseline is not None:
            report = report.with_(drift=drift.compare(self.baseline, report))
        return self.grade(report)

    @staticmethod
    def erratum(record: dict, environment: dict) -> dict:
        """A failing listing as an erratum: where, on which versions, its first error, the working form."""
        from stackcheck.stacks.records import STACKS

        dists = {STACKS[record["stack"]].dist} if record["stack"] in STACKS else set()
        return {
            "listing": record["id"],
            "section": record["section"],
            "known": record["known_erratum"],
            "versions": {d: environment["versions"].get(d) for d in sorted(dists)},
            "failing_line": record.get("failing_line") or record["line"],
            "first_error": record["first_error"],
            "working_form": record["working_form"] or "none yet",
        }

    def sections(self, report: Report) -> list[tuple[str, list[str]]]:
        """Every part's sections of the summary (pytest_stackcheck_report_sections), claims first."""
        return [
            s
            for found in self.config.hook.pytest_stackcheck_report_sections(report=report, config=self.config)
            for s in found
        ]

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        report = self.final = self.report()
        if self.report_path:
            try:
                # a graded judge's pages would go unread: stackcheck grade renders each student's from its JSON
                pages = not self.config.getoption("homework_graded", False)
                self.written = rendering.write(report, self.report_path, self.sections(report), pages)
            except OSError as error:
                self.problems.append(f"--curriculum-report {self.report_path}: could not write it: {error}")
        self.problems += list(report.homework.problems) if report.homework is not None else []
        for regression in (report.drift or {}).get("regressions", []):
            self.problems.append(f"--baseline: {regression}")
        if self.config.getoption("require_claims"):
            bad = [c.id for c in report.claims if c.status is not Status.VERIFIED]
            if bad:
                self.problems.append(f"--require-claims: {len(bad)} claim(s) not verified: {', '.join(bad)}")
        for device in sorted(self.run.require & set(DEVICES)):
            if not any(r.device == device and r.outcome == "passed" for r in self.results.values()):
                self.problems.append(f"--require {device}: no test ran and passed on {device}")
        if self.run.unknown_claims:
            self.problems.append(f"unknown claim id(s): {', '.join(sorted(self.run.unknown_claims))}")
        if self.problems and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(trylast=True, specname="pytest_terminal_summary")
    def pytest_terminal_summary_claims(self, terminalreporter) -> None:
        tr = terminalreporter
        unclaimed = sorted(n for n, r in self.results.items() if not r.claims and not r.meta)
        if unclaimed:
            tr.section(
                "stackcheck: tests that prove no claim (add @pytest.mark.claim or @pytest.mark.meta)",
                sep="-",
                yellow=True,
            )
            for nodeid in unclaimed:
                tr.write_line(f"  {nodeid}")
        report = self.final or self.report()
        for title, lines in self.sections(report):
            tr.section(f"stackcheck: {title}", sep="-")
            for line in lines:
                tr.write_line(line, **rendering.markup(line))
        if self.impl.module is not None and self.impl.assigned is None and not self.run.is_controller:
            tr.write_line("   " + self.impl.calls())  # the workers' counts stay in the workers
        if self.written:
            tr.write_line("   report: " + ", ".join(str(p) for p in self.written))
        for problem in self.problems:
            tr.write_line(f"   FAIL {problem}", red=True)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter):
        """Outermost, so its line comes after pytest's short summary, right above the final count."""
        result = yield
        nothing = self.nothing_checked()
        if nothing:
            terminalreporter.write_line(nothing, yellow=True, bold=True)
        return result

    def nothing_checked(self) -> str | None:
        """One line when tests were selected but every one was skipped for something missing."""
        records = list(self.results.values())
        if not records or any(r.outcome != "skipped" for r in records):
            return None
        lacking = collections.Counter((r.missing, r.reason) for r in records if r.missing)
        if not lacking:
            return None
        (needed, reason), _ = lacking.most_common(1)[0]
        hint = f"add --require {needed} to make this a failure" if needed not in self.run.require else ""
        device = "; `pytest -m cpu` runs what this machine can check" if needed in DEVICES else ""
        return (
            f"stackcheck: nothing was checked: all {len(records)} selected tests were skipped, "
            f"{sum(lacking.values())} for lack of {needed} ({reason}){device}" + (f"; {hint}" if hint else "")
        )
