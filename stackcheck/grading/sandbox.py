"""Where a graded submission's code runs (``stackcheck grade``): its worker process
(stackcheck.grading.worker), with no privileges, inside Bubblewrap's namespaces (``bwrap``, Debian's
``bubblewrap``; chosen because it needs no daemon and no image, only the kernel's namespaces, and
Flatpak maintains it). The judge that grades it runs outside and never imports it.

- **No privileges**: where the grader is root, the host's uid 65534 itself (Bubblewrap makes the
  namespaces with root's rights and no user namespace; the worker then gives up root, keeping no
  capability, with ``no_new_privs``): a file only root may read is closed to it, and what it writes
  (its copy, its caches, handed to that uid first) is not root's. Where the grader is an ordinary
  user, a user namespace in which it is uid 65534 (that user's on the host) with every capability
  dropped, ``no_new_privs`` and no further user namespace. Either way it can make no user namespace
  (a seccomp filter refuses it: ``worker_filter``) and no mount or umount
  can succeed, so the folders covering what it must not read stay covered.
- **Its own PID, network, IPC and UTS namespaces**: no network and no host socket (abstract sockets
  belong to the network namespace); every process it starts dies with it, ``setsid()`` or not.
- **A view built up from nothing**: on an empty root, read-only, only the system's programs and
  libraries (``SYSTEM_READ``), the few files of ``/etc`` the loader and compilers read (``ETC_READ``;
  ``/etc/passwd`` and ``/etc/group`` its own, root and nobody), the Python it runs with its import
  path (the suite among it, ``Jail.readable``), a minimal ``/dev`` and its ``/proc``. Nothing else of
  the host exists there: no home, no ``/run``, no other checkout, no previous grading's files.
- **It writes** only its working copy (seen at ``INSIDE``), its compile caches and a private ``/tmp``
  and ``/dev/shm`` of ``TMP_BYTES`` each; files of at most ``FILE_BYTES``; address space, CPU time
  and processes limited.
- **Covered inside what it sees** (``Jail.hidden`` and ``covered``): the checkout's ``.git``, its
  ``tests_meta`` (the correct variants), every ``__pycache__``, the checkpoint key, the suite's
  Mojo folder, and whatever of the grader's places lies within a folder it is shown (the scratch
  root, the handed-in folders, the feedback, the instructor's tests); the suite's ``reference.py``
  is replaced by a copy without the solutions (``Jail.replaced``).
- **Python isolated** (``python -I``): the copy's folder is never on its import path, so a
  ``pytest/`` or ``numpy/`` folder in a submission shadows nothing.

Where ``bwrap`` cannot make namespaces, grading refuses (``NoSandbox``) unless the grader asked for
``unsafe=True`` (``stackcheck grade --unsafe-no-sandbox``): then only the limits, and a network
namespace through ``unshare -rn`` where that works.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

ENV_ALLOWED = (  # what a submission's process inherits from the grader's environment
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "CUDA_VISIBLE_DEVICES",
    "MODULAR_HOME",
)
MEMORY_BYTES = 16 * 1024**3  # address space; torch, JAX and MAX reserve several GiB of it at import
CPU_SECONDS_PER_WALL_SECOND = 2.0  # CPU-time limit: this many seconds per second of the wall limit
PROCESSES = 4096  # processes and threads (torch, JAX and XLA start pools of dozens in each process)
TMP_BYTES = 512 * 1024**2  # its /tmp, in memory the address-space limit does not count
FILE_BYTES = 256 * 1024**2  # any one file it writes (its copy, its log)
UID = 65534  # who it is inside: nobody
# Where the grader is root, the worker is a host uid: UID for the first grading slot, SLOT_UIDS + k
# for slot k (a uid no account holds). The kernel counts a uid's processes (RLIMIT_NPROC) and keeps
# its keyrings host-wide: two submissions graded at once as one uid shared both (one's 4092 threads
# left the other's worker none, and an honest grade fell to 68 %).
SLOT_UIDS = 2_000_000_000
# What a worker sees of the host, besides the Python it runs and the suite: programs and libraries
# (a C++ compiler for Inductor among them), and of /etc what the loader and the compilers read.
SYSTEM_READ = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_READ = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "nsswitch.conf")
TMP = Path("/tmp")  # private in each run
INSIDE = TMP / "submission"  # where a worker sees its working copy
CACHE = TMP / "stackcheck-cache"  # where a worker sees its compile caches
INSTRUCTOR_TESTS = "stackcheck-instructor-tests"  # the folder the judge collects the instructor's tests from
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), or pass --unsafe-no-sandbox"


@dataclass(frozen=True)
class Limits:
    wall_s: float
    memory_bytes: int = MEMORY_BYTES
    cpu_s: float | None = None  # default: CPU_SECONDS_PER_WALL_SECOND x wall_s
    processes: int = PROCESSES
    file_bytes: int = FILE_BYTES
    resident_bytes: int | None = None  # its processes' memory together (a cgroup's), default resident_share(1)

    @property
    def cpu(self) -> int:
        return int(self.cpu_s if self.cpu_s is not None else CPU_SECONDS_PER_WALL_SECOND * self.wall_s)


@dataclass(frozen=True)
class Jail:
    """What a sandboxed process may read where a covered folder would hide it (the suite), what it may
    not see at all, which files it sees replaced, and where its working copy and caches appear."""

    readable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    replaced: tuple[tuple[Path, Path], ...] = ()  # (a file here, the file it stands for), read-only
    inside: Path | None = None  # where it sees its working copy (None: at its own path)
    cache: Path | None = None  # a folder here it sees, writable, at CACHE
    uid: int = UID  # the host uid it runs as where the grader is root (``worker_uid``)

    def to_json(self) -> dict:
        return {
            "readable": [str(p) for p in self.readable],
            "hidden": [str(p) for p in self.hidden],
            "replaced": [[str(a), str(b)] for a, b in self.replaced],
            "inside": str(self.inside) if self.inside else None,
            "cache": str(self.cache) if self.cache else None,
            "uid": self.uid,
        }

    @classmethod
    def from_json(cls, data: dict) -> Jail:
        return cls(
            readable=tuple(Path(p) for p in data.get("readable", ())),
            hidden=tuple(Path(p) for p in data.get("hidden", ())),
            replaced=tuple((Path(a), Path(b)) for a, b in data.get("replaced", ())),
            inside=Path(data["inside"]) if data.get("inside") else None,
            cache=Path(data["cache"]) if data.get("cache") else None,
            uid=int(data.get("uid", UID)),
        )


def worker_uid(slot: int) -> int:
    """The host uid of the worker of grading slot ``slot`` (one per --jobs) where the grader is root."""
    return UID if slot == 0 else SLOT_UIDS + slot


@dataclass(frozen=True)
class Outcome:
    returncode: int | None  # None: stopped at the wall limit
    stdout: str
    stderr: str
    network: str  # "isolated" or why not
    sandbox: str = "bubblewrap"  # or "none (unsafe)"


class NoSandbox(OSError):
    """Grading asked for a sandbox this machine cannot make."""


def environment(home: Path, cache: Path, environ=os.environ) -> dict[str, str]:
    """The allow-listed variables, HOME and TMPDIR in its private places, compile caches in ``cache``
    (a cache shared between submissions would let one leave compiled code for the next) and
    reproducible hashing."""
    env = {k: environ[k] for k in ENV_ALLOWED if k in environ}
    cache = str(cache)
    env.update(HOME=str(home), TMPDIR=str(home), PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    env.update(XDG_CACHE_HOME=cache, STACKCHECK_CACHE=cache, TRITON_CACHE_DIR=cache + "/triton")
    env.update(TORCHINDUCTOR_CACHE_DIR=cache + "/inductor", JAX_COMPILATION_CACHE_DIR=cache + "/jax")
    # every program JAX compiles, however small: a part's tests compile hundreds of 0.1 s programs
    env.update(JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0", JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0")
    # Inductor precompiles its C++ headers into the temporary folder, which is new for every worker: 15 s
    # of g++ before even a cached kernel loads. Off for the warm-up too: the setting is part of the key
    # of Inductor's cache (a warm-up with it on leaves kernels no submission's worker finds).
    env.update(TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS="0")
    return env


@functools.cache
def bubblewrap() -> tuple[str | None, str]:
    """(the bwrap command, "") where Bubblewrap makes its namespaces here and, where the grader is root,
    the worker's uid can run this Python in them; else (None, why not)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return None, f"no bwrap command: {INSTALL_HINT}"
    try:
        probe = subprocess.run(
            [exe, *_namespaces(), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"bwrap failed ({error}): {INSTALL_HINT}"
    if probe.returncode:
        return None, f"bwrap cannot make namespaces here ({probe.stderr.strip()[:200]}): {INSTALL_HINT}"
    if os.geteuid() == 0:
        program = worker_filter()
        if program is None:
            return None, f"no seccomp filter for {os.uname().machine} here: grade as an ordinary user"
        with tempfile.TemporaryDirectory() as work, _holding(program) as seccomp, _Passed() as passed:
            jailed = _jailed(exe, Path(work), Jail(), Limits(30), seccomp, passed)
            worker = _as_worker([sys.executable, "-I", "-c", "import encodings"])
            runs = subprocess.run([*jailed, *worker], capture_output=True, text=True, pass_fds=(seccomp, *passed.fds))
        if runs.returncode:
            said = (runs.stderr.strip().splitlines() or [f"exit code {runs.returncode}"])[-1][:200]
            return None, (
                f"the worker, uid {UID}, cannot run {sys.executable} ({said}): install Python where all may read "
                "it, or grade as an ordinary user"
            )
    return exe, ""


def _namespaces() -> list[str]:
    """Bubblewrap's namespaces. Started as root, it makes them with root's own rights and no user
    namespace: the worker then becomes the host's uid UID itself (``_as_worker``), so a file only root
    may read is closed to it and a file it makes is not root's. Started by an ordinary user, a user
    namespace in which it is UID (the host's uid is that user's)."""
    if os.geteuid() == 0:
        return ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"] + [
            "--die-with-parent",
            "--new-session",
        ]
    return _unprivileged()


# Run inside the sandbox where bwrap is root's: empty the capability bounding set (PR_CAPBSET_DROP),
# become UID (no groups), set no_new_privs (38), then the command. A process that gives up root so
# keeps no capability, and no setuid program gives one back.
AS_WORKER = (
    "import ctypes, os, sys; u = int(sys.argv[1]); c = ctypes.CDLL(None); "
    "[c.prctl(24, n, 0, 0, 0) for n in range(64)]; os.setgroups([]); os.setgid(u); os.setuid(u); "
    "c.prctl(38, 1, 0, 0, 0); os.execvp(sys.argv[2], sys.argv[2:])"
)


# The worker's seccomp filter (classic BPF, as bwrap's --seccomp reads it). A user namespace of its own
# would be a way back to mounts and capabilities where bwrap made none to lock (a root grader's worker):
# unshare and clone with CLONE_NEWUSER fail with EPERM, clone3 with ENOSYS (the C library then uses
# clone). The kernel's keyrings belong to a uid, not to a sandbox: a key one worker adds, another of
# the same uid reads, in this grading or the next (a channel between students, a hidden test's inputs
# carried out): add_key, request_key and keyctl fail with EPERM, as Docker's default profile has them.
# x32 calls fail with EPERM; every other call is allowed.
CLONE_NEWUSER = 0x10000000
SYSCALLS = {  # AUDIT_ARCH_*: (unshare, clone, clone3), (add_key, request_key, keyctl)
    0xC000003E: ((272, 56, 435), (248, 249, 250)),  # x86-64
    0xC00000B7: ((97, 220, 435), (217, 218, 219)),  # arm64
}


def worker_filter() -> bytes | None:
    """The filter's program for this machine's architecture, or None where it has none here."""
    machine = {"x86_64": 0xC000003E, "amd64": 0xC000003E, "aarch64": 0xC00000B7, "arm64": 0xC00000B7}
    arch = machine.get(os.uname().machine.lower())
    if arch is None:
        return None
    (unshare, clone, clone3), keys = SYSCALLS[arch]
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, JMP|JSET|K, RET|K
    last = len(keys) - 1  # each key call jumps to the EPERM after the last; the last's "no" jumps past it
    refused = [(jeq, last - i, int(i == last), number) for i, number in enumerate(keys)] + [(ret, 0, 0, eperm)]
    program = [
        (ld, 0, 0, 4),  # the architecture
        (jeq, 1, 0, arch),
        (ret, 0, 0, allow),  # another: not this filter's
        (ld, 0, 0, 0),  # the call's number
        (jge, 0, 1, 0x40000000),  # x32
        (ret, 0, 0, eperm),
        *refused,
        (jeq, 0, 1, clone3),
        (ret, 0, 0, enosys),
        (jeq, 1, 0, unshare),
        (jeq, 0, 3, clone),
        (ld, 0, 0, 16),  # its first argument's low half: the flags of both
        (jset, 0, 1, CLONE_NEWUSER),
        (ret, 0, 0, eperm),
        (ret, 0, 0, allow),
    ]
    return b"".join(struct.pack("<HBBI", *line) for line in program)


class _holding:
    """A pipe's read end holding ``data`` (what bwrap reads a seccomp program from), closed on exit."""

    def __init__(self, data: bytes | None):
        self.data, self.fd = data, None

    def __enter__(self) -> int | None:
        if self.data is None:
            return None
        self.fd, write = os.pipe()
        os.write(write, self.data)
        os.close(write)
        return self.fd

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)


