"""The results of a run as typed records: a test's result, a claim's result, the report that holds
them. JSON only at the edges (``Report.from_json`` / ``Report.load`` read it, ``to_json`` /
``dump`` write it); everything between (the renderers, merge, drift, the homework score and its
feedback) takes these records. A record checks itself when it is made, so a report that is not
one fails where it is read, with the file and the field that is wrong."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path


class Status(enum.StrEnum):
    """A claim's status, in the order the report lists them."""

    VERIFIED = "verified"
    PARTLY = "partly"  # a test passed, but none that shows the statement: an instrument or precondition
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    SKIPPED = "skipped"
    UNTESTED = "untested"

    @property
    def mark(self) -> str:
        """The terminal table's one letter."""
        return {"verified": "+", "partly": "~", "failed": "F", "interrupted": "!", "skipped": "s", "untested": "."}[
            self.value
        ]

    @property
    def failing(self) -> bool:
        return self in (Status.FAILED, Status.INTERRUPTED)


class Outcome(enum.StrEnum):
    """A test's outcome: the call decides; an error in set-up or teardown fails it."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    INTERRUPTED = "interrupted"


def status_of(tests: list[TestResult]) -> Status:
    """Of the tests that count: failed if any failed; interrupted if any was cut short; verified if
    one that shows the statement passed; partly if only tests that check an instrument or a
    precondition (``checks``) passed; skipped if all were skipped; untested if none ran. An expected
    failure (a known upstream defect, strict xfail) neither verifies nor fails a claim."""
    ran = [t for t in tests if t.outcome != Outcome.XFAILED]
    if not ran:
        return Status.UNTESTED
    outcomes = {t.outcome for t in ran}
    if Outcome.FAILED in outcomes:
        return Status.FAILED
    if Outcome.INTERRUPTED in outcomes:
        return Status.INTERRUPTED
    if any(t.outcome == Outcome.PASSED and not t.checks for t in ran):
        return Status.VERIFIED
    return Status.PARTLY if Outcome.PASSED in outcomes else Status.SKIPPED


def lacks(tests: list[TestResult]) -> str:
    """What a claim that is ``partly`` lacks: why the tests that show its statement did not pass."""
    showing = [t for t in tests if t.counts and not t.checks]
    reasons = dict.fromkeys(t.reason or t.outcome.value for t in showing if t.outcome != Outcome.PASSED)
    return "; ".join(reasons) or "no test that shows the statement ran"


class NotAReport(ValueError):
    """A file or value that is not a curriculum report; the message names where and what."""


def _enum(kind: type[enum.StrEnum], value, where: str):
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(m.value for m in kind)
        raise NotAReport(f"{where}: {value!r} is not one of {allowed}") from None


def _fields(cls, data, where: str) -> dict:
    """``data``'s keys that ``cls`` has; a missing required key or a non-object is a NotAReport."""
    if not isinstance(data, Mapping):
        raise NotAReport(f"{where}: expected an object, got {type(data).__name__}")
    names = {f.name for f in fields(cls)}
    required = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING]
    missing = [n for n in required if n not in data]
    if missing:
        raise NotAReport(f"{where}: missing {', '.join(missing)}")
    return {k: v for k, v in data.items() if k in names}


@dataclass(frozen=True)
class TestResult:
    """One test as the run saw it. ``counts``: it exercises the implementation under test or runs a
    stack (a demonstration does not, and decides nothing)."""

    __test__ = False  # not a pytest test class

    nodeid: str
    outcome: Outcome
    device: str
    counts: bool = True
    checks: str | None = None  # what it checks instead of the statement (an instrument, a precondition)
    evidence: tuple = ()  # what the test measured, each record as the test wrote it
    reason: str | None = None  # a skip: why
    message: str | None = None  # a failure: its one line
    details: str | None = None  # a failure: its whole message (the numbers, where they differ), capped
    rerun: str | None = None  # a failure: the command that reruns it as this run ran it
    location: str | None = None  # a failure: "path:line" where it was raised
    student: tuple[str, ...] = ()  # homework: the assigned functions it ran
    not_attempted: tuple[str, ...] = ()  # homework: the stubs it ran into
    revisit: Mapping | None = None  # a failure: {id, why} to revisit first
    seconds: float = 0.0  # set-up, call and teardown together

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcome", _enum(Outcome, self.outcome, self.nodeid))
        for name in ("evidence", "student", "not_attempted"):
            object.__setattr__(self, name, tuple(getattr(self, name) or ()))

    @classmethod
    def from_json(cls, data, where: str = "test") -> TestResult:
        found = _fields(cls, data, where)
        for name in ("evidence", "student", "not_attempted"):
            if not isinstance(found.get(name) or (), (list, tuple)):  # damaged: one line, never a traceback
                raise NotAReport(f"{where}: {name} must be a list, got {type(found[name]).__name__}")
        return cls(**{**found, "outcome": _enum(Outcome, found["outcome"], f"{where}: {found['nodeid']}")})

    def to_json(self) -> dict:
        out = {"nodeid": self.nodeid, "outcome": self.outcome.value, "device": self.device, "counts": self.counts}
        for name in (
            "checks",
            "evidence",
            "reason",
            "message",
            "details",
            "rerun",
            "location",
            "student",
            "not_attempted",
            "revisit",
        ):
            value = getattr(self, name)
            if value:
                out[name] = list(value) if isinstance(value, tuple) else value
        seconds = round(self.seconds, 3)
        if seconds:  # a test under a millisecond is written as none, as it is read back
            out["seconds"] = seconds
        return out


