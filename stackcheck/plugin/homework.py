"""Homework mode: ``--homework DIR`` (or ``--impl FILE --strict-impl``) grades a student's file.

Only the assigned parts' test folders run, and of those only the tests of stacks the
assignment touches; a stub is "not attempted" in one line, a function that never returns is
named by the per-test timeout, captured output is capped, and the score (claims and
checkpoints) closes the run and the report.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from stackcheck.claims.results import Report, Score
from stackcheck.grading import sandbox
from stackcheck.homework import assignment, checkpoints, reach, scoring
from stackcheck.impl import contract, integrity, isolation, kernel_source
from stackcheck.impl.loader import JUDGE, Impl, ImplError, check_names, deepest_frame_in, load_module
from stackcheck.paths import data
from stackcheck.plugin.recorder import EVIDENCE, NOT_ATTEMPTED, RUN, STUDENT, skipped_at_collection
from stackcheck.run import invocation
from stackcheck.stacks.records import STACKS

OUTPUT_LINES = 40  # captured output kept per section (head and tail) when a student's code runs
HOMEWORK = pytest.StashKey["Homework"]()
OWN_TIMEOUT = pytest.StashKey[bool]()  # the homework set pytest-timeout's limit (none was given)
LATE = pytest.StashKey["Late"]()  # a graded run's student file, until load_late loads it
NOT_LOADED = pytest.StashKey[str]()  # why load_late could not load it


@dataclass(frozen=True)
class Homework:
    parts: tuple[str, ...]
    assigned: frozenset[str]
    file: str  # the student's .py, absolute
    answers: str  # answers.toml beside it


@dataclass(frozen=True)
class Late:
    """A graded run's student file, loaded once the tests (the instructor's among them) are collected."""

    spec: str
    folder: str | None
    assigned: frozenset[str]
    borrowing: object
    worker: object  # stackcheck.grading.judge.Worker, loading the file while the judge collects


def select_impl(config: pytest.Config) -> Impl:
    """The implementations under test, from --impl or --homework; homework mode is stashed. A graded
    run (``--homework-graded``) reads the student's file here without running it: ``load_late`` runs
    it once the tests are collected."""
    folder, spec = config.getoption("homework", None), config.getoption("impl", None)
    if folder and spec:
        raise pytest.UsageError("--homework DIR and --impl FILE: give one of them")
    _shard(config)  # refused before anything starts
    if folder:
        spec = os.path.join(folder, "homework.py")
        if not os.path.isfile(spec):
            raise pytest.UsageError(
                f"--homework {folder}: no homework.py there; `stackcheck homework init {folder}` writes the starter"
            )
    strict = bool(folder) or config.getoption("strict_impl", False)
    if strict and not spec:
        raise pytest.UsageError("--strict-impl grades a file: give it with --impl FILE")
    if not strict:
        module = _loaded(spec, folder) if spec else None
        return Impl(module)
    borrowing = None
    if os.path.isfile(spec):  # read before any of the student's code runs
        try:
            borrowing = integrity.borrowed(spec)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # load_module says where, in one line
    chosen = config.getoption("homework_part")
    if config.getoption("homework_graded", False) and os.path.isfile(spec):
        _judge_only(config)
        parts = tuple(chosen or assignment.declared(spec) or ("all",))
        assigned = _assigned(parts, spec, folder)
        config.stash[LATE] = Late(spec, folder, assigned, borrowing, _worker_begun(config, spec, assigned))
        _stash_homework(config, parts, assigned, os.path.abspath(spec))
        return Impl(None, assigned, borrowing)  # stands in until load_late
    module = _loaded(spec, folder, check=False)
    parts = tuple(chosen or getattr(module, "ASSIGNED", None) or ("all",))
    assigned = _assigned(parts, spec, folder)
    _check_names(module, spec, folder, assigned)
    impl = _student(config, module, assigned, borrowing)
    _stash_homework(config, parts, assigned, os.path.abspath(getattr(module, "__file__", spec) or spec))
    return impl


def _judge_only(config: pytest.Config) -> None:
    """Mark this process, and every process it starts, as a graded run's judge: the loader imports no
    file there (loader.JUDGE), so a child that would import the submission outside its sandbox (a MAX
    compile for a GPU, a fresh interpreter) is refused; the worker, which it starts too, unmarks itself."""
    was = os.environ.get(JUDGE)
    os.environ[JUDGE] = "1"
    config.add_cleanup(lambda: os.environ.pop(JUDGE, None) if was is None else os.environ.__setitem__(JUDGE, was))


def load_late(session: pytest.Session) -> None:
    """A graded run, once its tests are collected: read whether the submission's worker (the only
    process that imports it, stackcheck.grading.judge, sandboxed by stackcheck.grading.sandbox; started
    at configure, _worker_begun) loaded it, and grade its functions through it. A file that does not
    load is the run's one error, and its score's reason."""
    config = session.config
    late = config.stash.get(LATE, None)
    if late is None:
        return
    del config.stash[LATE]
    from stackcheck.grading import judge

    worker = late.worker
    answer = worker.load()
    if answer[0] != "loaded":
        text = str(answer[1]).replace(str(sandbox.INSIDE / "homework.py"), late.spec)
        config.stash[NOT_LOADED] = _as_given(text, late.spec, late.folder)
        raise pytest.UsageError(config.stash[NOT_LOADED])
    _reset_with(worker, config)
    module = judge.stand_in(
        worker, [n for n in answer[1] if isinstance(n, str)], os.path.abspath(late.spec), str(answer[3])
    )
    impl = Impl(module, late.assigned, late.borrowing)
    config.add_cleanup(integrity.tripwire(impl))
    run = config.stash[RUN]
    run.impl = impl
    if run.environment is not None:
        run.environment["impl"] = impl.describe()


LAUNCHED = kernel_source.KERNEL_FUNCTIONS | {"mojo_package"}  # what the launcher builds and runs (not the worker)


def _worker_begun(config: pytest.Config, spec: str, assigned: frozenset[str]):
    """The submission's worker, started and loading ``spec`` (its answer is read in load_late)."""
    from stackcheck.grading import judge

    start, log = _worker_start(config, spec)
    worker = judge.Worker(start, assigned, log)
    if assigned is None or assigned & LAUNCHED:  # the launcher: an empty file's worker
        empty = Path(tempfile.mkdtemp(prefix="stackcheck-launcher-"))
        config.add_cleanup(lambda: shutil.rmtree(empty, ignore_errors=True))
        (empty / "homework.py").write_text("", encoding="utf-8")
        worker.launcher_start = _worker_start(config, str(empty / "homework.py"))[0]
    config.add_cleanup(worker.stop)
    try:
        worker.begin()
    except OSError:  # it ended at once: load() reads why
        pass
    return worker