def _as_worker(command: list[str], uid: int = UID) -> list[str]:
    """``command`` as the sandbox runs it: by the host's uid ``uid`` where the grader is root."""
    if os.geteuid() != 0:
        return command
    return [sys.executable, "-I", "-c", AS_WORKER, str(uid), *command]


def _hand_over(folder: Path | None, uid: int = UID) -> None:
    """Where the grader is root, what the worker writes (its copy, its caches) becomes ``uid``'s."""
    if folder is None or os.geteuid() != 0 or not folder.is_dir():
        return
    os.lchown(folder, uid, uid)
    for here, dirs, files in os.walk(folder):
        for name in dirs + files:
            os.lchown(os.path.join(here, name), uid, uid)


def _unprivileged() -> list[str]:
    return [
        "--unshare-all",
        "--unshare-user",
        "--uid",
        str(UID),
        "--gid",
        str(UID),
        "--cap-drop",
        "ALL",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
    ]


ENVIRONMENT_MARKS = ("pyvenv.cfg", "conda-meta")  # what a venv's or a conda environment's folder holds


def covered(root: Path) -> list[Path]:
    """What of the checkout at ``root`` a submission never sees: its .git, the correct variants and
    every compiled-bytecode folder (one of them could hold an instructor's test, compiled)."""
    found = [root / ".git", root / "tests_meta"]
    for here, dirs, _ in os.walk(root):
        if any((Path(here) / mark).exists() for mark in ENVIRONMENT_MARKS):
            dirs[:] = []  # an environment inside the checkout: its libraries' bytecode, thousands of folders
            continue
        found += [Path(here) / d for d in dirs if d == "__pycache__"]
        dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")]
    return [p for p in found if p.exists()]


