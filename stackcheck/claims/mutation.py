"""Running claim tests against wrong implementations (mutants), fast and isolated.

Each mutant run is a whole pytest session with ``--impl tests_meta.mutants.NAME``. A fresh
interpreter per run spends seconds importing torch, JAX, Triton and MAX again; instead a server
process imports them once, and forks a child for each batch of runs. The child runs ``pytest.main``
once per run, putting back the modules, paths and environment each run found, and exits, so no
batch leaks into the next; a run that hangs is killed at its time limit, and the runs after it
in its batch go on in a new child. A batch holds runs of different claims (``batches``): what one
run leaves in the process (Dynamo's and Inductor's warm state) cannot pass another's claim.

    python -m stackcheck.claims.mutation      # the server: JSON requests on stdin, JSON replies on stdout
"""

from __future__ import annotations

import importlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

# Imported by the server before it forks: what most mutant runs would import again.
PRELOAD = (
    "numpy",
    "hypothesis",
    "torch",
    "torch._inductor.compile_fx",
    "jax",
    "jax.numpy",
    "triton",
    "triton.language",
    "max.graph",
    "max.engine",
    "max.driver",
    "stackcheck.plugin.hooks",
    "stackcheck.toolchains.triton_kernels",
    "stackcheck.toolchains.inductor",
)
# Mutant runs are CPU runs (-m cpu), so the server and its forked children see no GPU, as on the
# CPU machine. Measured on the H200 image: with the GPU visible, the server's imports ask torch for
# a device count, which marks every forked child, and a child's first torch.compile dies with
# "Cannot re-initialize CUDA in forked subprocess"; with only CUDA_VISIBLE_DEVICES="" a child
# segfaults in JAX's CUDA plugin (jax_plugins/xla_cuda13 _check_cuda_versions). Both hidden,
# the mutants are caught with their own hints.
CPU_ONLY = {"CUDA_VISIBLE_DEVICES": "", "JAX_PLATFORMS": "cpu"}
# Variables of the calling pytest process that must not leak into the runs.
PRIVATE = (
    "PYTEST_XDIST_WORKER",
    "PYTEST_XDIST_WORKER_COUNT",
    "PYTEST_XDIST_TESTRUNUID",
    "PYTEST_CURRENT_TEST",
    "PYTEST_ADDOPTS",
)


@dataclass(frozen=True)
class Mutant:
    """One row of the mutant table: running ``test`` (narrowed by ``select``) with ``name`` as the
    implementation must fail the test ``breaks`` of ``claim``, and the failure's first hint must be ``hint``."""

    name: str
    test: str
    claim: str
    breaks: str  # the test function of ``test`` that must fail
    hint: str  # the claim or misconception the feedback should send its author to first (OWN_CODE: its line)
    select: str | None = None
    hint_miss: str | None = None  # why the failure's text cannot tell this mistake apart (a known miss)
    device: str = "cpu"  # "cuda": a cuda-only claim's mutant, run on a GPU in a process of its own (run_on_gpu)

    @property
    def id(self) -> str:
        return f"{self.name}-{self.claim}"


def table(path: Path) -> list[Mutant]:
    with open(path, "rb") as f:
        return [Mutant(**row) for row in tomllib.load(f)["mutant"]]


def batches(mutants: list[Mutant], size: int = 5) -> list[list[Mutant]]:
    """The mutants in batches of at most ``size`` that share no claim, in table order: a batch's
    runs share a forked process (``Runner.run_batch``), and what one run leaves there cannot pass
    another run's claim."""
    found: list[list[Mutant]] = []
    for mutant in mutants:
        open_ = (b for b in found if len(b) < size and all(m.claim != mutant.claim for m in b))
        batch = next(open_, None)
        if batch is None:
            found.append(batch := [])
        batch.append(mutant)
    return found


# ---- the server ---------------------------------------------------------------------------


def serve() -> None:
    for module in PRELOAD:
        try:
            importlib.import_module(module)
        except Exception:  # a stack that is not installed: its runs import nothing of it either
            pass
    _warm_once()
    reply = sys.stdout
    sys.stdout = sys.stderr  # nothing but replies on the reply channel
    reply.write(json.dumps({"ready": True}) + "\n")
    reply.flush()
    for line in sys.stdin:
        request = json.loads(line)
        reply.write(json.dumps({"runs": _run_batch(request["runs"], request["timeout"])}) + "\n")
        reply.flush()


