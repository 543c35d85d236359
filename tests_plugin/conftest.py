import functools
from importlib.metadata import entry_points
from pathlib import Path

import pytest

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
def native_modules_imported_once():
    """pytester's in-process runs restore sys.modules afterwards, dropping what they imported. MAX's
    MLIR bindings and Triton's nanobind module cannot be imported twice in one process (a second
    import raises "Dialect namespace 'rmo' is already registered", or aborts with "refusing to add
    duplicate key"), so both are imported here, before any in-process run, where they are
    installed; the snapshots then keep them."""
    import importlib.util

    if importlib.util.find_spec("max") is not None:
        import max.engine  # noqa: F401
        import max.graph  # noqa: F401
    if importlib.util.find_spec("triton") is not None:
        import triton  # noqa: F401


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
    """Grading's sandbox (stackcheck.homework.sandbox): skipped with the install hint where bwrap
    cannot make its namespaces, a failure under ``--require bubblewrap``."""
    from stackcheck.homework import sandbox
    from stackcheck.stacks.available import Missing

    exe, why = sandbox.bubblewrap()
    if exe is None:
        raise Missing(why, "bubblewrap")
