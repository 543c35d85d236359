"""A self-test that starts a fresh Python says why in its docstring (issue 55, item 2).

A fresh interpreter costs seconds of imports, and the forked warm runner (stackcheck.claims.mutation)
serves most runs, so each test that starts one must have a reason that a warm or in-process run
cannot serve: grading's judge and workers (fresh by design), a printed command run as printed, an
environment this process cannot have. The hook below, loaded by the conftests of tests_plugin and
tests_meta, watches each test's call (not its fixtures' set-up): a Python process started from
code in those folders (the test, a helper, a function a fixture handed it) or by pytester's
subprocess runs fails a test whose docstring, or its module's where one reason holds for every
test there, does not name a fresh interpreter, process or Python. What the suite's code starts by
design (grading's judge and workers, MAX's compile child, a printed command run as printed) or a
library's pool (Inductor's compile workers) is not the test's choice, and says why where it is
written. Such a Python handed an environment of its own must keep the variables that say where this
one finds its packages (FINDS_PACKAGES): without them a user install's are not found. And a
virtual environment a self-test makes is derived from this Python (stackcheck.paths.venvs): one made
by ``venv`` or ``virtualenv`` directly sees the base interpreter's packages, not a venv's (issue 79).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv

import pytest

from stackcheck.paths import data, venvs

ROOT = data.ROOT
TESTS = (ROOT / "tests_plugin", ROOT / "tests_meta")  # the self-tests, their conftests and helpers
SAYS_WHY = re.compile(r"\bfresh\s+(?:[\w-]+\s+)?(?:interpreter|process|python)", re.I)  # "a fresh judge process"
PYTHON = re.compile(r"python[\d.]*$")
# Where a Python finds its packages besides its path: a user install's folder (PYTHONUSERBASE, else
# under HOME) and the standard library's. ``python -I`` reads none of them.
FINDS_PACKAGES = ("PYTHONUSERBASE", "PYTHONHOME", "HOME")


def argv(args) -> list[str]:
    """A Popen's ``args`` as a list of strings (one string is split as a shell would, roughly)."""
    if isinstance(args, (str, bytes, os.PathLike)):
        return os.fsdecode(args).split()
    return [os.fsdecode(a) for a in args]


def starts_python(args) -> bool:
    """Whether a Popen's ``args`` run a Python interpreter, directly or through a wrapper
    (bwrap, timeout, ncu, sudo: any argument that is one)."""
    return any(a == sys.executable or PYTHON.search(os.path.basename(a)) for a in argv(args))


def makes_venv(args) -> bool:
    """Whether a Popen's ``args`` make a virtual environment (``-m venv``, ``virtualenv``)."""
    words = argv(args)
    pairs = zip(words, words[1:])
    return any(a == "-m" and b in ("venv", "virtualenv") for a, b in pairs) or any(
        os.path.basename(w) == "virtualenv" for w in words
    )


def lost(args, env) -> list[str]:
    """The variables of FINDS_PACKAGES this process has and a child Python's ``env`` lacks."""
    if env is None or "-I" in argv(args):
        return []
    return [name for name in FINDS_PACKAGES if name in os.environ and name not in env]


def started_by_the_test(frame) -> bool:
    """Whether the first caller outside ``subprocess`` is a self-test's code or pytester's."""
    while frame is not None and frame.f_code.co_filename == subprocess.__file__:
        frame = frame.f_back
    if frame is None:
        return False
    file = os.path.realpath(frame.f_code.co_filename)
    if file.endswith(os.path.join("_pytest", "pytester.py")):
        return True
    library = file.startswith(os.path.realpath(sys.prefix) + os.sep)  # a venv inside the clone
    return any(file.startswith(str(folder) + os.sep) for folder in TESTS) and not library


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    started: list = []
    stripped: set[str] = set()
    made: list[str] = []
    original, create = subprocess.Popen.__init__, venv.EnvBuilder.create

    def watched(self, args, *more, **options):
        if started_by_the_test(sys._getframe(1)):
            if makes_venv(args):
                made.append(" ".join(argv(args))[:200])
            if starts_python(args):
                started.append(args)
                stripped.update(lost(args, options.get("env")))
        original(self, args, *more, **options)

    def builds(self, env_dir, *more, **options):
        caller = sys._getframe(1)
        while caller is not None and caller.f_code.co_filename == venv.__file__:  # venv.create's own frame
            caller = caller.f_back
        if caller is not None and caller.f_code.co_filename != venvs.__file__ and started_by_the_test(caller):
            made.append(f"venv.create({os.fsdecode(env_dir)!r})")
        return create(self, env_dir, *more, **options)

    subprocess.Popen.__init__, venv.EnvBuilder.create = watched, builds
    try:
        result = yield
    finally:
        subprocess.Popen.__init__, venv.EnvBuilder.create = original, create
    if made:
        raise AssertionError(
            f"{item.nodeid} made a virtual environment by itself ({made[0]}): one made so sees the base "
            "interpreter's packages, not this Python's where it is a venv (a newcomer's, CI's). Make it with "
            "stackcheck.paths.venvs.derived(where)"
        )
    doc = f"{getattr(getattr(item, 'function', None), '__doc__', None)} {getattr(item.module, '__doc__', None)}"
    if started and not SAYS_WHY.search(doc):
        first = started[0] if isinstance(started[0], str) else " ".join(map(os.fsdecode, started[0]))
        raise AssertionError(
            f"{item.nodeid} started {len(started)} fresh Python process(es) (the first: {first[:200]}), "
            "and neither its docstring nor its module's says why: name the fresh interpreter and the reason "
            "a warm or in-process run cannot serve (stackcheck/claims/fresh_interpreters.py)"
        )
    if stripped:
        raise AssertionError(
            f"{item.nodeid} started a fresh Python with an environment without {', '.join(sorted(stripped))}, "
            "which this one has: it may not find the packages this Python found (a user install's). Build "
            "its environment from os.environ (stackcheck/claims/fresh_interpreters.py)"
        )
    return result