def _warm_once() -> None:
    """What every forked run would pay again: Inductor's first CPU compile in a process probes which
    vector ISAs the C++ compiler builds (six Python subprocesses) and imports its lowerings, scheduler
    and code generators. Paid here once, before forking, each run inherits them (a child's first
    torch.compile 1.6 s -> 0.2 s on 2 cores). The compile is of a matmul alone, in an empty cache (a
    hit would skip the code generators): a library call, so no C++ is compiled and no precompiled
    header is left in the temp folder. It compiles in this thread, with no pool: a forked child has
    none of the parent's threads, and would queue its C++ compiles on a pool with none (a hang)."""
    try:
        import torch
        from torch._inductor import cpu_vec_isa
        from torch._inductor.utils import fresh_inductor_cache
    except Exception:  # torch is not installed: nothing to warm
        return
    cpu_vec_isa.valid_vec_isa_list()
    # fresh_inductor_cache keeps its folder when the compile raises; this one goes whatever happens
    with tempfile.TemporaryDirectory(prefix="stackcheck-warm-") as scratch:
        try:
            with fresh_inductor_cache(dir=scratch), torch._inductor.config.patch(compile_threads=1):
                torch.compile(lambda x, w: x @ w)(torch.ones(4, 3), torch.ones(3, 2))
        except Exception:  # torch.compile cannot run here (a Python Dynamo refuses): the runs find out themselves
            pass
        finally:
            torch._dynamo.reset()


class _NoGcAtExit:
    """pytest ends a session with 5 full garbage collections (looking for unraisable exceptions);
    in a process that holds torch, JAX and MAX they take 0.7 s, and a forked child exits right
    after its session. pytester turns them off for its in-process runs the same way."""

    @staticmethod
    def pytest_configure(config: pytest.Config) -> None:
        from _pytest.unraisableexception import gc_collect_iterations_key

        config.stash[gc_collect_iterations_key] = 0


def _run_batch(runs: list[dict], timeout: float) -> list[dict]:
    """Each run's {"rc", "seconds"}: the runs in one forked child, one after another; a run past
    ``timeout`` seconds is killed with its child ("timeout"), and the rest go on in a new child."""
    replies: list[dict] = []
    while len(replies) < len(runs):
        replies += _fork_runs(runs[len(replies) :], timeout)
    return replies


def _fork_runs(runs: list[dict], timeout: float) -> list[dict]:
    """The replies of the runs the child finished, then the one that hung or died (at least one)."""
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: the sessions, then exit without running the parent's cleanups
        try:
            os.setsid()
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            sys.stdout = sys.__stdout__ = os.fdopen(1, "w", buffering=1, closefd=False)
            sys.stderr = sys.__stderr__ = os.fdopen(2, "w", buffering=1, closefd=False)
            for run in runs:
                _one_session(run)
        finally:
            os._exit(0)
    done: list[dict] = []
    started = time.monotonic()  # of the run in progress
    while True:
        finished, status = os.waitpid(pid, os.WNOHANG)
        more = _collect(runs[len(done) :])
        if more:
            done += more
            started = time.monotonic()
        if finished:
            if len(done) < len(runs):  # the child died in a run: that run's exit code is the child's
                code = os.waitstatus_to_exitcode(status)
                done.append({"rc": code or 3, "seconds": round(time.monotonic() - started, 2)})
            return done
        if time.monotonic() - started > timeout:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            done += _collect(runs[len(done) :])
            if len(done) < len(runs):
                done.append({"rc": "timeout", "seconds": round(time.monotonic() - started, 2)})
            return done
        time.sleep(0.02)


def _library_folders(paths: list[str], home: str) -> tuple[str, ...]:
    """Where libraries are imported from: the import path's folders but the checkout (``home``, the
    server's folder), and the stackcheck package."""
    home = os.path.realpath(home)
    folders = {os.path.realpath(p) for p in paths if p and os.path.realpath(p) != home}
    return (*sorted(folders), str(Path(__file__).resolve().parents[1]))


