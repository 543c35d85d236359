"""stackcheck.claims.fresh_interpreters: a self-test that starts a fresh Python says why (issue 55, item 2)."""

import sys

import pytest

from stackcheck.claims import fresh_interpreters

pytestmark = pytest.mark.meta

SPAWNS = '''
import subprocess, sys


def test_silent():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_says_why():
    """A docstring that says why in a fresh
    judge process: the reason this one has, across a line."""
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_wrapped():
    subprocess.run(["env", "A=1", sys.executable, "-c", "pass"], check=True)


def test_another_tool():
    subprocess.run(["true"], check=True)
'''


def test_a_test_that_starts_python_without_saying_why_fails(pytester, monkeypatch):
    """The inner tests start fresh interpreters (that is what the guard watches); the project's
    folder stands for the suite's."""
    monkeypatch.setattr(fresh_interpreters, "TESTS", (pytester.path,))
    pytester.makepyfile(test_spawns=SPAWNS)
    result = pytester.runpytest("-p", "stackcheck.claims.fresh_interpreters", "-q")
    result.assert_outcomes(passed=2, failed=2)
    failed = "\n".join(result.outlines)
    assert "test_silent started 1 fresh Python process(es)" in failed
    assert "test_wrapped started 1 fresh Python process(es) (the first: env A=1 " in failed


STRIPS = '''
"""Each test starts a fresh Python: what the guard watches."""
import os, subprocess, sys


def test_an_environment_of_its_own():
    subprocess.run([sys.executable, "-c", "pass"], env={"PATH": os.environ["PATH"]}, check=True)


def test_this_environment_changed():
    subprocess.run([sys.executable, "-c", "pass"], env={**os.environ, "A": "1"}, check=True)


def test_isolated():
    subprocess.run([sys.executable, "-I", "-c", "pass"], env={}, check=True)
'''


def test_a_python_handed_an_environment_without_where_packages_are_fails(pytester, monkeypatch):
    """A child Python that loses HOME or PYTHONUSERBASE does not find a user install's packages; one
    run with -I reads neither."""
    monkeypatch.setattr(fresh_interpreters, "TESTS", (pytester.path,))
    monkeypatch.setenv("HOME", str(pytester.path))
    monkeypatch.setenv("PYTHONUSERBASE", str(pytester.path / "user"))
    pytester.makepyfile(test_strips=STRIPS)
    result = pytester.runpytest("-p", "stackcheck.claims.fresh_interpreters", "-q")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["*test_an_environment_of_its_own started a fresh Python with an environment without HOME, PYTHONUSERBASE*"]
    )


@pytest.mark.parametrize(
    "args, python",
    [
        ([sys.executable, "-m", "pytest"], True),
        (["/usr/bin/python3.11", "-c", "pass"], True),
        (["bwrap", "--ro-bind", "/", "/", "--", "/opt/venv/bin/python", "-m", "x"], True),
        ("python3 -c pass", True),
        (["ncu", "--csv", sys.executable, "-m", "stackcheck.toolchains.workloads", '{"a": "/usr/bin/python3"}'], True),
        (["mojo", "build", "x.mojo"], False),
        (["nvidia-smi", "--query-gpu=name"], False),
        (["git", "log", "--", "pythonic.py"], False),
    ],
)
def test_a_python_is_recognized_through_its_wrappers(args, python):
    assert fresh_interpreters.starts_python(args) is python
