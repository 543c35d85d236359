"""Installing stackcheck changes nothing for a project that does not use it: no environment
variable set, no framework imported, no header, no claim table, no list of foreign tests; and
``-p no:stackcheck`` switches it off, ``-p stackcheck`` (or the ini key, STACKCHECK=1, one of its
options, or the suite's own test paths) switches it on. Each project runs in a fresh interpreter: the
plugin's silence is judged where stackcheck was never imported, which this process cannot be."""

import re
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


def printed(result) -> list[str]:
    """A run's output without its timing ("1 passed in 0.12s")."""
    return [re.sub(r" in [0-9.]+s\b.*", "", line) for line in result.outlines + result.errlines]


def test_a_project_that_does_not_use_it_sees_nothing(foreign):
    """Its output is what it is with stackcheck switched off, line for line: the words of a path
    (a clone in a folder named stackcheck, a venv inside it) are not what is compared."""
    foreign.runpytest_subprocess("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    foreign.makepyfile(test_plain="def test_y():\n    assert True\n")
    with_it, without = (
        foreign.runpytest_subprocess("-q", "-p", "no:cacheprovider", *switch, "test_plain.py")
        for switch in ((), ("-p", "no:stackcheck"))
    )
    assert printed(with_it) == printed(without)


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
