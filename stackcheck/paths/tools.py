"""Where the command-line tools the suite runs are (ncu, mojo): a leaf module, so that both the
availability checks (stackcheck.stacks.available) and the builders (stackcheck.toolchains.mojo_build) can ask."""

from __future__ import annotations

import os
import shutil
import sys


def tool_path(name: str) -> str | None:
    """A command-line tool: on PATH, or installed beside this Python (pip puts `mojo` there)."""
    candidate = os.path.join(os.path.dirname(sys.executable), name)
    return shutil.which(name) or (candidate if os.path.exists(candidate) else None)


def mojo_executable() -> str | None:
    return tool_path("mojo")