def _reset_with(worker, config: pytest.Config) -> None:
    """``torch._dynamo.reset()`` in the judge resets the worker's Dynamo too: a test that resets it
    before counting compiles counts the student's compiled function's compiles afresh."""
    try:
        import torch._dynamo
    except ImportError:
        return
    original = torch._dynamo.reset

    def reset() -> None:
        original()
        worker.reset_dynamo()

    torch._dynamo.reset = reset
    config.add_cleanup(lambda: setattr(torch._dynamo, "reset", original))


def _worker_start(config: pytest.Config, spec: str):
    """(start, its log): how the judge starts the submission's worker: ``--homework-worker=JSON`` (stackcheck grade's:
    the jail, the limits, whether unsafe), else the default jail around the folder of ``spec``. The
    worker sees its copy at sandbox.INSIDE, the suite without its solutions, nothing of the judge."""
    from stackcheck.grading import judge, worker

    given = config.getoption("homework_worker", None)
    try:
        settings = json.loads(Path(given).read_text(encoding="utf-8")) if given else {}
        jail = sandbox.Jail.from_json(settings.get("jail", {}))
    except (OSError, ValueError, TypeError, KeyError) as error:
        raise pytest.UsageError(f"--homework-worker {given}: {error}") from None
    private = Path(tempfile.mkdtemp(prefix="stackcheck-judge-"))
    config.add_cleanup(lambda: shutil.rmtree(private, ignore_errors=True))
    copy = Path(spec).resolve().parent
    hidden = {*jail.hidden, private, *sandbox.covered(data.ROOT), data.path(*checkpoints.KEY_FILE), data.path("mojo")}
    hidden |= sandbox.other_suites([*sys.path, *map(str, jail.readable)], data.ROOT)
    jail = dataclasses.replace(
        jail,
        readable=(*jail.readable, data.ROOT),
        hidden=tuple(sorted(hidden)),
        replaced=(*jail.replaced, *integrity.stripped_solutions(private)),
        inside=sandbox.INSIDE,
    )
    resident = settings.get("resident_bytes")
    if resident is not None and not (isinstance(resident, int) and resident > 0):
        raise pytest.UsageError(f"--homework-worker {given}: resident_bytes is not a positive integer: {resident!r}")
    limits = sandbox.Limits(wall_s=float(settings.get("wall_s", 3600)), resident_bytes=resident)
    unseen = (copy, Path.cwd(), *jail.hidden)  # nothing of the judge's places on the worker's import path
    shown = [
        p for p in sys.path if p and os.path.isabs(p) and not any(Path(p).resolve().is_relative_to(u) for u in unseen)
    ]
    command = [sys.executable, "-I", "-c", worker.launch(shown), str(sandbox.INSIDE / "homework.py")]
    unsafe = bool(settings.get("unsafe", False))
    if unsafe and sandbox.bubblewrap()[0] is None:
        command[-1] = str(copy / "homework.py")

    def start() -> subprocess.Popen:
        log = judge.stderr_into(private / "worker.log")
        try:
            started = sandbox.start(
                command, copy, limits, jail, unsafe, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log
            )
        except sandbox.NoSandbox as error:
            raise pytest.UsageError(f"{error}") from None
        finally:
            os.close(log)
        config.add_cleanup(started.close)
        return started.process

    return start, private / "worker.log"