@dataclass(frozen=True)
class ClaimResult:
    """One claim of the catalogue and the tests that ran for it."""

    id: str
    section: str
    title: str
    area: str
    status: Status
    kind: str = "learner"  # or "stack-fact": no implementation under test takes part
    tests: tuple[TestResult, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", _enum(Status, self.status, self.id))
        object.__setattr__(self, "tests", tuple(self.tests))

    @classmethod
    def from_json(cls, data, where: str = "claim") -> ClaimResult:
        found = _fields(cls, data, where)
        where = f"{where} {found['id']}"
        if not isinstance(found.get("tests", []), list):
            raise NotAReport(f"{where}: tests is not a list")
        tests = [TestResult.from_json(t, f"{where} test {i}") for i, t in enumerate(found.get("tests", []))]
        return cls(**{**found, "status": _enum(Status, found["status"], where), "tests": tests})

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "section": self.section,
            "title": self.title,
            "area": self.area,
            "kind": self.kind,
            "status": self.status.value,
            "tests": [t.to_json() for t in self.tests],
        }

    def counted(self) -> list[TestResult]:
        """The tests that decide the status (demonstrations do not)."""
        return [t for t in self.tests if t.counts]


SCORE_FORMAT = 1  # the homework score's layout in a report; a report of another is refused, saying so


def _record(cls, data, where: str, lists: tuple[str, ...] = ()):
    """``cls`` made from ``data``: its ``lists`` fields lists (held as tuples); NotAReport otherwise."""
    found = _fields(cls, data, where)
    for name in lists:
        if not isinstance(found.get(name) or (), (list, tuple)):
            raise NotAReport(f"{where}: {name} must be a list, got {type(found[name]).__name__}")
        if name in found:
            found[name] = tuple(found[name] or ())  # as TestResult reads its lists: null is none
    return cls(**found)


def _plain(record) -> dict:
    """A record's fields as JSON's types (tuples as lists, records as objects)."""
    out = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if isinstance(value, tuple):
            value = [_plain(v) if hasattr(v, "__dataclass_fields__") else v for v in value]
        out[f.name] = dict(value) if isinstance(value, Mapping) else value
    return out


@dataclass(frozen=True)
class ClaimScore:
    """A claim in a homework score: its points times the share of its graded tests that passed."""

    id: str
    section: str
    title: str
    ko: str
    points: float
    earned: float
    passed: int
    graded: int
    functions: tuple[str, ...]
    status: str  # "passed", "failed" or "not attempted"
    not_attempted: tuple[str, ...] = ()  # the stubs its failing tests ran into
    feedback: str | None = None  # the first failure's message (or that a hidden test failed)
    first_failure: str | None = None  # that failure's node id; None where only a hidden test failed
    rerun: str | None = None  # the line that reruns it, made for where it is read
    revisit: str | None = None  # the course's place to reread first

    @classmethod
    def from_json(cls, data, where: str) -> ClaimScore:
        return _record(cls, data, where, ("functions", "not_attempted"))


@dataclass(frozen=True)
class Ungradable:
    """A claim whose tests all skipped before they reached the student's code: neither for nor against."""

    id: str
    section: str
    title: str
    why: str

    @classmethod
    def from_json(cls, data, where: str) -> Ungradable:
        return _record(cls, data, where)


@dataclass(frozen=True)
class CheckpointScore:
    """A checkpoint question's points: the share of its fields judged right, a feedback line each."""

    id: str
    points: float
    earned: float
    passed: bool
    attempted: bool
    feedback: tuple[str, ...]
    fields: Mapping  # field -> [right: True, False or None (not judged here), how it was judged]
    ko: str
    en: str

    @classmethod
    def from_json(cls, data, where: str) -> CheckpointScore:
        return _record(cls, data, where, ("feedback",))


