import functools
import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from stackcheck.claims import mutation
from stackcheck.claims.fresh_interpreters import pytest_runtest_call  # noqa: F401 - its hook, for this folder
from stackcheck.evidence import device_profile
from stackcheck.homework import reach

ROOT = Path(__file__).resolve().parent.parent
# stackcheck installed with its pytest11 entry point; the H200's image runs it from PYTHONPATH
ENTRY_POINT = any(ep.name == "stackcheck" for ep in entry_points(group="pytest11"))
# issue 50's attack corpus: submissions (data, with a pytest/ package among them), graded by test_grading_attacks.py
collect_ignore = ["grading_attacks"]


def pytest_configure(config: pytest.Config) -> None:
    """The plugin's self-tests run pytest inside pytest: only this folder loads pytester. (Not by
    ``pytest_plugins``, which pytest refuses in a conftest that is not loaded at start-up.)"""
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


@pytest.fixture(scope="session", autouse=True)
def pip_installs_where_it_is_told():
    """A self-test's pip (a wheel built, a notebook kernel's install into its venv) installs where the
    test says, never into the user's site folder, as PIP_USER=1 or pip.conf's ``user = true`` would
    have it (an environment variable outranks the config file). Measured with PIP_USER=1: the Colab
    notebook's test installed the built wheel into the user site, where the graded workers then met it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PIP_USER", "0")
        yield


@pytest.fixture(scope="session", autouse=True)
def native_modules_imported_once():
    """pytester's in-process runs restore sys.modules afterwards, dropping what they imported. MAX's
    MLIR bindings and Triton's nanobind module cannot be imported twice in one process (a second
    import raises "Dialect namespace 'rmo' is already registered", or aborts with "refusing to add
    duplicate key"), so both are imported here, before any in-process run, where they are
    installed; the snapshots then keep them. So are the modules whose classes the suite spies on
    (Triton's launch methods): imported again, a later spy patches a new class that no kernel uses.
    And torch and JAX, which register their ops and flags once a process (the plugin reads them where a
    test loaded them, and imports neither itself)."""
    import importlib.util

    from stackcheck.stacks.fingerprint import FRAMEWORKS

    for framework in FRAMEWORKS:
        if importlib.util.find_spec(framework) is not None:
            importlib.import_module(framework)
    if importlib.util.find_spec("max") is not None:
        import max.engine  # noqa: F401
        import max.graph  # noqa: F401
    if importlib.util.find_spec("triton") is not None:
        import triton  # noqa: F401
        import triton.runtime.interpreter  # noqa: F401
        import triton.runtime.jit  # noqa: F401

        import stackcheck.toolchains.triton_kernels  # noqa: F401


@pytest.fixture(scope="session")
def draw_page():
    """``draw_page(path)``: the HTML page of the recorded report at ``path``, drawn once per process. A
    page's plots take seconds, and the two HTML modules (one xdist group, so one worker) drew the
    three recorded pages again each, on each worker they reached: four times a run, 105 worker-seconds."""
    from stackcheck.claims.results import Report
    from stackcheck.report import html

    return functools.cache(lambda path: html.page(Report.load(path)))


@pytest.fixture
def suite_file():
    """Absolute path of a file of the suite, for pytester runs against the real tests."""
    return lambda relative: str(ROOT / relative)


@pytest.fixture
def judged_on_jax_cpu(pytester, suite_file):
    """``judge(source, test)``: ``test`` of tests_runtime (``FILE::FUNCTION``), on JAX's CPU, run against
    the implementation whose module source is ``source``; pytester's result."""
    pytest.importorskip("jax", reason="the claims' JAX tests (pip install jax)")

    def judge(source: str, test: str) -> pytest.RunResult:
        module = pytester.makepyfile(implementation_under_test=source)
        return pytester.runpytest_inprocess(
            suite_file(f"tests_runtime/{test}[jax-cpu]"), "-p", "no:cacheprovider", "-rs", "--impl", str(module)
        )

    return judge


@pytest.fixture(autouse=True)
def stackcheck_run(request, monkeypatch):
    """The projects these tests make with pytester opt in to stackcheck (the plugin is silent in
    projects that do not: tests_plugin/test_inert.py), and load it by name where stackcheck runs
    from PYTHONPATH without its pytest11 entry point (the H200's image)."""
    monkeypatch.setenv("STACKCHECK", "1")
    if "pytester" in request.fixturenames and not ENTRY_POINT:
        request.getfixturevalue("pytester").plugins.append("stackcheck")


@pytest.fixture
def bubblewrap():
    """Grading's sandbox (stackcheck.grading.sandbox): skipped with the install hint where bwrap
    cannot make its namespaces, a failure under ``--require bubblewrap``."""
    from stackcheck.grading import sandbox
    from stackcheck.stacks.available import Missing

    exe, why = sandbox.bubblewrap()
    if exe is None:
        raise Missing(why, "bubblewrap")


# Collects `pytest -m cuda` in a child and writes each cuda test (claim tests and meta-tests) as JSON:
# its markers, parameters, gates, tiled launches and profiled workloads.
DUMP = """
import dataclasses, json, os

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    rows = [
        {
            "test": item.nodeid,
            "markers": sorted({mark.name for mark in item.iter_markers()}),
            "params": {k: v for k, v in getattr(getattr(item, "callspec", None), "params", {}).items()
                       if isinstance(v, (str, int, float, bool))},
            "needs": [n for mark in item.iter_markers("gpu_needs") for n in mark.args],
            "lines": [mark.kwargs["line"].__name__ for mark in item.iter_markers("gpu_needs") if "line" in mark.kwargs],
            "tiles": [dataclasses.asdict(t) for mark in item.iter_markers("gpu_tiles") for t in mark.args],
            "workloads": [r.workload for mark in item.iter_markers("ncu") for r in mark.args],
            "requests": [
                {"workload": r.workload, "kwargs": dict(r.kwargs), "metrics": list(r.metrics)}
                for mark in item.iter_markers("ncu")
                for r in mark.args
            ],
        }
        for item in items
        if item.get_closest_marker("cuda")
    ]
    with open(os.environ["STACKCHECK_CUDA_DUMP"], "w", encoding="utf-8") as f:
        json.dump(rows, f)
    items[:] = []
"""


@pytest.fixture(scope="session")
def cuda_tests(tmp_path_factory) -> list[dict]:
    """Every test `pytest -m cuda` selects (meta-tests included), with its markers, parameters, gates,
    lines and the tiled launches and workloads it declares, collected once in a child process (no GPU)."""
    folder = tmp_path_factory.mktemp("dump")
    (folder / "stackcheck_cuda_dump.py").write_text(DUMP, encoding="utf-8")
    environ = {k: v for k, v in os.environ.items() if k not in mutation.PRIVATE}
    environ.update(
        PYTHONPATH=os.pathsep.join([str(folder), str(ROOT), environ.get("PYTHONPATH", "")]),
        STACKCHECK_CUDA_DUMP=str(folder / "rows.json"),
        CUDA_VISIBLE_DEVICES="",
    )
    environ.pop(device_profile.ENV, None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *reach.CLAIM_FOLDERS, *reach.SELF_TEST_FOLDERS, "-m", "cuda"]
        + ["-p", "stackcheck_cuda_dump", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=environ,
    )
    assert (folder / "rows.json").exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((folder / "rows.json").read_text(encoding="utf-8"))


@pytest.fixture
def graded_command():
    """``graded_command(homework)``: the start of a graded pytest run of the folder ``homework``, as
    ``stackcheck grade`` starts its judge, with the worker unsandboxed (``worker.json`` written beside
    it: the GPU image has no Bubblewrap). Append the run's own options and tests."""

    def command(homework: Path) -> list[str]:
        (homework / "worker.json").write_text(json.dumps({"unsafe": True}))
        return [
            sys.executable,
            "-m",
            "pytest",
            f"--homework={homework}",
            "--homework-graded",
            f"--homework-worker={homework / 'worker.json'}",
            "-p",
            "no:cacheprovider",
        ]

    return command


SOCKET_ROOM = 60  # of a unix socket path's 107 bytes, what a folder may take: Chromium's singleton socket adds 46


@pytest.fixture(scope="module")
def short_tmp():
    """A new folder (one a module) whose path leaves room for unix sockets in it, removed afterwards. pytest's
    tmp_path sits under TMPDIR, which on a learner's machine may be long (macOS: /var/folders/…/T/,
    49 bytes; .ci/run gives the README's commands one as long): a socket path past 107 bytes cannot be
    bound, and Chromium aborts at start when its TMPDIR leaves less than 46 bytes for its own."""
    import shutil
    import tempfile

    for parent in (tempfile.gettempdir(), "/tmp", "/dev/shm"):
        if len(parent) < SOCKET_ROOM - 12 and os.access(parent, os.W_OK):
            folder = tempfile.mkdtemp(prefix="sc-", dir=parent)
            break
    else:
        pytest.skip(f"no writable temp folder with a path under {SOCKET_ROOM - 12} bytes (TMPDIR, /tmp, /dev/shm)")
    yield Path(folder)
    shutil.rmtree(folder, ignore_errors=True)