def other_suites(paths, own: Path) -> set[Path]:
    """What a submission never sees of the suite's copies other than ``own`` (the judge's) at or above
    ``paths`` (the judge's import path: a checkout its --rootdir or PYTHONPATH names while its own
    stackcheck is another): ``covered``, the key and the stripped solutions protect ``own`` alone.
    A checkout whole (all of it but what holds the interpreter, a venv inside it); an installed copy
    (in site-packages) its packages ``stackcheck`` (the solutions, the key) and ``tests_meta``."""
    found, own = set(), own.resolve()
    interpreter = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    for path in paths:
        if not path or not os.path.isabs(path) or not os.path.exists(path):
            continue
        for folder in (Path(path).resolve(), *Path(path).resolve().parents):
            if folder == own or not (folder / "stackcheck" / "paths" / "data.py").is_file():
                continue
            if any(folder.is_relative_to(p) for p in interpreter):  # installed
                found.update(p for p in (folder / "stackcheck", folder / "tests_meta") if p.exists())
            elif any(p.is_relative_to(folder) for p in interpreter):  # a checkout holding the venv
                found.update(e for e in folder.iterdir() if not any(p.is_relative_to(e) for p in interpreter))
            else:
                found.add(folder)
    return found


def _jailed(exe: str, workdir: Path, jail: Jail, limits: Limits, seccomp: int | None, passed: _Passed) -> list[str]:
    """bwrap's command line: a view built up from nothing (the module's docstring), each mount over the
    ones before; ``seccomp``: a file descriptor holding worker_filter's program. Its options reach bwrap
    through a descriptor of ``passed`` (``--args``), and the files it is given (the worker's /etc/passwd,
    the stripped solutions) as their bytes (``--ro-bind-data``): bwrap is process 1 of the worker's PID
    namespace, whose command line and mount table the worker reads, and neither names a path of the
    grader's (its scratch folder, the judge's, its home) or what the view covers."""
    args = _view(workdir, jail, seccomp, passed)
    return [exe, "--args", str(passed.holding(b"".join(a.encode() + b"\0" for a in args)))]


