"""Installing stackcheck changes nothing for a project that does not use it: no environment
variable set, no framework imported, no header, no claim table, no list of foreign tests; and
``-p no:stackcheck`` switches it off, ``-p stackcheck`` (or the ini key, STACKCHECK=1, one of its
options, or the suite's own test paths) switches it on."""

import sys

import pytest

pytestmark = pytest.mark.meta

FOREIGN = """
import os, sys

def test_x():
    changed = [name for name in {variables!r} if name in os.environ]
    assert changed == [], changed
    imported = [name for name in ("torch", "jax", "max", "stackcheck.plugin.hooks") if name in sys.modules]
    assert imported == [], imported
    loaded = sorted(name for name in sys.modules if name.startswith("stackcheck"))
    assert loaded == ["stackcheck", "stackcheck.plugin", "stackcheck.plugin.options"], loaded  # all it costs
"""
VARIABLES = ("XLA_FLAGS", "XLA_PYTHON_CLIENT_PREALLOCATE", "CUDA_VISIBLE_DEVICES")  # what a stackcheck run sets


@pytest.fixture
def foreign(pytester, monkeypatch):
    """A project of one test that knows nothing of stackcheck, run in a fresh interpreter."""
    for name in ("STACKCHECK", *VARIABLES):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_foreign=FOREIGN.format(variables=VARIABLES))
    return pytester


def test_a_project_that_does_not_use_it_sees_nothing(foreign):
    result = foreign.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    printed = "\n".join(result.outlines + result.errlines)
    assert "stackcheck" not in printed and "claims" not in printed, printed


def test_minus_p_no_stackcheck_switches_it_off(foreign):
    result = foreign.runpytest_subprocess("-p", "no:stackcheck", "-p", "no:cacheprovider", "--help")
    assert result.ret == 0 and "--curriculum-report" not in result.stdout.str()


@pytest.mark.parametrize("opt_in", [["-p", "stackcheck"], ["-o", "stackcheck=true"]], ids=["-p", "ini"])
def test_opting_in_makes_a_stackcheck_run(foreign, opt_in):
    """Opted in, the header appears (and the plugin does what it does everywhere: the foreign test,
    which asserts nothing was set up, fails)."""
    result = foreign.runpytest_subprocess(*opt_in, "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["stackcheck environment (course §14.4): *"])


def test_the_entry_point_is_the_package(foreign):
    """The pytest11 entry point is named as the package is imported, so `-p no:stackcheck` finds it."""
    from importlib.metadata import entry_points

    found = [ep for ep in entry_points(group="pytest11") if ep.value == "stackcheck"]
    assert [ep.name for ep in found] == ["stackcheck"], [(ep.name, ep.value) for ep in entry_points(group="pytest11")]
    assert sys.modules["stackcheck"].pytest_configure  # the hooks live in the package