def _from(module, folders: tuple[str, ...]) -> bool:
    file = getattr(module, "__file__", None)
    if not file:  # built in, or a namespace package: nothing to import again
        return True
    file = os.path.realpath(file)
    return any(file.startswith(folder.rstrip(os.sep) + os.sep) for folder in folders)


def _collect(runs: list[dict]) -> list[dict]:
    """The replies the child has written, in order, for the leading ``runs`` it finished."""
    replies = []
    for run in runs:
        written = Path(run["out"] + ".rc")
        if not written.exists():
            break
        replies.append(json.loads(written.read_text()))
    return replies


def _one_session(run: dict) -> None:
    """One pytest session in the forked child, its output in ``run["out"]``, its reply beside it; the
    modules it imported from outside the libraries (tests, conftests, the implementation), the paths
    and the environment it changed are put back after it. A library's modules it imported stay: one
    imported twice registers its parts twice (Dynamo: "duplicate name: dynamo_minifier_backend")."""
    started = time.monotonic()
    home, modules, paths, environ = os.getcwd(), dict(sys.modules), list(sys.path), dict(os.environ)
    code = 3
    try:
        os.chdir(run["cwd"])
        fd = os.open(run["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        code = int(pytest.main(_own_basetemp(run["args"], run["cwd"]), plugins=[_NoGcAtExit()]))
    except BaseException as error:  # noqa: BLE001 - the next run must still happen
        print(f"stackcheck.claims.mutation: the run raised {type(error).__name__}: {error}", file=sys.stderr)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        libraries = _library_folders(paths, home)
        for name in set(sys.modules) - set(modules):
            if not _from(sys.modules[name], libraries):
                del sys.modules[name]
        sys.modules.update(modules)
        sys.path[:] = paths
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(home)
    reply = json.dumps({"rc": code, "seconds": round(time.monotonic() - started, 2)})
    staged = Path(run["out"] + ".rc.part")
    staged.write_text(reply)
    staged.rename(run["out"] + ".rc")  # whole or absent: the parent reads it while the child runs


def _own_basetemp(args: list[str], cwd: str) -> list[str]:
    """``args`` with a ``--basetemp`` in the run's folder, unless they name one. pytest's numbered
    temp folders are unlocked by an exit handler, which a forked child never runs (it leaves with
    ``os._exit``): locked, each would stay three days in the temp folder, one a run."""
    if any(a == "--basetemp" or a.startswith("--basetemp=") for a in args):
        return args
    return [*args, f"--basetemp={Path(cwd) / '.pytest-tmp'}"]


# ---- the client ---------------------------------------------------------------------------


class Runner:
    """Starts the server on first use; ``run(args, cwd)`` returns a ``pytest.RunResult``."""

    def __init__(self, root: Path, timeout: float = 300.0):
        self.root = root
        self.timeout = timeout
        self.process: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        environ = _own_environ() | CPU_ONLY
        process = subprocess.Popen(
            [sys.executable, "-m", "stackcheck.claims.mutation"],
            cwd=self.root,
            env=environ,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        ready = process.stdout.readline()
        if not ready:
            raise RuntimeError(f"the mutant server did not start (exit code {process.wait()})")
        return process

    def start(self) -> None:
        """Start the server now (it imports the stacks: seconds), not at the first run."""
        if self.process is None or self.process.poll() is not None:
            self.process = self._start()

    def run(self, args: list[str], cwd: Path, timeout: float | None = None) -> pytest.RunResult:
        """One run; ``timeout`` (seconds) in place of the runner's own for a run known to be long."""
        return self.run_batch([(args, cwd)], timeout)[0]

    def run_batch(self, runs: list[tuple[list[str], Path]], timeout: float | None = None) -> list[pytest.RunResult]:
        """Runs (args, cwd) one after another in one forked child, each within ``timeout`` seconds;
        a result each, its output read from ``cwd / "pytest-output.txt"``."""
        self.start()
        timeout = timeout or self.timeout
        outs = [cwd / "pytest-output.txt" for _, cwd in runs]
        for out in outs:
            out.with_name(out.name + ".rc").unlink(missing_ok=True)
        request = {
            "runs": [
                {"args": [str(a) for a in args], "cwd": str(cwd), "out": str(out)}
                for (args, cwd), out in zip(runs, outs)
            ],
            "timeout": timeout,
        }
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the mutant server died (exit code {self.process.wait()})")
        return [
            self._fresh(args, cwd, timeout, reply["rc"]) if _killed(reply["rc"]) else _result(reply, out, timeout)
            for reply, out, (args, cwd) in zip(json.loads(answer)["runs"], outs, runs)
        ]

    def _fresh(self, args: list[str], cwd: Path, timeout: float, signal_rc: int) -> pytest.RunResult:
        """The run again in a fresh interpreter, after its forked child was killed by a signal the
        runner did not send: a library's state that does not survive a fork (on a loaded 2-core
        machine, MAX's threaded model load segfaulted in one forked run of Q4 in a self-test run of
        2026-12-05). The run's own verdict is the fresh run's; the first line says what happened."""
        environ = _own_environ() | CPU_ONLY
        environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(self.root), environ.get("PYTHONPATH")]))
        result = _fresh_run(_own_basetemp([str(a) for a in args], str(cwd)), cwd, environ, timeout)
        said = f"the forked run died (exit code {signal_rc}); run again in a fresh interpreter"
        result.outlines.insert(0, f"stackcheck.claims.mutation: {said}")
        return result

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()