def _view(workdir: Path, jail: Jail, seccomp: int | None, passed: _Passed) -> list[str]:
    args = [*_namespaces(), "--dev", "/dev", "--proc", "/proc"]  # on bwrap's new, empty root
    if seccomp is not None:
        args += ["--seccomp", str(seccomp)]
    for path in SYSTEM_READ:
        if os.path.islink(path):  # a merged /usr's /bin -> usr/bin
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in ETC_READ:
        if os.path.lexists(Path("/etc") / name):
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    for name, text in identity(jail.uid if os.geteuid() == 0 else UID).items():
        args += ["--perms", "0444", "--ro-bind-data", str(passed.holding(text.read_bytes())), f"/etc/{name}"]
    for memory in (str(TMP), "/dev/shm"):
        args += ["--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", memory]
    python = {sys.prefix, sys.base_prefix, sys.exec_prefix, *filter(None, sys.path)}
    shown = [p for p in sorted({*map(Path, python), *jail.readable}) if _showable(p, jail.hidden)]
    shown = sorted({part for p in shown for part in _needed(p)})
    inside = jail.inside or workdir
    targets = [*shown, *(t for _, t in jail.replaced), inside]
    for folder in _leading(targets, {TMP, Path("/dev/shm"), *map(Path, SYSTEM_READ)}):
        args += ["--perms", "0755", "--dir", str(folder)]  # bwrap would make them its own alone (0700)
    for path in shown:
        args += ["--ro-bind", str(path), str(path)]
    for path in jail.hidden:  # what is hidden inside a folder shown (a checkout's .git); else it is not there
        for target in _within(path, shown):
            if path.is_dir():
                args += ["--tmpfs", str(target), "--remount-ro", str(target)]
            elif path.exists():
                args += ["--ro-bind", "/dev/null", str(target)]
    for source, target in jail.replaced:
        args += ["--perms", "0444", "--ro-bind-data", str(passed.holding(source.read_bytes())), str(target)]
    args += ["--bind", str(workdir), str(inside)]
    if jail.cache is not None:
        args += ["--bind", str(jail.cache), str(CACHE)]
    args += ["--remount-ro", "/"]
    return [*args, "--chdir", str(inside)]