def _loaded(spec: str, folder: str | None, assigned: frozenset[str] | None = None, check: bool = True):
    """The module, its names checked against the surface (and ``assigned``) unless not ``check``; an
    ImplError as a one-line UsageError."""
    try:
        module = load_module(spec)
    except ImplError as error:
        raise pytest.UsageError(_as_given(str(error), spec, folder)) from None
    if check:
        _check_names(module, spec, folder, assigned)
    return module


def _check_names(module, spec: str, folder: str | None, assigned: frozenset[str] | None) -> None:
    try:
        check_names(module, spec, assigned)
    except ImplError as error:
        raise pytest.UsageError(_as_given(str(error), spec, folder)) from None


def _assigned(parts: tuple[str, ...], spec: str, folder: str | None) -> frozenset[str]:
    try:
        return assignment.assigned(parts)
    except ValueError as error:
        raise pytest.UsageError(_as_given(f"--impl {spec}: {error}", spec, folder)) from None


def _student(config: pytest.Config, module, assigned: frozenset[str], borrowing) -> Impl:
    """The student's implementations: what the file and its loaded code reach is borrowing, and so is
    a call into the suite's solutions while one of them runs (integrity.tripwire, until the run ends)."""
    impl = Impl(module, assigned, integrity.with_reached(borrowing, module, assigned))
    config.add_cleanup(integrity.tripwire(impl))
    return impl


def _as_given(text: str, spec: str, folder: str | None) -> str:
    """Name the folder given and the file in it: "--homework hw: homework.py:3: SyntaxError: ..." """
    if folder:
        text = text.replace(f"--impl {spec}: ", f"--homework {folder}: ", 1).replace(f"{spec}:", "homework.py:")
    return text


def _stash_homework(config: pytest.Config, parts, assigned: frozenset[str], path: str) -> None:
    answers = config.getoption("homework_answers", None) if config.getoption("homework_graded", False) else None
    answers = answers or os.path.join(os.path.dirname(path), "answers.toml")
    config.stash[HOMEWORK] = Homework(parts, assigned, path, answers)
    if hasattr(config.option, "timeout") and config.option.timeout is None and not os.environ.get("PYTEST_TIMEOUT"):
        config.option.timeout = contract.TIMEOUT_S  # read by pytest-timeout's own pytest_configure, after this
        config.stash[OWN_TIMEOUT] = True