def _killed(rc) -> bool:
    """A forked run's exit code when a signal ended it (the runner's own kill at the time limit is
    "timeout")."""
    return isinstance(rc, int) and rc < 0


def _result(reply: dict, out: Path, timeout: float) -> pytest.RunResult:
    lines = out.read_text(errors="replace").splitlines() if out.exists() else []
    if reply["rc"] == "timeout":
        lines.append(f"stackcheck.claims.mutation: the run passed its time limit of {timeout:.0f} s; killed")
        reply["rc"] = -9
    return pytest.RunResult(reply["rc"], lines, [], reply["seconds"])


def mutant_args(root: Path, mutant: Mutant) -> list[str]:
    # The server imported stackcheck before forking, so pytest cannot rewrite its asserts (it needs
    # none: its checks raise their own messages); the warning saying so is noise in every run.
    return [
        str(root / mutant.test),
        "-m",
        mutant.device,
        "-p",
        "no:cacheprovider",
        "-x",
        "-q",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        "--impl",
        f"tests_meta.mutants.{mutant.name}",
        *(["-k", mutant.select] if mutant.select else []),
    ]


def _own_environ() -> dict[str, str]:
    """This process's environment without the calling pytest's own variables (PRIVATE)."""
    return {k: v for k, v in os.environ.items() if k not in PRIVATE}


def run_on_gpu(root: Path, mutant: Mutant, cwd: Path, timeout: float = 600.0) -> pytest.RunResult:
    """A cuda mutant's run: a pytest process of its own (the forked server is CPU-only: a CUDA
    context does not survive a fork), on the GPU this machine has."""
    return run_args_on_gpu(mutant_args(root, mutant), cwd, timeout)


def run_args_on_gpu(args: list[str], cwd: Path, timeout: float = 600.0) -> pytest.RunResult:
    """``python -m pytest ARGS`` as run_on_gpu runs a mutant's: in a fresh interpreter, in ``cwd``."""
    return _fresh_run(args, cwd, _own_environ(), timeout)


def _fresh_run(args: list[str], cwd: Path, environ: dict[str, str], timeout: float) -> pytest.RunResult:
    """``python -m pytest ARGS`` in a fresh interpreter, within ``timeout`` seconds."""
    start = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *args],
            cwd=cwd,
            env=environ,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        rc, lines = done.returncode, (done.stdout + done.stderr).splitlines()
    except subprocess.TimeoutExpired as expired:
        rc, lines = -9, [*str(expired.stdout or "").splitlines(), f"the run passed its time limit of {timeout:.0f} s"]
    return pytest.RunResult(rc, lines, [], time.monotonic() - start)


# A run's lines name the suite's files by path, which may hold a space (a clone under "with space/")
SKIPPED = re.compile(r"SKIPPED \[\d+\] .*?:\d+: (.*)")  # -ra's line: any skip with its reason, raised anywhere
FAILED_TEST = re.compile(r"FAILED .+?\.py::(\w+)")
# the --impl module itself imports a module that is not installed here (the loader's one-line message)
MISSING_IMPORT = re.compile(r"no module named '[\w.]+'.*which is not installed")
TIME_LIMIT = re.compile(r"the run passed its time limit of .*")  # Runner's and run_on_gpu's line for a killed run