def _needed(folder: Path) -> list[Path]:
    """What the worker is shown of a folder of its import path: a checkout of the suite as its package
    and its data (``stackcheck/``, ``fixtures/``), never the rest (an instructor's tests kept beside
    them, their names included); any other folder whole."""
    if not (folder / "stackcheck" / "paths" / "data.py").is_file() or not (folder / "fixtures").is_dir():
        return [folder]
    return [folder / "stackcheck", folder / "fixtures"]


class _Passed:
    """Descriptors handed to bwrap, each holding bytes it reads (its options, a file's contents): made
    in memory, inherited by bwrap (``fds``), closed on exit."""

    def __init__(self) -> None:
        self.fds: list[int] = []

    def holding(self, data: bytes) -> int:
        fd = os.memfd_create("stackcheck-bwrap", 0)
        self.fds.append(fd)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
        return fd

    def __enter__(self) -> _Passed:
        return self

    def __exit__(self, *exc) -> None:
        while self.fds:
            os.close(self.fds.pop())


def _leading(targets: list[Path], made: set[Path]) -> list[Path]:
    """The folders on the way to ``targets`` that the view must make (none within another target or in
    ``made``, the mounts that exist already), parents first."""
    found = {a for t in targets for a in t.parents if a != Path("/")}
    found = {a for a in found if a not in made and not any(a.is_relative_to(t) for t in targets)}
    return sorted(found, key=lambda p: (len(p.parts), str(p)))