def instructors_file(report_path: str) -> Path:
    """Where a graded run keeps the instructor's tests it withheld from the student's report."""
    from stackcheck.report.render import report_paths

    json_path = report_paths(report_path)[0]
    return json_path.with_name(f"{json_path.stem}.instructor-only.json")


def rerun_prefix(config: pytest.Config) -> str:
    """The command that judges this run's file again as this run did (``invocation.rerun_prefix``);
    a graded run's names the student's own folder (``scoring.GRADED_RERUN``)."""
    return scoring.GRADED_RERUN if graded(config) else invocation.rerun_prefix(config)


def graded(config: pytest.Config) -> bool:
    """Whether this is a graded run (its feedback is read later, in the student's own folder)."""
    return config.stash.get(HOMEWORK, None) is not None and config.getoption("homework_graded", False)


def graded_run(config: pytest.Config) -> bool:
    """Set a homework run up; False for any other run.

    With no test path given, the assigned parts' folders are what runs (from inside the homework
    folder pytest would otherwise collect that folder: nothing). Unless tests were named (as the
    rerun lines do), the terminal leads with the score: no tracebacks and no pytest list of
    failures, since the score names each failing function with its own message (``--tb`` wins)."""
    work = config.stash.get(HOMEWORK, None)
    if work is None:
        return False
    if config.args_source == pytest.Config.ArgsSource.INVOCATION_DIR:
        folders = [config.rootpath / part for part in assignment.folders(work.parts)]
        if not all(f.is_dir() for f in folders):
            raise pytest.UsageError(
                f"--homework: pytest's root folder {config.rootpath} does not hold stackcheck's tests; "
                f"grade from the checkout: cd {shlex.quote(str(data.ROOT))} && "
                f"python -m pytest --homework={shlex.quote(os.path.dirname(work.file))}"
            )
        config.args = [str(f) for f in folders]
    if config.args_source != pytest.Config.ArgsSource.ARGS:  # a whole part; named tests show their details
        if config.option.tbstyle == "auto":
            config.option.tbstyle = "no"
        config.option.reportchars = ""
    return True


def grade(config: pytest.Config, report: Report) -> Report:
    """``report`` with its homework score (unchanged outside homework mode). A run in which no test
    reached the student's functions has no score, only the reason; a wrong checkpoint, like a
    failing test, makes the run's exit status non-zero (``problems``). A graded run's report holds
    no instructor's test: those go to the instructor's own file."""
    work = config.stash.get(HOMEWORK, None)
    if work is None:
        return report
    unscored = Score(parts=tuple(work.parts), file=work.file)
    if NOT_LOADED in config.stash:
        why = f"no score: {config.stash[NOT_LOADED]}"
        return report.with_(homework=unscored.with_(no_score=why, problems=(why,)))
    tests = {t.nodeid: t for c, t in report.tests() if c is not None}
    if not any(t.student for t in tests.values()):
        why = (
            f"no score: none of the {len(tests)} tests that ran reached a function of "
            f"{os.path.basename(work.file)} (are the assigned parts' test folders selected?)"
        )
        return report.with_(homework=unscored.with_(no_score=why, problems=(why,)))
    answers, problem = checkpoints.load_answers(work.answers)
    impl = config.stash[RUN].impl
    timed_call = impl.timed_call if "timed_call" in work.assigned else None
    graded = bool(config.getoption("homework_graded", False))
    result = scoring.score(report, checkpoints.grade(answers, timed_call)).with_(
        parts=tuple(work.parts),
        file=work.file,
        answers_problem=problem,
        borrowed=dict(impl.borrowed),
        graded=graded,
        rerun=rerun_prefix(config),
    )
    if graded and config.getoption("curriculum_report", None):  # what the student gets holds no hidden test
        report, withheld = scoring.withhold_instructor_tests(report)
        instructors_file(config.getoption("curriculum_report")).write_text(json.dumps(withheld), encoding="utf-8")
    wrong = [q.id for q in result.checkpoints if not q.passed]
    result = result.with_(problems=(f"checkpoints not right yet: {', '.join(wrong)}",) if wrong else ())
    return report.with_(homework=result)