def undecided(lines: list[str]) -> str | None:
    """Why a run that failed nothing could not judge its mutant (a skip's reason, a missing import,
    the time limit it was killed at), or None: nothing stood in its way, so the mutant survived."""
    for pattern in (TIME_LIMIT, SKIPPED, MISSING_IMPORT):
        found = [m.group(m.lastindex or 0) for line in lines for m in [pattern.search(line)] if m]
        if found:
            return found[0].strip()
    return None


def assert_caught(result: pytest.RunResult, mutant: Mutant) -> None:
    """The mutant made the claim's tests fail, the claim table says so, and the failure points the
    learner to the claim's course section."""
    __tracebackhide__ = True
    outcomes = result.parseoutcomes() if any(" in " in line for line in result.outlines[-3:]) else {}
    tail = "\n".join(result.outlines[-25:])
    if outcomes.get("failed", 0) + outcomes.get("errors", 0) + outcomes.get("error", 0) < 1:
        reason = undecided(result.outlines)
        if reason:  # a stack, device, tool or time the claim's tests needed, or timing that could not decide
            pytest.skip(f"mutant {mutant.name}: the {mutant.claim} tests could not judge it here: {reason[:400]}")
        raise AssertionError(
            f"mutant {mutant.name} survived the {mutant.claim} tests of {mutant.test} (exit code {result.ret}):\n{tail}"
        )
    failed_row = re.compile(rf"^ *\w+  F failed +{re.escape(mutant.claim)}(?: |$)")  # the claims table's row
    if not any(failed_row.match(line) for line in result.outlines):
        raise AssertionError(f"the claim table must report {mutant.claim} failed:\n{tail}")
    failed = {m.group(1) for line in result.outlines for m in [FAILED_TEST.match(line)] if m}
    if mutant.breaks not in failed:
        raise AssertionError(
            f"mutant {mutant.name} must break {mutant.breaks} of {mutant.test}; it broke {sorted(failed)}:\n{tail}"
        )
    if f"[{mutant.claim}]" not in "\n".join(result.outlines):
        raise AssertionError(f"the failure must point the learner to {mutant.claim}'s course section:\n{tail}")
    first = first_hint(result.outlines)
    if mutant.hint == OWN_CODE:  # a slip of Python: the failure names the student's file and line first
        fixed = first_fix(result.outlines)
        if fixed is None or not fixed.endswith(f"{mutant.name}.py"):
            raise AssertionError(f"mutant {mutant.name}: the failure must name its own file and line first:\n{tail}")
        if first is not None:
            raise AssertionError(f"mutant {mutant.name}: a slip of Python has no course section first, got {first}")
        return
    if mutant.hint_miss is None and first != mutant.hint:
        raise AssertionError(
            f"mutant {mutant.name}: the failure must point first to {mutant.hint} (its mistake), "
            f"it pointed to {first}; add a pattern to fixtures/hints.toml:\n{tail}"
        )
    if mutant.hint_miss is not None and first == mutant.hint:
        raise AssertionError(f"mutant {mutant.name}: its hint is right now; drop hint_miss ({mutant.hint_miss})")


OWN_CODE = "own-code"  # a mutant row's hint for a slip of Python in the student's own code


def first_fix(lines: list[str]) -> str | None:
    """The file of the first "Fix first, your code raised ... at FILE:LINE" line of a run's output."""
    return _first(lines, r"Fix first, your code raised \w+ at (.+):\d+ \(")


def first_hint(lines: list[str]) -> str | None:
    """The id of the first "Revisit first, course §... [ID]" line of a run's output."""
    return _first(lines, r"Revisit first, course §.*? \[([^\]]+)\]: ")


def _first(lines: list[str], pattern: str) -> str | None:
    """The group of ``pattern``'s first match among ``lines``, or None."""
    return next((found.group(1) for line in lines if (found := re.search(pattern, line))), None)


if __name__ == "__main__":
    serve()
