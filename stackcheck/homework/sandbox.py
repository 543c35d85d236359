"""Running one submission's grading the way a course can trust (``stackcheck grade``): in a process
of its own, on a copy of the submission, with a clean environment (an allow-list: no grader
secrets), memory and CPU-time limits, a wall-time limit, and no network where the OS allows it
(a new network namespace through ``unshare -rn``; where that is refused, the run says so).

What it does not do without a container: keep a submission from writing to absolute paths the
grader's user may write. Grade inside a container (or as a user who owns nothing else) for that.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ENV_ALLOWED = (  # what a submission's process inherits from the grader's environment
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "PYTHONPATH",
    "STACKCHECK_CACHE",
    "XDG_CACHE_HOME",
    "CUDA_VISIBLE_DEVICES",
    "MODULAR_HOME",
)
MEMORY_BYTES = 16 * 1024**3  # address space; torch, JAX and MAX reserve several GiB of it at import
CPU_SECONDS_PER_WALL_SECOND = 2.0  # CPU-time limit: this many seconds per second of the wall limit


@dataclass(frozen=True)
class Limits:
    wall_s: float
    memory_bytes: int = MEMORY_BYTES
    cpu_s: float | None = None  # default: CPU_SECONDS_PER_WALL_SECOND x wall_s

    @property
    def cpu(self) -> int:
        return int(self.cpu_s if self.cpu_s is not None else CPU_SECONDS_PER_WALL_SECOND * self.wall_s)


@dataclass(frozen=True)
class Outcome:
    returncode: int | None  # None: stopped at the wall limit
    stdout: str
    stderr: str
    network: str  # "isolated" or why not


def environment(workdir: Path, environ=os.environ) -> dict[str, str]:
    """The allow-listed variables, with TMPDIR in the working copy and reproducible hashing."""
    env = {k: environ[k] for k in ENV_ALLOWED if k in environ}
    env.update(TMPDIR=str(workdir), PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    return env


@functools.cache
def network_isolation() -> tuple[list[str], str]:
    """(command prefix, "isolated") where ``unshare -rn`` works here, else ([], why not)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return [], "not isolated: no unshare command"
    try:
        done = subprocess.run([unshare, "-rn", "true"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as error:
        return [], f"not isolated: unshare -rn failed ({error})"
    if done.returncode != 0:
        return [], f"not isolated: unshare -rn refused ({done.stderr.strip() or done.returncode})"
    return [unshare, "-rn"], "isolated"


def working_copy(folder: Path, under: Path) -> Path:
    """A copy of the submission folder to grade, so grading never writes into what was handed in."""
    target = under / folder.name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(folder, target, symlinks=False, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return target


# Sets the limits, then becomes the command: no preexec_fn, which forks a possibly threaded parent.
LAUNCH = (
    "import os, resource, sys; m, c = int(sys.argv[1]), int(sys.argv[2]); "
    "resource.setrlimit(resource.RLIMIT_AS, (m, m)); resource.setrlimit(resource.RLIMIT_CPU, (c, c + 5)); "
    "os.execvp(sys.argv[3], sys.argv[3:])"
)


def run(command: list[str], workdir: Path, limits: Limits) -> Outcome:
    """``command`` in ``workdir``, limited; the wall limit kills its whole process group."""
    prefix, network = network_isolation()
    process = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, str(limits.memory_bytes), str(limits.cpu), *prefix, *command],
        cwd=workdir,
        env=environment(workdir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, killed whole at the wall limit
    )
    try:
        stdout, stderr = process.communicate(timeout=limits.wall_s)
        return Outcome(process.returncode, stdout, stderr, network)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        return Outcome(None, stdout, stderr, network)