# ---- collection: the assigned parts only --------------------------------------------------


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    work = config.stash.get(HOMEWORK, None)
    if work is None:
        return None
    try:
        top = collection_path.relative_to(config.rootpath).parts[0]
    except (ValueError, IndexError):
        return None
    suite = {*reach.CLAIM_FOLDERS, *reach.SELF_TEST_FOLDERS, *assignment.PARTS.values()}  # the suite's own folders
    if top in suite and top not in assignment.folders(work.parts):
        return True
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop the suite's self-tests and the tests of stacks the homework does not touch; give a test
    that waits for a MAX graph compile, or for torch.compile, the compile's time, not the homework's
    per-test limit."""
    work = config.stash.get(HOMEWORK, None)
    if work is None:
        return
    keep, drop = [], []
    timed = config.pluginmanager.hasplugin("timeout")
    graded = config.getoption("homework_graded", False)
    ungradable = _ungradable(config) if graded else {}
    for item in items:
        if item.nodeid in ungradable:
            why = ungradable[item.nodeid].splitlines()[0][:200] if ungradable[item.nodeid] else "it failed"
            item.add_marker(
                pytest.mark.skip(
                    reason=f"the course's own solution fails it when graded by a judge that never holds "
                    f"the submission's code ({why}); it counts neither way"
                )
            )
        traces = item.get_closest_marker("judge_traces")
        if traces is not None:  # every homework run scores what grading scores (watch and pytest as stackcheck grade)
            why = traces.args[0] if traces.args else "it traces the implementation in its own process"
            item.add_marker(
                pytest.mark.skip(reason=f"not scored: grading's judge never holds the submission's code ({why})")
            )
        if timed:
            item.add_marker(_timeout(config, item), append=False)
        stacks = [s for s in STACKS if item.get_closest_marker(s)]
        direct = [s for s in stacks if not any(s in STACKS[o].uses for o in stacks)]  # triton, not its torch
        off = item.get_closest_marker("meta") or not all(assignment.stack_runs(s, work.assigned) for s in direct)
        (drop if off else keep).append(item)
    shard, shards = _shard(config)
    if shards > 1:  # dealt in turn: first torch.compile's tests that run (cold compiles: most of the time)
        dealt = sorted(keep, key=lambda i: (skipped_at_collection(i), not i.get_closest_marker("torch_compile")))
        mine = {id(item) for item in dealt[shard - 1 :: shards]}
        drop += [item for item in keep if id(item) not in mine]
        keep = [item for item in keep if id(item) in mine]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _shard(config: pytest.Config) -> tuple[int, int]:
    """``--homework-shard=K/N`` as (K, N); (1, 1) without it."""
    given = config.getoption("homework_shard", None)
    if given is None:
        return 1, 1
    k, _, n = str(given).partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise pytest.UsageError(f"--homework-shard {given}: give K/N with 1 <= K <= N, as 1/2")
    return int(k), int(n)


def _ungradable(config: pytest.Config) -> dict[str, str]:
    path = config.getoption("homework_ungradable", None)
    if not path:
        return {}
    try:
        listed = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise pytest.UsageError(f"--homework-ungradable {path}: {error}") from None
    if not isinstance(listed, dict):
        raise pytest.UsageError(f"--homework-ungradable {path}: must hold an object {{test id: why}}")
    return {str(k): str(v) for k, v in listed.items()}


def _timeout(config: pytest.Config, item: pytest.Item) -> pytest.MarkDecorator:
    """pytest-timeout's limit for a homework test, timing the test's call only: the student's code
    runs there (no fixture calls it), and a limit that also covered the report could fire inside
    pytest's own traceback rendering on a slow machine (an INTERNALERROR, not a timed-out test)."""
    seconds = None  # pytest-timeout's own: --timeout, PYTEST_TIMEOUT, the ini, or the homework's
    if config.stash.get(OWN_TIMEOUT, False) and (
        item.get_closest_marker("max_graph") or item.get_closest_marker("mojo")
    ):
        seconds = contract.COMPILE_TIMEOUT_S  # waits for a compile (a MAX graph, a Mojo package), not the student
    elif config.stash.get(OWN_TIMEOUT, False) and item.get_closest_marker("torch_compile"):
        seconds = contract.TORCH_COMPILE_TIMEOUT_S  # Inductor's cold compile
    return pytest.mark.timeout(timeout=seconds, func_only=True)