def _showable(path: Path, hidden) -> bool:
    """Whether a folder of the Python's import path is shown: an existing absolute path, not within a
    hidden place (the judge's own folder, its ``python -m``'s first entry), and holding no home and no
    /tmp (a grader started from ``~``, ``/`` or ``/tmp`` puts it on the path)."""
    if not path.is_absolute() or not path.exists():
        return False
    real = path.resolve()
    if any(real.is_relative_to(h.resolve()) for h in hidden if os.path.lexists(h)):
        return False
    held = (TMP, Path.home(), Path("/home"), Path("/root"))
    return not any(h.resolve().is_relative_to(real) for h in held if os.path.lexists(h))


def _within(path: Path, shown: list[Path]) -> list[Path]:
    """Where ``path`` appears in the worker's view: under each folder shown that holds it, the links on
    the way to either resolved."""
    real = path.resolve() if os.path.lexists(path) else path
    return [p / real.relative_to(p.resolve()) for p in shown if real.is_relative_to(p.resolve())]


def identity(uid: int = UID) -> dict[str, Path]:
    """The worker's /etc/passwd and /etc/group: root and nobody (``uid``) only (a library that asks who
    runs it, Inductor's cache folder, finds an answer; no name of the host's users is shown). Kept in
    the suite's cache folder, named by their content."""
    from stackcheck.paths.data import cache_dir

    texts = {
        "passwd": f"root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:{uid}:{uid}:nobody:{TMP}:/usr/sbin/nologin\n",
        "group": f"root:x:0:\nnogroup:x:{uid}:\n",
    }
    folder = cache_dir() / "sandbox-etc" / hashlib.sha256(repr(texts).encode()).hexdigest()[:12]
    found = {name: folder / name for name in texts}
    if not all(p.is_file() for p in found.values()):
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            made = folder / f".{name}.{uuid.uuid4().hex[:8]}"
            made.write_text(text)
            made.chmod(0o644)
            os.replace(made, folder / name)
    return found


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


# Sets the limits, asks to die with its parent (and joins its cgroups, where there are any), then
# becomes the command: no preexec_fn, which forks a possibly threaded parent.
LAUNCH = (
    "import ctypes, os, resource, signal, sys; m, c, p, f = map(int, sys.argv[1:5]); g = sys.argv[5]; "
    "resource.setrlimit(resource.RLIMIT_AS, (m, m)); resource.setrlimit(resource.RLIMIT_CPU, (c, c + 5)); "
    "resource.setrlimit(resource.RLIMIT_NPROC, (p, p)); resource.setrlimit(resource.RLIMIT_FSIZE, (f, f)); "
    "ctypes.CDLL(None).prctl(1, int(signal.SIGKILL)); "
    "[open(j, 'w').write(str(os.getpid())) for j in g.split(os.pathsep) if j]; "
    "os.execvp(sys.argv[6], sys.argv[6:])"
)
CGROUPS = Path("/sys/fs/cgroup")  # v1's controllers (pids/, memory/, cpu/) or v2's one tree, where the grader may write


