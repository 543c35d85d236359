"""An xdist worker of a stackcheck run ends as soon as its session has. Its results went to the
controller when its session finished, and the controller's session waits for every worker process
to be gone before it writes the report (xdist's ``teardown_nodes``). What a worker that holds torch,
JAX and MAX did after that served nobody: pytest's five full garbage collections looking for
exceptions raised in finalizers (a warning then reaches no report), and the interpreter's teardown of
every module. On the 2-core machine they took 3.6 s and 4.5 s of a worker's end; on one H100, 11-15
s passed between a warm ``.ci/gpu``'s last test and its report. So a cleanup the worker adds when its
session starts, run after the session's own and before pytest's (last in, first out), runs the exit
handlers (``atexit``: temporary folders removed, compile pools shut) and ends the process."""

from __future__ import annotations

import atexit
import os
import sys

import pytest


def pytest_sessionstart(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        # cleanups run last in, first out: added here, after every plugin's configure added its
        # own (pytest's garbage collections among them), this one runs before those
        session.config.add_cleanup(leave)


def leave() -> None:
    """Run the exit handlers, flush, and end the process (status 0: xdist has read its outcome)."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):  # a closed or replaced stream
            pass
    os._exit(0)