# ---- running: what the student's code did -------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    impl = item.config.stash[RUN].impl
    impl.touched.clear()
    contract.STUBS_CALLED.clear()
    worker = _worker_of(impl)
    if worker is not None:
        worker.measured.clear()


def _worker_of(impl):
    """The graded submission's worker behind ``impl`` (stackcheck.grading.judge), or None."""
    from stackcheck.grading import judge

    for name in impl.provided:
        found = judge.owner_of(getattr(impl.module, name, None))
        if found is not None:
            return found[0]
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    impl = item.config.stash[RUN].impl
    if impl.module is None:
        return (yield)
    work = item.config.stash.get(HOMEWORK, None)
    # judged before pytest builds the report where it is a failure: not a skip, and not a test marked
    # xfail (which may pass as expected: that one is judged once its report says it failed)
    ahead = call.excinfo is not None and not call.excinfo.errisinstance((pytest.skip.Exception, pytest.xfail.Exception))
    ahead = ahead and (item.get_closest_marker("xfail") is None or item.config.option.runxfail)
    line = _one_line(call.excinfo, _student_file(work, impl), item) if ahead else None
    told = line is not None and call.when == "call" and "repr_failure" not in item.__dict__
    if told:
        # the one line is the report: pytest need not render the traceback it replaces (each frame's
        # whole source file parsed again, 66 ms for torch.compiler.disable's, on every failing test)
        item.repr_failure = lambda excinfo, style=None: line[0]
    try:
        report = yield
    finally:
        if told:
            del item.repr_failure
    if work is not None:
        report.user_properties.append((STUDENT, impl.student_names(impl.touched)))
    worker = _worker_of(impl)
    if worker is not None and worker.measured and report.when == "call":
        report.user_properties.append((EVIDENCE, {"measured by the submission's worker": sorted(worker.measured)}))
    if call.excinfo is not None and getattr(call.excinfo.value, "source", None):  # a stripped solution called
        impl.borrowed.setdefault(call.excinfo.value.student, call.excinfo.value.source)
    if not ahead and call.excinfo is not None and report.failed:
        line = _one_line(call.excinfo, _student_file(work, impl), item)
    if line is not None and report.failed:
        text, untried = line
        report.longrepr = text
        if untried:
            report.user_properties.append((NOT_ATTEMPTED, untried))
    report.sections = [
        (title, _capped(content) if title.startswith("Captured") else content) for title, content in report.sections
    ]
    return report


def _one_line(excinfo: pytest.ExceptionInfo, student_file: str, item: pytest.Item):
    """(feedback, stubs hit) replacing the traceback, for the failures a student causes; or None."""
    frame = _student_frame(excinfo, student_file)
    where = f"{os.path.basename(student_file)}:{frame.lineno}" if frame else None
    stubs = sorted(contract.STUBS_CALLED)
    # a stub's error caught and judged, or raised where no frame of the file shows (a child process)
    if stubs and not (excinfo.errisinstance(NotImplementedError) and frame):
        section = contract.TASKS[stubs[0]].section
        return f"not attempted: {stubs[0]} (course §{section}) {_untried(stubs[0], student_file)}", stubs
    if isinstance(excinfo.value, contract.NotAttempted) or (excinfo.errisinstance(NotImplementedError) and frame):
        name = frame.name if frame else str(excinfo.value).split(": ", 1)[-1].split()[0]
        section = contract.TASKS[name].section if name in contract.TASKS else "?"
        return f"not attempted: {name} (course §{section}) {_untried(name, student_file)}", [name]
    if isinstance(excinfo.value, (contract.ReturnError, contract.Borrowed, contract.TimedOut, isolation.Crashed)):
        return f"{excinfo.value}" + (f" [{where}]" if where else ""), []
    if excinfo.typename == "Failed" and "Timeout" in str(excinfo.value):
        seconds = item.config.getoption("timeout", None) or contract.TIMEOUT_S
        frame = frame or _interrupted(item.config.stash[RUN].impl, student_file)
        if frame:
            item.config.stash[RUN].impl.stop_calling(frame.name, float(seconds))
            return (
                f"timed out after {float(seconds):g} s: {frame.name} ({where}) did not return (an endless loop?)"
            ), []
        return f"timed out after {float(seconds):g} s in {excinfo.traceback[-1].name}", []
    return None