def resident_share(slots: int) -> int:
    """What one of ``slots`` workers running at once may hold in memory, together with its processes:
    three quarters of the machine's memory shared out (the rest is the judges' and the grader's)."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return max(1024**3, physical * 3 // (4 * max(slots, 1)))


def _caps(limits: Limits) -> list[Path]:
    """The worker's own cgroups, one per controller this machine lets the grader write: its processes
    (at most ``limits.processes``: a cap that binds root, whom RLIMIT_NPROC does not), their memory
    together (``resident_bytes``: a bomb spread over processes is killed in its own group) and one share
    of the CPU (as many threads as it likes weigh as one process beside the judges). [] where none."""
    resident = limits.resident_bytes or resident_share(1)
    v1 = {
        "pids": {"pids.max": limits.processes},
        "memory": {"memory.limit_in_bytes": resident, "memory.memsw.limit_in_bytes": resident},
        "cpu": {"cpu.shares": 1024},
    }
    if not (CGROUPS / "pids").is_dir() and (CGROUPS / "cgroup.controllers").exists():  # v2: one tree
        v2 = {"pids.max": limits.processes, "memory.max": resident, "memory.swap.max": 0, "cpu.weight": 100}
        return [g for g in [_cgroup(CGROUPS, v2, ("pids.max", "memory.max"))] if g is not None]
    return [g for c, said in v1.items() if (g := _cgroup(CGROUPS / c, said, (next(iter(said)),))) is not None]


def sweep_cgroups() -> list[Path]:
    """Remove the workers' cgroups whose maker is gone (a judge killed before it closed them: at its
    time limit, or with the grader), killing what is left in them; those of a live maker, another
    grading's included, stay. Each group is named after the process that made it. What was removed."""
    removed = []
    for parent in (CGROUPS, *(CGROUPS / c for c in ("pids", "memory", "cpu"))):
        try:
            groups = sorted(parent.glob(f"{GROUP_PREFIX}*"))
        except OSError:
            continue
        for group in groups:
            maker = group.name.removeprefix(GROUP_PREFIX).partition("-")[0]
            if maker.isdigit() and not _alive(int(maker)):
                _remove(group, tries=1)
                removed += [] if group.exists() else [group]
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


GROUP_PREFIX = "stackcheck-"


def _cgroup(parent: Path, settings: dict[str, int], required: tuple[str, ...]) -> Path | None:
    """A new cgroup under ``parent`` with ``settings`` written (those its kernel lacks skipped), or None
    where it cannot be made or a ``required`` setting does not take. Named after this process, its
    maker (``sweep_cgroups``)."""
    try:
        group = parent / f"{GROUP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        group.mkdir()
    except OSError:
        return None
    for name, value in settings.items():
        try:
            (group / name).write_text(str(value))
        except OSError:
            if name in required:
                _remove(group)
                return None
    return group


def cgroup_controllers() -> set[str]:
    """The controllers (pids, memory, cpu) in which a worker started here gets a cgroup of its own:
    none for an ordinary user, or where this machine lets the grader make none."""
    v2 = {"pids": "pids.max", "memory": "memory.max", "cpu": "cpu.weight"}
    found = set()
    for group in _caps(Limits(wall_s=1.0)):
        found |= {group.parent.name} if group.parent != CGROUPS else {c for c, f in v2.items() if (group / f).exists()}
        _remove(group)
    return found


def slots_isolated() -> tuple[bool, str]:
    """Whether workers may run side by side, each costing its neighbours nothing, and why: where the
    grader is root, each slot's worker is a uid of its own in cgroups of its own (processes, memory,
    CPU); an ordinary user's workers are that one host uid, whose processes count together."""
    if os.geteuid() != 0:
        return False, "an ordinary user's workers are one host uid, whose processes, memory and CPU are one pool"
    if cgroup_controllers() >= {"pids", "memory", "cpu"}:
        return True, "each worker a uid of its own in cgroups of its own"
    return False, "this machine lets the grader make no pids, memory and CPU cgroups for each worker"


