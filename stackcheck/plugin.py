"""The stackcheck pytest plugin: device and stack markers, --require, --impl, claims, report."""
from __future__ import annotations

import os
import sys
import tomllib

import numpy as np
import pytest

from stackcheck import claims, env, gpus
from stackcheck.impl import Impl, load_module
from stackcheck.stacks import primary_stack

pytest_plugins = ["pytester"]  # the meta-tests prove each claim test catches its mutant

STATE = pytest.StashKey[dict]()
REQUIRED_BUT_MISSING = pytest.StashKey[str]()
_CONFIGS: list[pytest.Config] = []  # a stack: pytester runs nested sessions in-process
_CURRENT: list[pytest.Item] = []

DEVICE_HELP = {
    "cpu": "runs on the host CPU",
    "cuda": "needs an NVIDIA GPU (torch.cuda / jax gpu); skipped without one",
    "tpu": "needs a TPU (jax.devices('tpu')); skipped without one",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("stackcheck", "stackcheck: the AI execution stack course as tests")
    group.addoption("--require", action="append", default=[], metavar="DEVICE_OR_STACK",
                    choices=list(env.DEVICES) + list(env.STACKS),
                    help="fail, instead of skip, what needs DEVICE_OR_STACK when it is missing; also fail the "
                         "run when no test of a required device passed (repeatable)")
    group.addoption("--impl", default=None, metavar="MODULE",
                    help="module (dotted name or .py path) whose functions replace the reference "
                         "implementations in stackcheck.reference; missing names fall back")
    group.addoption("--curriculum-report", default=None, metavar="PATH",
                    help="write the claim-by-claim report as JSON to PATH and as Markdown beside it")
    group.addoption("--mojo-prebuilt", default=None, metavar="DIR",
                    help="run the Mojo GPU programs from DIR (made elsewhere by `python -m stackcheck.mojo_build "
                         "DIR`, with their runtime libraries) when this machine has no Mojo toolchain")
    group.addoption("--require-claims", action="store_true",
                    help="fail the run when any claim of the course is untested or failed")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # torch and JAX share one GPU
    pinned = gpus.pin()
    for device, text in DEVICE_HELP.items():
        config.addinivalue_line("markers", f"{device}: {text}")
    for stack in env.STACKS:
        config.addinivalue_line("markers", f"{stack}: needs the {stack} stack ({env.install_hint(stack)})")
    config.addinivalue_line("markers", "claim(*ids): the course claims this test proves (fixtures/claims.toml)")
    config.addinivalue_line("markers", "meta: a test of stackcheck itself; proves no course claim")
    config.addinivalue_line("markers", "precision: about matmul precision; TF32/precision are not pinned")
    config.addinivalue_line("markers", "max_graph(kind): the MAX graph a max test runs ('math' unless marked)")
    _register_hypothesis_profiles()
    spec = config.getoption("impl", None)
    config.stash[STATE] = {
        "impl": Impl(load_module(spec) if spec else None),
        "results": {},
        "unknown_claims": set(),
        "unclaimed": [],
        "pinned_gpu": pinned,
    }
    _CONFIGS.append(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    if config in _CONFIGS:
        _CONFIGS.remove(config)


def _register_hypothesis_profiles() -> None:
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:
        return
    common = dict(deadline=None, print_blob=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    settings.register_profile("ci", derandomize=True, database=None, max_examples=12, **common)
    # explicit: under CI hypothesis derandomizes its defaults, which "dev" must not inherit
    settings.register_profile("dev", derandomize=False, max_examples=25, **common)
    settings.load_profile("ci" if os.environ.get("CI") else "dev")


def skip_or_fail(reason: str, needed: str) -> None:
    """Skip for lack of ``needed``; fail instead when the run was started with --require ``needed``."""
    required = _CONFIGS[-1].getoption("require", []) if _CONFIGS else []
    if needed in required:
        pytest.fail(f"--require {needed}: {reason}", pytrace=False)
    pytest.skip(reason)


def pytest_sessionstart(session: pytest.Session) -> None:
    # Read the fingerprint now, once: it imports torch and JAX, which must happen in the outer
    # session, never first inside a pytester run (that drops them from sys.modules afterwards).
    if not _is_worker(session.config):
        _environment(session.config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = config.stash[STATE]
    lines = env.header_lines(_environment(config))
    lines.append(f"  implementations: {state['impl'].describe()}")
    if config.getoption("require"):
        lines.append(f"  required (missing means fail): {', '.join(config.getoption('require'))}")
    return lines


def _environment(config: pytest.Config) -> dict:
    state = config.stash[STATE]
    if "environment" not in state:
        state["environment"] = env.fingerprint()
        state["environment"]["impl"] = state["impl"].describe()
    return state["environment"]


def item_device(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("device") in env.DEVICES:
        return callspec.params["device"]
    for device in env.DEVICES[1:]:
        if item.get_closest_marker(device):
            return device
    return "cpu"


def item_claims(item: pytest.Item) -> list[str]:
    return [cid for mark in item.iter_markers("claim") for cid in mark.args]


@pytest.hookimpl(tryfirst=True)  # markers must exist before -m deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    known = claims.catalogue()
    state = config.stash[STATE]
    required = config.getoption("require")
    for item in items:
        device = item_device(item)
        if not item.get_closest_marker(device):
            item.add_marker(getattr(pytest.mark, device))
        missing = missing_for(item)
        if missing and missing[1] in required:
            item.stash[REQUIRED_BUT_MISSING] = f"--require {missing[1]}: {missing[0]}"
        elif missing:
            item.add_marker(pytest.mark.skip(reason=missing[0]))
        ids = item_claims(item)
        state["unknown_claims"].update(cid for cid in ids if cid not in known)
        item.user_properties.append(("stackcheck", {"claims": ids, "device": device,
                                                    "meta": item.get_closest_marker("meta") is not None}))
    # MAX tests last: the compiles started at collection time then overlap everything else.
    items.sort(key=lambda item: max_graph_kind(item) is not None)


def missing_for(item: pytest.Item) -> tuple[str, str] | None:
    """(reason, what is missing) when a stack or the device this item needs is not here."""
    for stack in env.STACKS:
        if item.get_closest_marker(stack) and env.stack_missing(stack):
            return env.stack_missing(stack), stack
    callspec = getattr(item, "callspec", None)
    stack = primary_stack(callspec.params["stack"]) if callspec and "stack" in callspec.params else None
    device = item_device(item)
    reason = env.device_missing(device, stack)
    return (reason, device) if reason else None


def max_graph_kind(item: pytest.Item) -> str | None:
    if item.get_closest_marker("max") is None:
        return None
    marker = item.get_closest_marker("max_graph")
    return marker.args[0] if marker else "math"


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start each MAX graph's compile at once, on a background thread (about a minute cold)."""
    kinds = {max_graph_kind(item) for item in session.items if REQUIRED_BUT_MISSING not in item.stash
             and not item.get_closest_marker("skip")} - {None}
    if kinds and not env.stack_missing("max"):
        from stackcheck import max_graphs

        for kind in sorted(kinds):
            max_graphs.prefetch(kind, session.config.stash[STATE]["impl"])


def pytest_runtest_setup(item: pytest.Item) -> None:
    _CURRENT.append(item)
    unknown = [cid for cid in item_claims(item) if cid not in claims.catalogue()]
    if unknown:
        pytest.fail(f"unknown claim id(s) {unknown}: every id must be in {claims.catalogue_path()}", pytrace=False)
    if REQUIRED_BUT_MISSING in item.stash:
        pytest.fail(item.stash[REQUIRED_BUT_MISSING], pytrace=False)


def pytest_runtest_teardown(item: pytest.Item) -> None:
    if _CURRENT and _CURRENT[-1] is item:
        _CURRENT.pop()


def course_pointer(item: pytest.Item | None = None) -> list[str]:
    """Lines sending a learner back to the course: the section, the claim and the misconception."""
    item = item or (_CURRENT[-1] if _CURRENT else None)
    if item is None:
        return []
    catalogue = claims.catalogue()
    lines = []
    for cid in item_claims(item):
        entry = catalogue.get(cid)
        if entry is None:
            continue
        lines.append(f"Course §{entry['section']} [{cid}]: {entry['title']}")
        for mc in filter(None, (cid if "misconception" in entry else None, entry.get("revisit"))):
            lines.append(f"  Misconception to revisit, {mc}: {catalogue[mc]['misconception']}")
    return lines


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    report = yield
    if report.failed and item_claims(item) and "Rerun: python -m pytest" not in str(report.longrepr):
        text = "\n".join(course_pointer(item) + [f"Rerun: python -m pytest '{item.nodeid}'"])
        report.sections.append(("stackcheck: what to revisit", text))
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    config = _CONFIGS[-1] if _CONFIGS else None
    if config is None or STATE not in config.stash:
        return
    props = dict(report.user_properties).get("stackcheck")
    if props is None:
        return
    results = config.stash[STATE]["results"]
    entry = results.setdefault(report.nodeid, {"outcome": "passed", "claims": props["claims"],
                                               "device": props["device"], "meta": props["meta"]})
    evidence = [v for k, v in report.user_properties if k == "stackcheck_evidence"]
    if evidence:
        entry["evidence"] = evidence
    if report.failed:
        entry["outcome"] = "failed"
    elif report.skipped and entry["outcome"] != "failed":
        entry["outcome"] = "skipped"


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _report(config: pytest.Config) -> dict:
    return claims.build_report(config.stash[STATE]["results"], _environment(config))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if _is_worker(config) or STATE not in config.stash:
        return
    state = config.stash[STATE]
    report = _report(config)
    state["problems"] = problems = []
    path = config.getoption("curriculum_report")
    if path:
        state["written"] = claims.write_report(report, path)
    if config.getoption("require_claims"):
        bad = [c["id"] for c in report["claims"] if c["status"] in ("untested", "failed")]
        if bad:
            problems.append(f"--require-claims: {len(bad)} claim(s) untested or failed: {', '.join(bad)}")
    for device in config.getoption("require"):
        if device in env.DEVICES and not any(r["device"] == device and r["outcome"] == "passed"
                                             for r in state["results"].values()):
            problems.append(f"--require {device}: no test ran and passed on {device}")
    if state["unknown_claims"]:
        problems.append(f"unknown claim id(s): {', '.join(sorted(state['unknown_claims']))}")
    if problems and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if _is_worker(config) or STATE not in config.stash:
        return
    state = config.stash[STATE]
    results = state["results"]
    unclaimed = sorted(n for n, r in results.items() if not r["claims"] and not r["meta"])
    tr = terminalreporter
    if unclaimed:
        tr.section("stackcheck: tests that prove no claim (add @pytest.mark.claim or @pytest.mark.meta)",
                   sep="-", yellow=True)
        for nodeid in unclaimed:
            tr.write_line(f"  {nodeid}")
    tr.section("stackcheck: course claims", sep="-")
    for line in claims.terminal_table(_report(config)):
        tr.write_line(line)
    if "written" in state:
        tr.write_line("   report: " + " and ".join(str(p) for p in state["written"]))
    for problem in state.get("problems", []):
        tr.write_line(f"   FAIL {problem}", red=True)


# ---- fixtures -------------------------------------------------------------------------------

@pytest.fixture
def impl(request: pytest.FixtureRequest) -> Impl:
    """The implementations under test: --impl's module where it provides a name, else the reference."""
    return request.config.stash[STATE]["impl"]


@pytest.fixture(scope="session")
def hand_example() -> dict[str, np.ndarray]:
    """Course §2.2's hand example: X, W, b and the hand-computed A, Z, Y (float32), and the §9.5 loss."""
    path = claims.catalogue_path().with_name("hand_example.toml")
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return {k: (np.asarray(v, dtype=np.float32) if isinstance(v, list) else v) for k, v in data.items()}


@pytest.fixture
def evidence(request: pytest.FixtureRequest):
    """Call ``evidence(**numbers)`` to attach measurements to this test's claims in the report."""
    def record(**numbers) -> None:
        request.node.user_properties.append(("stackcheck_evidence", numbers))
    return record


def _stack_module(item: pytest.Item, stack: str):
    """The stack's module if this process already imported it or the test is about to use it."""
    if stack in sys.modules:
        return sys.modules[stack]
    callspec = getattr(item, "callspec", None)
    uses = item.get_closest_marker(stack) or (callspec and primary_stack(callspec.params.get("stack", "")) == stack)
    return env.need(stack) if uses else None


@pytest.fixture(autouse=True)
def _pinned_matmul_precision(request: pytest.FixtureRequest):
    """TF32 off and JAX precision 'highest' for every test not marked ``precision`` (policy §numerics)."""
    if request.node.get_closest_marker("precision"):
        yield
        return
    restore = []
    torch = _stack_module(request.node, "torch")
    if torch is not None:
        saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
                 torch.get_float32_matmul_precision())
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")

        def undo_torch():
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved[:2]
            torch.set_float32_matmul_precision(saved[2])
        restore.append(undo_torch)
    jax = _stack_module(request.node, "jax")
    if jax is not None:
        saved_jax = jax.config.jax_default_matmul_precision
        jax.config.update("jax_default_matmul_precision", "highest")
        restore.append(lambda: jax.config.update("jax_default_matmul_precision", saved_jax))
    yield
    for undo in restore:
        undo()