def _untried(name: str, student_file: str) -> str:
    """Why ``name`` is not attempted: missing from the student's file, or its stub still raising."""
    try:
        defined = f"def {name}(" in Path(student_file).read_text(encoding="utf-8", errors="replace")
    except OSError:
        defined = True
    return "still raises NotImplementedError" if defined else f"is not in {os.path.basename(student_file)}"


SLIPS = (NameError, AttributeError, ImportError, SyntaxError)  # Python slips: no course section explains them
NOT_OWN = (contract.NotAttempted, contract.ReturnError, contract.Borrowed, contract.TimedOut, isolation.Crashed)


@dataclass(frozen=True)
class OwnCode:
    """A failure raised in the student's own code: what and where, and whether it is a slip."""

    where: str  # "NameError at homework.py:26 (numpy_steps): name 'ww' is not defined"
    slip: bool

    @property
    def line(self) -> str:
        return f"Fix first, your code raised {self.where}"


def own_code(item: pytest.Item, excinfo: pytest.ExceptionInfo) -> OwnCode | None:
    """Where a failure is an exception in the student's code (a NameError, a shape error its matmul
    raised): "Fix first, your code raised ... at FILE:LINE (function): message", the file as the
    student finds it (a graded run: its name in the submission); None for every other failure."""
    impl = item.config.stash[RUN].impl
    if impl is None or impl.module is None:
        return None
    error = excinfo.value
    if isinstance(error, (*NOT_OWN, NotImplementedError, pytest.skip.Exception, pytest.fail.Exception)):
        return None
    work = item.config.stash.get(HOMEWORK, None)
    student_file = _student_file(work, impl)
    frame = _student_frame(excinfo, student_file)
    if frame is None:
        return None
    if isinstance(error, AssertionError) and os.path.abspath(excinfo.traceback[-1].path) != student_file:
        return None  # a test's judgement of what the code returned, not an error the code raised
    if work is not None and item.config.getoption("homework_graded", False):
        shown = os.path.basename(student_file)
    else:
        relative = os.path.relpath(student_file, item.config.invocation_params.dir)
        shown = student_file if relative.startswith("..") else relative
    said = (str(error).strip().splitlines() or [""])[0][:300]
    where = f"{type(error).__name__} at {shown}:{frame.lineno} ({frame.name}): {said}"
    return OwnCode(where, isinstance(error, SLIPS))


def _student_file(work, impl) -> str:
    """The student's file: the homework's, else the --impl module's."""
    return work.file if work else os.path.abspath(getattr(impl.module, "__file__", "") or "")


def _student_frame(excinfo: pytest.ExceptionInfo, student_file: str):
    """The innermost frame of the failure in the student's file: in this process, or in a graded run's worker."""
    return deepest_frame_in(excinfo.tb, student_file) or _worker_frame(excinfo.value, student_file)


def _worker_frame(error: BaseException, student_file: str):
    """Where in the student's file an exception raised in a graded run's worker came from (its
    innermost frame there), as a FrameSummary; None for any other exception."""
    import traceback

    frames = getattr(error, "student_frames", None)
    if not frames:
        return None
    _, line, name = frames[-1]
    return traceback.FrameSummary(student_file, line, name)


def _interrupted(impl, student_file: str):
    """The student's function a graded run's worker was running when the per-test timeout fired."""
    import traceback

    worker = _worker_of(impl)
    name = worker.interrupted if worker is not None else None
    return traceback.FrameSummary(student_file, 0, name) if name else None


def _capped(content: str) -> str:
    lines = content.splitlines()
    if len(lines) <= OUTPUT_LINES:
        return content
    half = OUTPUT_LINES // 2
    return "\n".join(lines[:half] + [f"... {len(lines) - OUTPUT_LINES} lines of output cut ..."] + lines[-half:])


def pytest_stackcheck_report_sections(report: Report) -> list[tuple[str, list[str]]] | None:
    """The homework score, per claim and checkpoint, in homework mode."""
    return [("homework", scoring.lines(report.homework))] if report.homework is not None else None
