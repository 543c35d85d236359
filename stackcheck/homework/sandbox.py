"""Running one submission's grading the way a course can trust (``stackcheck grade``), on a copy of
the submission, with a clean environment (an allow-list: no grader secrets), memory, CPU-time and
process limits and a wall-time limit, inside Bubblewrap's namespaces (``bwrap``, Debian's
``bubblewrap``; chosen because it needs no daemon and no image, only the kernel's namespaces, and
Flatpak maintains it):

- its own PID namespace: at the wall limit every process the submission started dies with it,
  ``setsid()`` or not, and nothing holds the grader's wait;
- the system read-only: it writes only its working copy, its output folder and a private /tmp;
- hidden (``Jail.hidden``): the handed-in folders, the other submissions' copies, the feedback, the
  grader's credentials (``SECRETS`` under its home);
- no network (its own network namespace), its own IPC and UTS namespaces.

Where ``bwrap`` cannot make namespaces, ``run`` refuses (``NoSandbox``) unless the grader asked for
``unsafe=True`` (``stackcheck grade --unsafe-no-sandbox``): then only the limits, and a network
namespace through ``unshare -rn`` where that works.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

ENV_ALLOWED = (  # what a submission's process inherits from the grader's environment
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "PYTHONPATH",
    "CUDA_VISIBLE_DEVICES",
    "MODULAR_HOME",
)
MEMORY_BYTES = 16 * 1024**3  # address space; torch, JAX and MAX reserve several GiB of it at import
CPU_SECONDS_PER_WALL_SECOND = 2.0  # CPU-time limit: this many seconds per second of the wall limit
PROCESSES = 4096  # processes and threads (torch, JAX and XLA start pools of dozens in each process)
# under the grader's home: what a submission must not read even where the system is readable
SECRETS = (".ssh", ".gnupg", ".netrc", ".aws", ".docker", ".kube", ".pypirc", ".git-credentials", ".config/gcloud")
# Fixed places a sandboxed run sees (``Jail.mounted``; where each is found: ``seen_at``). Its compile
# caches (``workdir/.cache``, warm: stackcheck grade's warm_caches): Inductor keys its C++ kernels by
# their compile command, which names the folder. Its copy of the instructor's tests (stackcheck grade
# --tests): one path in every run, so their node ids do not name the grader's scratch folders.
TMP = Path("/tmp")  # private in each run
CACHE = TMP / "stackcheck-cache"
INSTRUCTOR_TESTS = TMP / "stackcheck-instructor-tests"
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), or pass --unsafe-no-sandbox"


@dataclass(frozen=True)
class Limits:
    wall_s: float
    memory_bytes: int = MEMORY_BYTES
    cpu_s: float | None = None  # default: CPU_SECONDS_PER_WALL_SECOND x wall_s
    processes: int = PROCESSES

    @property
    def cpu(self) -> int:
        return int(self.cpu_s if self.cpu_s is not None else CPU_SECONDS_PER_WALL_SECOND * self.wall_s)


@dataclass(frozen=True)
class Jail:
    """What a sandboxed run may write (besides its working copy and a private /tmp), what it may read
    where /tmp or a hidden folder would cover it (the suite, the instructor's tests), and what it may
    not see at all."""

    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    mounted: tuple[tuple[Path, Path], ...] = ()  # (a folder here, where the run sees it, writable: under /tmp)


def seen_at(source: Path, fixed: Path) -> Path:
    """Where a run finds ``source`` that its jail mounts at ``fixed`` (``Jail.mounted``): ``fixed``
    in Bubblewrap's namespaces, ``source`` itself in an unsafe run, which sees the machine as it is."""
    return fixed if bubblewrap()[0] else source


@dataclass(frozen=True)
class Outcome:
    returncode: int | None  # None: stopped at the wall limit
    stdout: str
    stderr: str
    network: str  # "isolated" or why not
    sandbox: str = "bubblewrap"  # or "none (unsafe)"


class NoSandbox(OSError):
    """Grading asked for a sandbox this machine cannot make."""


def environment(workdir: Path, cache: Path, environ=os.environ) -> dict[str, str]:
    """The allow-listed variables, with TMPDIR in the working copy, compile caches of its own in
    ``cache`` (where the run sees its ``workdir/.cache``; a cache shared between submissions would let
    one leave compiled code for the next) and reproducible hashing."""
    env = {k: environ[k] for k in ENV_ALLOWED if k in environ}
    cache = str(cache)
    env.update(TMPDIR=str(workdir), PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    env.update(XDG_CACHE_HOME=cache, STACKCHECK_CACHE=cache, TRITON_CACHE_DIR=cache + "/triton")
    env.update(TORCHINDUCTOR_CACHE_DIR=cache + "/inductor", JAX_COMPILATION_CACHE_DIR=cache + "/jax")
    # every program JAX compiles, however small: a part's tests compile hundreds of 0.1 s programs
    env.update(JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0", JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0")
    return env


@functools.cache
def bubblewrap() -> tuple[str | None, str]:
    """(the bwrap command, "") where Bubblewrap makes its namespaces here, else (None, why not)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return None, f"no bwrap command: {INSTALL_HINT}"
    try:
        probe = subprocess.run(
            [exe, *_NAMESPACES, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"bwrap failed ({error}): {INSTALL_HINT}"
    if probe.returncode:
        return None, f"bwrap cannot make namespaces here ({probe.stderr.strip()[:200]}): {INSTALL_HINT}"
    return exe, ""


_NAMESPACES = ("--unshare-all", "--die-with-parent", "--new-session")


def _jailed(exe: str, workdir: Path, jail: Jail) -> list[str]:
    """bwrap's arguments, each mount over the ones before: the system read-only and a private /tmp;
    this Python and its import path and ``jail.readable`` read-only again (a clone or a venv under
    /tmp); ``jail.hidden`` and the grader's secrets covered (an empty folder, or /dev/null for a
    file); the working copy and ``jail.writable`` writable, and each of ``jail.mounted`` where it says."""
    args = [exe, *_NAMESPACES, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", str(TMP)]
    python = {sys.prefix, sys.base_prefix, sys.exec_prefix, *filter(None, sys.path)}
    for path in sorted({*map(Path, python), *jail.readable}):
        # never a folder that holds /tmp (a grader started from / or /tmp puts it on sys.path): it
        # would show the real /tmp, every submission's working copy in it, and make /tmp read-only
        if path.exists() and not TMP.is_relative_to(path.resolve()):
            args += ["--ro-bind", str(path), str(path)]
    for path in (*jail.hidden, *(Path.home() / s for s in SECRETS)):
        if path.is_dir():
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    for path in (workdir, *jail.writable):
        args += ["--bind", str(path), str(path)]
    for source, target in jail.mounted:
        args += ["--bind", str(source), str(target)]
    return [*args, "--chdir", str(workdir)]


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


# Sets the limits (and joins the process cap's cgroup, when there is one), then becomes the command:
# no preexec_fn, which forks a possibly threaded parent.
LAUNCH = (
    "import os, resource, sys; m, c, p, g = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]; "
    "resource.setrlimit(resource.RLIMIT_AS, (m, m)); resource.setrlimit(resource.RLIMIT_CPU, (c, c + 5)); "
    "resource.setrlimit(resource.RLIMIT_NPROC, (p, p)); "
    "g and open(g, 'w').write(str(os.getpid())); "
    "os.execvp(sys.argv[5], sys.argv[5:])"
)
PIDS_CGROUPS = Path("/sys/fs/cgroup/pids")  # cgroup v1's pids controller, where the grader may write it


def _process_cap(limit: int) -> Path | None:
    """A pids cgroup of its own holding at most ``limit`` processes: the cap that holds for a grader
    running as root too, whom RLIMIT_NPROC does not bind. None where this machine gives none."""
    try:
        group = PIDS_CGROUPS / f"stackcheck-{uuid.uuid4().hex[:12]}"
        group.mkdir()
        (group / "pids.max").write_text(str(limit))
        return group
    except OSError:
        return None


def run(command: list[str], workdir: Path, limits: Limits, jail: Jail | None = None, unsafe: bool = False) -> Outcome:
    """``command`` in ``workdir``, limited and jailed (the module's docstring); at the wall limit its
    whole PID namespace dies. Output goes to files, never pipes: a process that outlives the run
    cannot hold the grader's wait. Without Bubblewrap: ``NoSandbox``, unless ``unsafe``."""
    exe, why = bubblewrap()
    if exe is None and not unsafe:
        raise NoSandbox(f"no sandbox available: {why}")
    # the copy's caches seen at one path in every run: compile caches keyed by their path carry over
    (workdir / ".cache").mkdir(exist_ok=True)
    jail = jail or Jail()
    jail = dataclasses.replace(jail, mounted=(*jail.mounted, (workdir / ".cache", CACHE)))
    if exe is None:
        (prefix, network), how = network_isolation(), "none (unsafe)"
    else:
        prefix, network, how = _jailed(exe, workdir, jail), "isolated", "bubblewrap"
    group = _process_cap(limits.processes)
    joins = str(group / "cgroup.procs") if group else ""
    launch = [str(limits.memory_bytes), str(limits.cpu), str(limits.processes), joins]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(
            [sys.executable, "-c", LAUNCH, *launch, *prefix, *command],
            cwd=workdir,
            env=environment(workdir, seen_at(workdir / ".cache", CACHE)),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            text=True,
            start_new_session=True,  # its own process group, killed whole at the wall limit
        )
        try:
            returncode = process.wait(timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # bwrap dies, and its namespace's processes with it
            process.wait(timeout=60)
            returncode = None
        finally:
            if group is not None:
                _remove(group)
        if exe is not None and returncode is not None and returncode - 128 in signal.valid_signals():
            returncode = 128 - returncode  # bwrap's 128 + N for a command killed by signal N, as Popen says it
        out.seek(0)
        err.seek(0)
        return Outcome(returncode, out.read(), err.read(), network, how)


def _remove(group: Path) -> None:
    """Kill what is left in the cgroup (an unsafe run's strays) and remove it."""
    try:
        for pid in (group / "cgroup.procs").read_text().split():
            os.kill(int(pid), signal.SIGKILL)
    except (OSError, ValueError):
        pass
    for _ in range(50):
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.1)