@dataclass
class Started:
    process: subprocess.Popen
    network: str
    sandbox: str
    groups: list[Path]

    def close(self) -> None:
        while self.groups:
            _remove(self.groups.pop())


def start(
    command: list[str], workdir: Path, limits: Limits, jail: Jail | None = None, unsafe: bool = False, **popen
) -> Started:
    """``command`` started limited and jailed (the module's docstring) in ``workdir``, its own
    process group; ``popen``: its standard streams. Without Bubblewrap: ``NoSandbox``, unless ``unsafe``."""
    exe, why = bubblewrap()
    if exe is None and not unsafe:
        raise NoSandbox(f"no sandbox available: {why}")
    jail = jail or Jail()
    program = worker_filter() if exe is not None else None
    if exe is None:
        (prefix, network), how = network_isolation(), "none (unsafe)"
        home, cache = workdir, jail.cache or workdir / ".cache"
    else:
        prefix, network, how = [], "isolated", "bubblewrap"  # its arguments name the filter's descriptor: below
        home, cache = TMP, CACHE if jail.cache else TMP / ".cache"
        _hand_over(workdir, jail.uid)
        _hand_over(jail.cache, jail.uid)
        command = _as_worker(command, jail.uid)
    groups = _caps(limits)
    joins = os.pathsep.join(str(g / "cgroup.procs") for g in groups)
    launch = [str(limits.memory_bytes), str(limits.cpu), str(limits.processes), str(limits.file_bytes), joins]
    with _holding(program) as seccomp, _Passed() as passed:
        if exe is not None:
            prefix = _jailed(exe, workdir, jail, limits, seccomp, passed)
        process = subprocess.Popen(
            [sys.executable, "-c", LAUNCH, *launch, *prefix, *command],
            cwd=workdir,
            env=environment(home, cache),
            start_new_session=True,  # its own process group, killed whole
            pass_fds=(*((seccomp,) if seccomp is not None else ()), *passed.fds),
            **popen,
        )
    return Started(process, network, how, groups)


def run(command: list[str], workdir: Path, limits: Limits, jail: Jail | None = None, unsafe: bool = False) -> Outcome:
    """``command`` run to its end or the wall limit, at which its whole PID namespace dies. Output
    goes to files, never pipes: a process that outlives the run cannot hold the grader's wait."""
    with tempfile.TemporaryFile("w+b") as out, tempfile.TemporaryFile("w+b") as err:
        started = start(command, workdir, limits, jail, unsafe, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        process = started.process
        try:
            returncode = process.wait(timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # bwrap dies, and its namespace's processes with it
            process.wait(timeout=60)
            returncode = None
        finally:
            started.close()
        if started.sandbox == "bubblewrap" and returncode is not None and returncode - 128 in signal.valid_signals():
            returncode = 128 - returncode  # bwrap's 128 + N for a command killed by signal N, as Popen says it
        return Outcome(returncode, capped(out), capped(err), started.network, started.sandbox)


OUTPUT_BYTES = 1024**2  # what is read of any output: its head and its tail


def capped(stream) -> str:
    """At most OUTPUT_BYTES of a file's text, head and tail, undecodable bytes replaced."""
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    stream.seek(0)
    if size <= OUTPUT_BYTES:
        data = stream.read()
    else:
        data = stream.read(OUTPUT_BYTES // 2) + b"\n[... output cut ...]\n"
        stream.seek(size - OUTPUT_BYTES // 2)
        data += stream.read()
    return data.decode("utf-8", errors="replace")


def _remove(group: Path, tries: int = 50) -> None:
    """Kill what is left in the cgroup (an unsafe run's strays) and remove it, trying ``tries`` times a
    tenth of a second apart while its killed processes exit."""
    try:
        for pid in (group / "cgroup.procs").read_text().split():
            os.kill(int(pid), signal.SIGKILL)
    except (OSError, ValueError):
        pass
    for attempt in range(tries):
        try:
            group.rmdir()
            return
        except OSError:
            if attempt + 1 < tries:
                time.sleep(0.1)