@dataclass(frozen=True)
class Score:
    """A homework run's score (``--homework``, ``stackcheck grade``, ``stackcheck watch``): or, with
    ``no_score``, only why there is none. Written with its ``format``, which a reader checks."""

    percent: float = 0.0
    earned: float = 0.0
    points: float = 0.0
    claims: tuple[ClaimScore, ...] = ()
    checkpoints: tuple[CheckpointScore, ...] = ()
    ungradable: tuple[Ungradable, ...] = ()
    skipped_here: Mapping = field(default_factory=dict)  # device -> tests that could not run here
    passport: str | None = None  # "passed/asked" checkpoints
    no_score: str | None = None
    problems: tuple[str, ...] = ()  # what makes the run's exit status non-zero
    parts: tuple[str, ...] = ()
    file: str | None = None
    answers_problem: str | None = None
    borrowed: Mapping = field(default_factory=dict)  # function -> the suite's solution it uses
    graded: bool = False  # a run of stackcheck grade's judge
    rerun: str | None = None  # the command that reruns this run's tests, made for where it is read
    format: int = SCORE_FORMAT

    @classmethod
    def from_json(cls, data, where: str = "homework") -> Score:
        if not isinstance(data, Mapping) or data.get("format") != SCORE_FORMAT:
            found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
            raise NotAReport(f"{where}: a homework score of format {found!r}; this stackcheck reads {SCORE_FORMAT}")
        found = _record(cls, data, where, ("claims", "checkpoints", "ungradable", "problems", "parts"))
        return replace(
            found,
            claims=tuple(ClaimScore.from_json(c, f"{where}: claim {i}") for i, c in enumerate(found.claims)),
            checkpoints=tuple(
                CheckpointScore.from_json(q, f"{where}: checkpoint {i}") for i, q in enumerate(found.checkpoints)
            ),
            ungradable=tuple(
                Ungradable.from_json(u, f"{where}: ungradable {i}") for i, u in enumerate(found.ungradable)
            ),
        )

    def to_json(self) -> dict:
        return _plain(self)

    def with_(self, **changes) -> Score:
        return replace(self, **changes)


@dataclass(frozen=True)
class Report:
    """A run's curriculum report: its environment, every claim of the catalogue with its tests, the
    tests that prove no claim, and what the parts of the plugin added (the course's listings and
    errata, drift since a baseline), which stay as the JSON objects they are, and the homework score."""

    environment: Mapping
    claims: tuple[ClaimResult, ...]
    other_tests: tuple[TestResult, ...] = ()
    listings: tuple[Mapping, ...] | None = None  # --course: one per listing
    errata: tuple[Mapping, ...] | None = None
    drift: Mapping | None = None  # --baseline
    homework: Score | None = None  # --homework: the score

    def __post_init__(self) -> None:
        object.__setattr__(self, "claims", tuple(self.claims))
        object.__setattr__(self, "other_tests", tuple(self.other_tests))
        for name in ("listings", "errata"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, tuple(getattr(self, name)))

    @classmethod
    def from_json(cls, data, where: str = "report") -> Report:
        if not isinstance(data, Mapping) or not {"claims", "environment"} <= data.keys():
            raise NotAReport(f"{where}: not a curriculum report (no 'claims' and 'environment')")
        found = _fields(cls, data, where)
        for name in ("claims", "other_tests", "listings", "errata"):
            if name in found and not isinstance(found[name], list):
                raise NotAReport(f"{where}: {name} is not a list")
        if not isinstance(found["environment"], Mapping):
            raise NotAReport(f"{where}: environment is not an object")
        claims = [ClaimResult.from_json(c, f"{where}: claim {i}") for i, c in enumerate(found["claims"])]
        other = [
            TestResult.from_json(t, f"{where}: other test {i}") for i, t in enumerate(found.get("other_tests", []))
        ]
        if found.get("homework") is not None:
            found["homework"] = Score.from_json(found["homework"], f"{where}: homework")
        return cls(**{**found, "claims": claims, "other_tests": other})

    @classmethod
    def load(cls, path: str | Path) -> Report:
        """The report in the JSON file at ``path``; NotAReport names the file when it is none."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise NotAReport(f"{path}: not a readable curriculum report: {error}") from None
        return cls.from_json(data, str(path))

    def to_json(self) -> dict:
        out = {
            "environment": dict(self.environment),
            "claims": [c.to_json() for c in self.claims],
            "other_tests": [t.to_json() for t in self.other_tests],
        }
        for name in ("listings", "errata"):
            if getattr(self, name) is not None:
                out[name] = list(getattr(self, name))
        if self.drift is not None:
            out["drift"] = self.drift
        if self.homework is not None:
            out["homework"] = self.homework.to_json()
        return out

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False, default=str) + "\n"

    def with_(self, **changes) -> Report:
        return replace(self, **changes)

    def counts(self) -> dict[Status, int]:
        """How many claims have each status, in Status's order."""
        return {s: sum(c.status is s for c in self.claims) for s in Status}

    def tests(self) -> Iterator[tuple[ClaimResult | None, TestResult]]:
        """Every test with its claim (None for the tests that prove no claim)."""
        for c in self.claims:
            for t in c.tests:
                yield c, t
        for t in self.other_tests:
            yield None, t
