"""The stackcheck pytest plugin: markers, what each test needs, and the course pointer.

Registered by the package's entry point only for a stackcheck run (stackcheck.plugin.options, which also
holds every option). Per-run state lives in a ``Recorder`` (stackcheck.plugin.recorder) stored in
``config.stash``; the fixtures are in stackcheck.plugin.fixtures. Lower modules never import this one.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import pytest

from stackcheck.claims import catalogue
from stackcheck.claims.results import Report
from stackcheck.evidence import gpus, numerics
from stackcheck.plugin import course, gpu_gates, homework, options
from stackcheck.plugin.marks import checks_of, claims_of
from stackcheck.plugin.recorder import (
    DRAWN,
    MISSING,
    MISSING_REASON,
    OWN_CODE,
    PROPS,
    RECORDER,
    REQUIRED,
    RERUN,
    REVISIT,
    RUN,
    Recorder,
    Run,
    WorkerPart,
    skipped_at_collection,
)
from stackcheck.report import render as rendering
from stackcheck.run import max_graphs
from stackcheck.stacks import available, defaults, records
from stackcheck.stacks.records import STACKS
from stackcheck.toolchains import background

pytest_plugins = list(options.PLUGIN_MODULES[1:])

DEVICE_HELP = {
    "cpu": "runs on the host CPU",
    "cuda": "needs an NVIDIA GPU (torch.cuda / jax gpu); skipped without one",
    "tpu": "needs a TPU (jax.devices('tpu')); skipped without one",
}
MARKERS = {
    "claim(*ids)": "the course claims this test proves (fixtures/claims.toml)",
    "checks(what)": "this claim test checks an instrument or a precondition of its claim, not its statement: "
    "it fails the claim when it fails, and alone never verifies it (the claim is 'partly')",
    "meta": "a test of stackcheck itself; proves no course claim",
    "max_compiles": "a self-test that exists to compile MAX graphs (minutes cold): skipped unless --max-compiles",
    "grading_trial": "a self-test that grades a whole folder of submissions twice (minutes on 2 cores): skipped "
    "unless --grading-trial",
    "mutant_for(*ids)": "a meta-test proving the tests of these claims catch a wrong implementation",
    "precision": "about matmul precision; TF32/precision are not pinned",
    "demo": "a demonstration: listed with its claims in the report, never counted toward them",
    "max_graph(kind, ...)": "the MAX graphs a max test runs ('math' unless marked; 'sm_90': the structure graph "
    "compiled for that GPU), compiled in the background from collection on",
    "ncu(request, ...)": "the counters.Request workloads a test profiles with Nsight Compute, all profiled in "
    "the background from collection on, one ncu session per cache/metrics pair",
    "judge_traces(why)": "traces or compiles the implementation in the test's own process: grading's judge never "
    "holds the submission's code (stackcheck grade), so every homework run skips it with why (one score everywhere)",
    "gpu_needs(*needs, line=None)": "what a cuda test needs from the GPU (device_profile.NEEDS: bf16-tensor-cores, "
    "tf32, flash-attention, gemm-templates, triton-bf16); a GPU without it skips the test with the reason. "
    "line: the profile's line for the test, None where its architecture has none",
    "gpu_tiles(TileLaunch, ...)": "the tiled Triton matmuls a cuda test launches on the GPU "
    "(stackcheck.toolchains.tiles): a launch not declared fails the test; the cross-compile self-test compiles "
    "each for every GPU generation",
}
SET_HERE = pytest.StashKey[dict]()  # the environment variables pytest_configure changed: their values before
PROFILE_BEFORE = pytest.StashKey["str | None"]()  # the Hypothesis profile loaded before ours
WORK_AHEAD = pytest.StashKey["background.Background | None"]()  # the compile/profile service opened here
# Words learners type for a device marker that does not exist.
SYNONYMS = {"gpu": "cuda", "nvidia": "cuda", "cuda_gpu": "cuda", "host": "cpu", "xla_tpu": "tpu"}


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    before = dict(os.environ)
    defaults.framework_defaults()
    gpus.pin()
    changed = {k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k)}
    config.stash[SET_HERE] = {k: before.get(k) for k in changed}
    for device, text in DEVICE_HELP.items():
        config.addinivalue_line("markers", f"{device}: {text}")
    for stack in STACKS.values():
        config.addinivalue_line("markers", f"{stack.name}: needs the {stack.name} stack ({stack.install_hint()})")
    for marker, text in MARKERS.items():
        config.addinivalue_line("markers", f"{marker}: {text}")
    _check_required(config)
    _check_rootdir(config)
    balance_workers(config)
    impl = homework.select_impl(config)
    config.stash[PROFILE_BEFORE] = _register_hypothesis_profiles(fixed=homework.graded_run(config))
    report_path = config.getoption("curriculum_report", None)
    if report_path:
        _check_writable(report_path)
    run = config.stash[RUN] = Run(config, impl, frozenset(config.getoption("require", [])))
    if run.is_worker:  # as junitxml: the reports arrive at the controller, which records them
        part = WorkerPart(run)
    else:
        part = config.stash[RECORDER] = Recorder(run, report_path, grade=lambda r: homework.grade(config, r))
    config.pluginmanager.register(part, "stackcheck-recorder")
    config.stash[WORK_AHEAD] = background.opened()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Give back what ``pytest_configure`` set: the environment variables it changed, the Hypothesis
    profile it loaded and the background service it opened (a process that runs pytest more than
    once, pytester's in-process runs, the mutant server's batches, finds them as they were)."""
    part = config.pluginmanager.get_plugin("stackcheck-recorder")
    if part is not None:
        config.pluginmanager.unregister(part)
    for key in (RECORDER, RUN):
        if key in config.stash:
            del config.stash[key]
    if config.stash.get(WORK_AHEAD, None) is not None:  # opened here, not by an outer run
        background.close()
    for name, value in config.stash.get(SET_HERE, {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    profile = config.stash.get(PROFILE_BEFORE, None)
    if profile is not None:
        from hypothesis import settings

        settings.load_profile(profile)


def balance_workers(config: pytest.Config) -> None:
    """Under ``-n``, xdist's loadgroup in place of its default "load". "load" sends each worker runs of
    consecutive tests, and the self-tests' mutant and variant runs (a minute each on the GPU host) sit
    together at the end of tests_meta: in plain ``pytest -n auto`` on an H200 one worker got the last
    25 of them at once and ran them alone for 570 s after the other three had finished (2026-12-02).
    loadgroup hands out a test at a time, two ahead, and keeps an xdist_group (a course chapter's
    listings, plugin.course; the HTML self-tests) on one worker. A worker reads the mode from its own
    command line, not ours, and only under loadgroup names each test's group for the controller: so it
    is told here, or the groups were kept only where ``--course`` told it."""
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"
    if hasattr(config, "workerinput"):
        config.option.loadgroup = True


def _check_required(config: pytest.Config) -> None:
    """--require names a device, a stack or a tool (checked here: the option itself is added in every
    pytest run, where importing the stacks to list them would cost every project)."""
    choices = list(records.DEVICES) + list(STACKS) + list(available.TOOLS)
    for value in config.getoption("require", []):
        if value not in choices:
            raise pytest.UsageError(f"--require {value}: invalid choice: {value!r} (choose from {', '.join(choices)})")


def _check_rootdir(config: pytest.Config) -> None:
    """pytest picks its root folder from the command line's paths before stackcheck's options are
    known: a path option's value given after a space (``--homework ../hw``) counts as a test path,
    and one outside the folder pytest was started in moves the root above the checkout (the suite's
    folders, ini and testpaths go missing). Such a run is refused, with the spelling that works."""
    invoked = config.invocation_params.dir.resolve()
    args = [str(a) for a in config.invocation_params.args]
    for flag, value in zip(args, args[1:]):
        if flag not in options.PATH_OPTIONS or not os.path.exists(invoked / value):
            continue
        given = (invoked / value).resolve()
        if given != invoked and invoked not in given.parents:
            raise pytest.UsageError(
                f"{flag} {value}: a path outside {invoked} given after a space becomes one of pytest's "
                f"test paths (its root moved to {config.rootpath}); write {flag}={value}, with '='"
            )


def _check_writable(path: str) -> None:
    for target in rendering.report_paths(path):
        if target.is_dir():
            raise pytest.UsageError(f"--curriculum-report {path}: {target} is a folder; give a file name")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise pytest.UsageError(
                f"--curriculum-report {path}: cannot create {target.parent}: {error.strerror}"
            ) from None
        if not os.access(target.parent, os.W_OK):
            raise pytest.UsageError(f"--curriculum-report {path}: {target.parent} is not writable")


def _register_hypothesis_profiles(fixed: bool) -> str | None:
    """``fixed`` (a graded run, or CI): the same examples every run, so a grade or a CI verdict
    does not change between two runs of the same code. Returns the profile it replaced."""
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:
        return None
    before = getattr(settings, "get_current_profile_name", lambda: None)()  # where this Hypothesis has it
    common = dict(
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    # As many examples in both: most properties compile a program per drawn shape (jit, Inductor,
    # XLA on a GPU), so examples cost compiles. "dev" draws fresh ones each run; "ci" the same ones.
    settings.register_profile("ci", derandomize=True, database=None, max_examples=12, **common)
    # explicit: under CI hypothesis derandomizes its defaults, which "dev" must not inherit
    settings.register_profile("dev", derandomize=False, max_examples=12, **common)
    settings.load_profile("ci" if fixed or os.environ.get("CI") else "dev")
    return before


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _check_mark_expression(session.config)
    session.config.stash[RUN].environment_fingerprint()  # the frameworks are added as tests load them


def _check_mark_expression(config: pytest.Config) -> None:
    """-m naming a marker that does not exist selects nothing, silently: say so, with a suggestion."""
    expression = config.getoption("markexpr", "") or ""
    known = {line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")}
    words = re.findall(r"[A-Za-z_][\w\-]*", re.sub(r"\([^)]*\)", "", expression))
    unknown = [w for w in words if w not in known and w not in ("and", "or", "not")]
    if unknown:
        word = unknown[0]
        close = [SYNONYMS[word]] if word in SYNONYMS else difflib.get_close_matches(word, sorted(known), n=1)
        suggestion = f"; did you mean -m {close[0]}?" if close else ""
        devices = ", ".join(records.DEVICES)
        raise pytest.UsageError(
            f"-m {expression!r}: no marker named {word!r}{suggestion} "
            f"(devices: {devices}; stacks: {', '.join(STACKS)}; `pytest --markers` lists all)"
        )


def item_device(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("device") in records.DEVICES:
        return callspec.params["device"]
    for device in records.DEVICES[1:]:
        if item.get_closest_marker(device):
            return device
    return "cpu"


def item_stacks(item: pytest.Item) -> list[str]:
    return [name for name in STACKS if item.get_closest_marker(name)]


def missing_for(item: pytest.Item) -> tuple[str, str] | None:
    """(reason, what is missing) when a stack or the device this item needs is not here."""
    stacks = item_stacks(item)
    for stack in stacks:
        if available.stack_missing(stack):
            return available.stack_missing(stack), stack
    device = item_device(item)
    for stack in [s for s in stacks if device in STACKS[s].devices] or [None]:
        reason = available.device_missing(device, stack)
        if reason:
            return reason, device
    if device == "cpu" and "triton" in stacks:  # Triton on the CPU is its interpreter
        from stackcheck.toolchains import triton_kernels

        reason = triton_kernels.interpreter_problem()
        if reason:
            return reason, "triton"
    return None


@pytest.hookimpl(tryfirst=True)  # markers must exist before -m deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    known = catalogue.catalogue()
    run = config.stash[RUN]
    course.mark_listings(items)
    for item in items:
        device = item_device(item)
        if not item.get_closest_marker(device):
            item.add_marker(getattr(pytest.mark, device))
        missing = missing_for(item)
        if missing:
            item.stash[MISSING_REASON] = missing
        if course.listing_of(item) is not None:
            continue  # a listing is course material, recorded apart from the claims
        ids = claims_of(item)
        run.unknown_claims.update(cid for cid in ids if cid not in known)
        # A claim counts only tests that exercise the implementation under test, or run a stack or
        # a device (a Mojo binary on the GPU has no Python stack to mark); a `demo` never counts.
        counts = item.get_closest_marker("demo") is None and (
            "impl" in getattr(item, "fixturenames", ()) or bool(item_stacks(item)) or device != "cpu"
        )
        item.user_properties.append(
            (
                PROPS,
                {
                    "claims": ids,
                    "device": device,
                    "counts": counts,
                    "checks": checks_of(item),
                    "meta": item.get_closest_marker("meta") is not None,
                },
            )
        )
    gpu_gates.gate([i for i in items if MISSING_REASON not in i.stash], lambda i: item_device(i) == "cuda")
    # MAX and ncu tests last: the compiles and counter sessions started at collection (one ncu
    # process at a time on the machine: a queue every worker would wait in) overlap everything else.
    items.sort(key=lambda item: bool(max_graph_kinds(item)) or item.get_closest_marker("ncu") is not None)


def max_graph_kinds(item: pytest.Item) -> tuple[str, ...]:
    """The MAX graphs ``item`` runs, built for its device ("math" of a cuda item is "math-gpu")."""
    if item.get_closest_marker("max") is None:
        return ()
    marker = item.get_closest_marker("max_graph")
    return tuple(max_graphs.on_device(kind, item_device(item)) for kind in (marker.args if marker else ("math",)))


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from stackcheck.plugin import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_stackcheck_report_sections(
    report: Report, config: pytest.Config | None
) -> list[tuple[str, list[str]]] | None:
    """The claims table, first in the summary: the claims the run selected, every claim with -v or
    --claims all; folded into the score's section in a homework run."""
    if report.homework is not None:
        return None
    every = config is not None and (config.getoption("verbose") > 0 or config.getoption("claims") == "all")
    return [("course claims", rendering.terminal_table(report, every))]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start each MAX graph's compile (about a minute cold) and every ncu profile the selected tests
    need at once, on background threads, so they overlap the other tests (none with --collect-only).
    A graded run loads the student's file first (homework.load_late)."""
    homework.load_late(session)
    if session.config.option.collectonly:  # no test runs: nothing to compile or profile for
        return
    runnable = [item for item in session.items if not skipped_at_collection(item)]  # they start no compile
    kinds = {k for item in runnable for k in max_graph_kinds(item)}
    # Under xdist every worker collects every test: each compiles its share at collection, at once.
    if kinds and not available.stack_missing("max"):
        workerinput = getattr(session.config, "workerinput", {})
        for kind in max_graphs.share(kinds, workerinput.get("workerid", "gw0"), workerinput.get("workercount", 1)):
            max_graphs.prefetch(kind, session.config.stash[RUN].impl)
    requests = [r for item in runnable for mark in item.iter_markers("ncu") for r in mark.args]
    if requests:
        from stackcheck.toolchains import counters

        counters.prefetch(requests, shared=_run_folder(session.config))


def _run_folder(config: pytest.Config) -> str | None:
    """A folder this test run's xdist workers share (None without xdist): one of them profiles."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return None
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"stackcheck-run-{workerinput['testrunuid']}")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    unknown = [cid for cid in claims_of(item) if cid not in catalogue.catalogue()]
    if unknown:
        pytest.fail(f"unknown claim id(s) {unknown}: every id must be in {catalogue.catalogue_path()}", pytrace=False)
    if MISSING_REASON in item.stash:
        raise available.Missing(*item.stash[MISSING_REASON])  # one location for all: pytest folds them by reason
    gpu_gates.skip_if_gated(item)
    if item.get_closest_marker("max_compiles") and not item.config.getoption("max_compiles"):
        pytest.skip("it compiles MAX graphs for minutes cold on 2 cores: run it with --max-compiles (CI does)")
    if item.get_closest_marker("grading_trial") and not item.config.getoption("grading_trial"):
        pytest.skip("it grades folders of submissions twice, minutes on 2 cores: run it with --grading-trial (CI does)")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    with numerics.seeds_drawn() as drawn:
        item.stash[DRAWN] = drawn
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    excinfo = call.excinfo
    if excinfo is not None and isinstance(excinfo.value, available.Missing):
        needed = excinfo.value.needed
        report.user_properties.append((MISSING, needed))
        if report.skipped and isinstance(report.longrepr, tuple):  # the reason alone, not the class name
            report.longrepr = (*report.longrepr[:2], excinfo.value.msg)
        if needed in item.config.stash[RUN].require:
            report.outcome = "failed"
            report.longrepr = f"--require {needed}: {excinfo.value.msg}"
            report.user_properties.append((REQUIRED, needed))
            return report  # nothing of the course to revisit: the machine lacks what was required
    if report.failed and claims_of(item):
        drawn = item.stash.get(DRAWN, [])
        claimed = claims_of(item)
        own = homework.own_code(item, excinfo) if excinfo is not None else None
        # a slip of Python in the student's code (a misspelt name) is no course concept: no claim by default
        pointers = catalogue.revisit(failure_said(item, excinfo, report), [] if own and own.slip else claimed)
        if pointers:
            report.user_properties.append((REVISIT, {"id": pointers[0][0], "why": pointers[0][1]}))
        if own:
            report.user_properties.append((OWN_CODE, own.where))
        lines = [own.line] if own else []
        lines += [catalogue.revisit_line(*pointers[0])] if pointers else []
        lines += catalogue.course_pointer(claimed)
        lines += [f"Random inputs (seeded): {'; '.join(drawn)}"] if drawn else []
        rerun = rerun_command(item)
        report.user_properties.append((RERUN, rerun))
        lines.append(f"Rerun: {rerun}")
        report.sections.append(("stackcheck: what to revisit", "\n".join(lines)))
    return report


def failure_said(item: pytest.Item, excinfo, report: pytest.TestReport) -> str:
    """What a failure says, as pytest's long traceback writes it whatever ``--tb`` the run has: the
    hint is read from it, so it is one hint in every view (a whole-part run and watch pass --tb=no,
    which writes a message's later lines indented like quoted source, where revisit skips them). A
    failure told in one line (the homework plugin's) is that line."""
    if excinfo is None or isinstance(report.longrepr, str):
        return str(report.longrepr)
    if item.config.option.tbstyle in ("auto", "long") or not hasattr(item, "_repr_failure_py"):
        return str(report.longrepr)
    return str(item._repr_failure_py(excinfo, style="long"))


def rerun_command(item: pytest.Item) -> str:
    """The command that reruns ``item`` alone, against the same homework or graded file when there is
    one, from where it is read: where pytest was started, or for a graded run's feedback (read in the
    student's own folder, on another machine) by the test's module, wherever the suite is installed."""
    if homework.graded(item.config) and importable(item):
        return f"{homework.rerun_prefix(item.config)} --pyargs {quoted(module_id(item))}"
    return f"{homework.rerun_prefix(item.config)} {quoted(rerun_id(item))}"


def importable(item: pytest.Item) -> bool:
    """Whether ``item``'s module is a module of an installed package (tests_math.test_s2_2_hand)."""
    module = getattr(item, "module", None)
    return module is not None and "." in module.__name__ and Path(module.__file__) == Path(str(item.path))


def module_id(item: pytest.Item) -> str:
    """``item`` as --pyargs reruns it: its module's dotted name, then its class and name."""
    return "::".join([item.module.__name__, *inner_names(item)])


def inner_names(item: pytest.Item) -> list[str]:
    """``item``'s class (if any) and its own name, as a node id ends."""
    return [node.name for node in item.listchain() if isinstance(node, (pytest.Class, pytest.Item))]


def quoted(word: str) -> str:
    """``word`` in single quotes for a POSIX shell, whatever it holds (a space, a bracket, a quote)."""
    return "'" + word.replace("'", "'\"'\"'") + "'"


def rerun_id(item: pytest.Item) -> str:
    """A node id that reruns ``item`` from where pytest was started, also for --pyargs runs, whose
    node ids can lack the file."""
    start = item.config.invocation_params.dir
    try:
        where = str(Path(os.path.relpath(item.path, start)))
    except ValueError:  # another drive
        where = str(item.path)
    if where.startswith(".."):
        where = str(item.path)
    return "::".join([where, *inner_names(item)])
