"""The judge's side of a graded submission (``stackcheck grade``): the student's functions as
proxies that run in the worker (stackcheck.grading.worker), so the judge's process never imports the
submission. A call sends the judge's own arguments; what comes back is rebuilt from data
(stackcheck.grading.wire) and judged here. A function the judge hands the student's code (a forward to
time, a sync) stays here: the worker calls back. A call the worker does not survive (a crash, the
per-test timeout) costs that call: the next one starts a new worker.
"""

from __future__ import annotations

import contextvars
import functools
import io
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import types
from types import ModuleType
from typing import Callable

from stackcheck.grading import wire, worker
from stackcheck.impl import aten_graph, contract, integrity, isolation, kernel_source

LOAD_LIMIT_S = 300.0  # importing the file: torch, JAX and MAX imported cold on a loaded 2-core machine
RESTARTS = 8  # new workers after crashes or timeouts; then every call fails at once
OUTPUT = [1, "out"]  # the argument a call may write (§11.2's kernels' out=): [positional, keyword] "out"
LIBRARIES = ("numpy", "torch", "jax", "jaxlib", "math", "operator", "builtins", "functools", "ml_dtypes")


class NotShippable(TypeError):
    """An argument the worker cannot be given (a tracer, a fake tensor): the test needs the function
    in this process, which a graded run never allows; such a test reads worker evidence instead."""


class Worker:
    """One submission's worker: ``start()`` launches it (sandboxed) with its channel on stdin/stdout."""

    def __init__(self, start: Callable[[], subprocess.Popen], assigned: frozenset[str] | None, log=None):
        self.start, self.assigned, self.log = start, assigned, log
        self.process: subprocess.Popen | None = None
        self.restarts = 0
        self.loaded: list | None = None  # ["loaded", names, public, module] or ["load_error", message]
        self.callbacks: list[Callable] = []
        self.running: str | None = None
        self.interrupted: str | None = None  # the function running when a call was interrupted
        self.exports: dict[tuple, object] = {}  # (name, shapes) -> the checked jax.export.Exported
        self.measured: set[str] = set()  # what the worker measured for the test now running (the report says)
        self.pending = False  # a load was asked for (begin) and its answer not read yet
        self.launcher_start: Callable[[], subprocess.Popen] | None = None  # a worker of an empty file
        self.launcher: Worker | None = None  # started at the first kernel call (kernel_source.replay)
        self.said_from = 0  # the log's length when the call now running began: its last words are its own

    # ---- the process ----

    def begin(self) -> None:
        """Start a worker and ask it to load the file, not waiting: its imports overlap what the judge
        does meanwhile (collecting the tests); the first request reads the answer."""
        if self.loaded is not None:
            if self.restarts >= RESTARTS:
                raise isolation.Crashed(f"the submission's worker was restarted {RESTARTS} times; no more calls run")
            self.restarts += 1
        self.said_from = _length(self.log)
        self.process = self.start()
        self.pending = True
        assigned = sorted(self.assigned) if self.assigned is not None else None
        wire.send(self.process.stdin.fileno(), self._pickled(wire.Load(assigned)))

    def _ensure(self) -> None:
        if not self.pending:
            if self.process is not None and self.process.poll() is None:
                return
            self.begin()
        self.pending = False
        answer, _ = self._receive(deadline=LOAD_LIMIT_S)
        if self.loaded is None:
            self.loaded = answer
        if answer[0] != "loaded":
            raise isolation.Crashed(f"the submission did not load again in a new worker: {answer[1]}")

    def load(self) -> list:
        """["loaded", surface names it defines, its public functions, module name] or ["load_error", message]."""
        try:
            self._ensure()
        except isolation.Crashed:
            pass
        except (EOFError, wire.WireError, OSError) as error:
            self.loaded = ["load_error", f"the submission's worker ended while loading it: {self._why(error)}"]
        return self.loaded or ["load_error", "the submission's worker did not start"]

    def stop(self) -> None:
        if self.launcher is not None:
            self.launcher.stop()
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if stream:
                    stream.close()
            self.process = None

    def _why(self, error: BaseException) -> str:
        process = self.process
        code = process.wait(timeout=10) if process is not None else None
        if code is not None and code > 128 and code - 128 in signal.valid_signals():
            code = 128 - code
        if code is not None and code < 0 and -code in signal.valid_signals():
            said = f"it was killed by {signal.Signals(-code).name}"
        else:
            said = f"it exited (code {code})" if code is not None else str(error)
        return said + self._last_words()

    def _last_words(self, lines: int = 12) -> str:
        """The end of what the worker wrote to its standard error (the student's prints and tracebacks)
        since the call now running began: what it printed in an earlier test (an instructor's hidden
        test's inputs, say) is never quoted in a later one's failure."""
        drained(self.log)
        try:
            with open(self.log, "rb") as f:
                f.seek(max(self.said_from, os.fstat(f.fileno()).st_size - 4000))
                tail = f.read().decode("utf-8", errors="replace").splitlines()[-lines:]
        except (OSError, TypeError):
            return ""
        return ("; its last output:\n" + "\n".join(tail)) if tail else ""

    # ---- requests ----

    def call(self, name: str, args: tuple, kwargs: dict):
        if _jax_traced((args, kwargs)):
            return self._exported(name, args, kwargs).call(*args, **kwargs)
        if name in kernel_source.KERNEL_FUNCTIONS and self.launcher_start is not None:
            return self._kernel_call(name, args, kwargs)
        message = wire.Call(name, args, kwargs, _grad_enabled(), _COMPILE.get())
        return self._request(message, name, [list(args), kwargs])

    def _kernel_call(self, name: str, args: tuple, kwargs: dict):
        """A kernel function: the worker runs the student's host code and records its launches as data;
        the judge checks every kernel's source and has the checked kernels launched on its own
        arguments by the launcher, a worker that never imported the submission. Its result is the
        call's (stackcheck.impl.kernel_source)."""
        __tracebackhide__ = True
        message = wire.Call(name, args, kwargs, _grad_enabled())
        value, program = self._request(message, name, [list(args), kwargs], kernels=True)
        if not kernel_source.is_tensor(value):
            return value  # not a tensor: the surface contract refuses it as it is
        plan = kernel_source.checked(name, program, kernel_source.host_values(name, args))
        if plan["returns"][0] == "unwritten":  # no elements (checked): nothing a kernel computes
            return value
        value = self._launcher()._request(wire.Replay(plan, args, kwargs), name, [list(args), kwargs])
        return kernel_source.launched(plan, value)

    def _launcher(self) -> Worker:
        if self.launcher_start is None:
            raise isolation.Crashed("this run has no launcher: a graded submission's kernels run nowhere else")
        if self.launcher is None:
            self.launcher = Worker(self.launcher_start, frozenset(), self.log)
        return self.launcher

    def package_probe(self, probe: Callable, package, args: tuple):
        """``probe(package, *args)`` (stackcheck.impl.mojo_source.probe) run by the launcher, a worker
        that never imported the submission, on the package's files: the judge gets its data."""
        where = f"{probe.__module__}:{probe.__qualname__}"
        files = [[rel, data] for rel, data in package.files]
        return self._launcher()._request(wire.Package(where, package.name, files, args), "mojo_package", [list(args)])

    def evidence(self, helper: Callable, name: str, args: tuple, kwargs: dict):
        self.measured.add(f"{helper.__name__} of {name}")
        where = f"{helper.__module__}:{helper.__qualname__}"
        return self._request(wire.Evidence(where, name, args, kwargs, _grad_enabled()), name, [list(args), kwargs])

    def reset_dynamo(self) -> None:
        """torch._dynamo.reset() in the worker (a running one: a new worker starts reset)."""
        if self.process is not None and self.process.poll() is None:
            self._request(wire.Reset(), "torch._dynamo.reset", [])

    def jax_program(self, helper: Callable, name: str, args: tuple):
        """A JAX helper's reading of the student's function (``JAX_PROGRAM_HELPERS``), built here from the
        program the worker exported (StableHLO, optimized HLO, kernels and the executable are the
        judge's own); only what the jaxpr gives, which the export does not carry, is the worker's."""
        exported = self._exported(name, args, {})
        found = helper(lambda *a: exported.call(*a), *args)
        told = self.evidence(helper, name, args, {})
        found.update({key: told[key] for key in JAX_PROGRAM_HELPERS[helper.__name__]})
        return found

    def eager_ops(self, helper: Callable, name: str, args: tuple, kwargs: dict):
        """``eager_ops`` of the student's torch function, recorded by the judge's own eager mode on a
        graph the judge runs: the worker exports the function's core ATen graph (aten_graph.dump), the
        judge rebuilds it from data and keeps it only where it returns what the function returns on
        the judge's inputs. A function that cannot be exported (a host round trip, its own operator)
        is recorded in the worker instead, and the report says so."""
        exported = self._exported_graph(name, args)
        if exported is None:
            return self.evidence(helper, name, args, kwargs)
        graph, result = exported
        _, ops = helper(graph, *args, **kwargs)
        return result, ops

    def _exported_graph(self, name: str, args: tuple):
        """(the judge's GraphModule of the student's ``name`` on ``args``' shapes, what the function
        returned on ``args``), or None where the worker could not export it or the graph does not
        compute what the function returns."""
        import torch

        from stackcheck.evidence.numerics import mismatch_report, tolerance

        where = f"{aten_graph.__name__}:{aten_graph.dump.__name__}"
        try:
            data = self._request(wire.Evidence(where, name, args, {}, _grad_enabled()), name, [list(args), {}])
            graph = aten_graph.rebuild(data, args[0].device)
            with torch.no_grad():
                mine, theirs = graph(*args), self.call(name, args, {})
        except (isolation.Crashed, NotShippable):
            raise
        except Exception:  # noqa: BLE001 - not exportable, or a graph the judge refuses: the worker measures
            return None
        if not all(isinstance(t, torch.Tensor) and t.is_floating_point() for t in (mine, theirs)):
            return None
        if mine.shape != theirs.shape or mine.dtype != theirs.dtype:
            return None
        dtype = str(mine.dtype).removeprefix("torch.")
        tol = tolerance(dtype if dtype in ("float32", "bfloat16", "float16") else "float32", args[0].shape[-1])
        if mismatch_report(mine.float().cpu().numpy(), theirs.float().cpu().numpy(), tol) is not None:
            return None
        return graph, theirs

    def _exported(self, name: str, args: tuple, kwargs: dict):
        """The student's JAX function for these shapes as the worker exported it (StableHLO), checked
        here: only custom calls JAX guarantees stable, so the program is XLA's own ops, run by the judge."""
        import jax

        specs = jax.tree_util.tree_map(_spec, (args, kwargs))
        key = (name, repr(specs))
        if key not in self.exports:
            blob = self._request(wire.Export(name, *specs), name, [])
            self.exports[key] = _checked_export(jax.export.deserialize(bytearray(blob)))
        return self.exports[key]

    def _request(self, message, name: str, args: list, kernels: bool = False):
        """The worker's answer to ``message``: its value rebuilt here, or with ``kernels`` the launches
        it recorded instead. The judge keeps its own arguments: what the worker wrote into them comes
        back only for the one a call may write, its ``out=`` (``OUTPUT``)."""
        __tracebackhide__ = True
        self._ensure()
        outer = self.running
        if outer is None:
            self.said_from = _length(self.log)
        self.running = self.running or name
        limit = wire.answer_limit(args)
        try:
            answer, buffers = self._exchange(message, limit)
        except (EOFError, wire.WireError, OSError) as error:
            why = self._why(error)
            self.stop()
            raise isolation.Crashed(
                f"{name} (course §{_section(name)}) crashed: the worker it ran in ended ({why})"
            ) from None
        except BaseException:  # the per-test timeout, an interrupt: the worker is mid-call, so it goes
            self.interrupted = self.running
            self.stop()
            raise
        finally:
            self.running = outer
            if outer is None:
                self.callbacks.clear()
        decode = wire.Decoder(buffers, args, callbacks=self, limit=limit)
        kind, value, written, counts, program = wire.parts(answer, 5)
        for path, index in (wire.parts(w, 2) for w in wire.parts(written)) if not kernels else ():
            if path == OUTPUT:
                _copy_into(decode._argument(path), decode._buffer(index))
        if _count_compiles(*counts):
            self.measured.add(f"compiles of {name}")
        if kind == "raised":
            raise _borrowing(decode(value), self.running or name)
        if kernels:
            return decode(value), decode(program)
        return decode(value)

    def _exchange(self, message, limit: int):
        wire.send(self.process.stdin.fileno(), self._pickled(message))
        return self._receive(limit=limit)

    def _receive(self, deadline: float | None = None, limit: int = wire.ANSWER_FLOOR):
        out = self.process.stdout.fileno()
        while True:
            if deadline is not None and not select.select([out], [], [], deadline)[0]:
                raise EOFError(f"no answer within {deadline:g} s")
            tree, buffers = wire.unpack(wire.receive(out, limit))
            if not isinstance(tree, list) or not tree:
                raise wire.WireError("an answer that is not a tagged list")
            if tree[0] != "callback":
                return tree, buffers
            self._answer_callback(tree, buffers)

    def _answer_callback(self, tree, buffers) -> None:
        _, index, args, kwargs = tree
        decode = wire.Decoder(buffers, callbacks=self)
        if not isinstance(index, int) or not 0 <= index < len(self.callbacks):
            raise wire.WireError(f"a call back of function {index!r}, which the judge never handed over")
        try:
            reply = wire.Reply(False, self.callbacks[index](*decode(args), **decode(kwargs)))
        except Exception as error:  # noqa: BLE001 - the judge's function raised: the student's code sees it
            reply = wire.Reply(True, error)
        try:
            payload = self._pickled(reply)
        except Exception as error:  # noqa: BLE001
            payload = self._pickled(wire.Reply(True, RuntimeError(f"{type(error).__name__}: {error}")))
        wire.send(self.process.stdin.fileno(), payload)

    def _pickled(self, message) -> bytes:
        buffer = io.BytesIO()
        _Pickler(buffer, self).dump(message)
        return buffer.getvalue()

    def surface(self, name: str) -> Callable:
        """A surface function the worker returned as a value: its proxy here."""
        return proxy(self, name)


class _Pickler(pickle.Pickler):
    """The judge's arguments for the worker: proxies go back as names, the judge's own functions as
    call-backs, JAX arrays as host data with their platform."""

    def __init__(self, file, owner: Worker):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.owner = owner

    def reducer_override(self, obj):
        found = owner_of(obj) if callable(obj) else None
        if found is not None:
            return worker.restore_surface, (found[1],)
        kind = type(obj)
        if getattr(obj, "__module__", None) == worker.__name__:  # the worker's own rebuilders, by name
            return NotImplemented
        if _traced(obj):
            raise NotShippable(
                f"a {kind.__module__}.{kind.__qualname__} cannot be sent to the submission's worker: "
                "tracing or compiling a graded submission's function happens in its worker"
            )
        if kind.__module__.startswith(("jax", "jaxlib")) and hasattr(obj, "addressable_shards"):
            import numpy as np

            return worker.restore_jax, (np.asarray(obj), next(iter(obj.devices())).platform)
        if isinstance(obj, (types.FunctionType, types.MethodType, functools.partial)) or (
            callable(obj) and kind.__name__ in ("PjitFunction", "CompiledFunction", "OptimizedModule")
        ):
            if (getattr(obj, "__module__", None) or "").split(".")[0] not in LIBRARIES or kind.__name__ in (
                "PjitFunction",
                "OptimizedModule",
            ):
                self.owner.callbacks.append(obj)
                return worker.restore_callback, (len(self.owner.callbacks) - 1,)
        return NotImplemented


def _length(path) -> int:
    """The size of the worker's log, what its pipes hold drained first (0 where there is none yet)."""
    drained(path)
    try:
        return os.stat(path).st_size
    except (OSError, TypeError):
        return 0


LOG_BYTES = 16 * 1024**2  # what a log keeps of its workers' standard error; the rest is read and dropped
_PIPES: dict[str, list[int]] = {}  # a log's path -> the read ends of its workers' standard error
_DRAINING = threading.Lock()


def stderr_into(path) -> int:
    """The write end of a pipe for a worker's standard error, drained into the log at ``path`` by the
    judge: the worker holds the pipe, never the file, whose path (/proc/self/fd shows it) names the
    grader's scratch folder. The caller closes the write end once the worker holds it."""
    read, write = os.pipe()
    os.set_blocking(read, False)
    with _DRAINING:
        _PIPES.setdefault(str(path), []).append(read)
    threading.Thread(target=_drain, args=(str(path), read), daemon=True).start()
    return write


def drained(path) -> None:
    """Everything the workers of the log at ``path`` wrote so far, in the log (a call's last words are
    measured from here, so none of an earlier call's output is ever quoted as this one's)."""
    with _DRAINING:
        for fd in list(_PIPES.get(str(path), [])):
            _move(str(path), fd)


def _drain(path: str, fd: int) -> None:
    while True:
        try:
            select.select([fd], [], [], 1.0)
        except (OSError, ValueError):  # closed by _move at its end
            return
        with _DRAINING:
            if fd not in _PIPES.get(path, []) or not _move(path, fd):
                return


def _move(path: str, fd: int) -> bool:
    """What the pipe ``fd`` holds now, appended to ``path`` (within LOG_BYTES); False at its end."""
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            break
        except OSError:
            chunk = b""
        if not chunk:
            _PIPES[path].remove(fd)
            os.close(fd)
            _append(path, b"".join(chunks))
            return False
        chunks.append(chunk)
    _append(path, b"".join(chunks))
    return True


def _append(path: str, data: bytes) -> None:
    if not data:
        return
    with open(path, "ab") as log:
        room = LOG_BYTES - log.tell()
        if room > 0:
            log.write(data[:room])


def _grad_enabled() -> bool:
    torch = sys.modules.get("torch")
    return torch.is_grad_enabled() if torch is not None else True


def _jax_traced(tree) -> bool:
    jax_core = sys.modules.get("jax._src.core")
    if jax_core is None:
        return False
    import jax

    return any(isinstance(leaf, jax_core.Tracer) for leaf in jax.tree_util.tree_leaves(tree))


def _spec(leaf):
    import jax

    if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
        return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype)
    return leaf


STABLE_TARGETS_EXTRA = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape")


def _checked_export(exported):
    """``exported``, refused (WireError) where its program calls a custom target JAX does not
    guarantee stable: a host callback's target carries a pointer into the process that made it."""
    import re

    try:
        from jax._src.export._export import _CUSTOM_CALL_TARGETS_GUARANTEED_STABLE as stable
    except ImportError:
        stable = set()
    targets = set(re.findall(r"custom_call\s*@([\w.$-]+)", exported.mlir_module()))
    targets |= set(re.findall(r'call_target_name\s*=\s*"([^"]+)"', exported.mlir_module()))
    unknown = sorted(targets - set(stable) - set(STABLE_TARGETS_EXTRA))
    if unknown:
        raise wire.WireError(f"the submission's exported program calls targets the judge does not run: {unknown}")
    return exported


def _count_compiles(graphs, programs) -> bool:
    """The worker's compiles during a call, added to this process's counters (stackcheck.evidence.compiles
    reads them): Dynamo's graphs and XLA's compile events, as the worker measured them."""
    if not isinstance(graphs, int) or not isinstance(programs, int) or graphs < 0 or programs < 0:
        raise wire.WireError("compile counts are not counts")
    if graphs and "torch._dynamo" in sys.modules:
        from torch._dynamo.utils import counters

        counters["stats"]["unique_graphs"] += graphs
    if programs and "jax" in sys.modules:
        import jax.monitoring
        from jax._src.dispatch import BACKEND_COMPILE_EVENT

        for _ in range(min(programs, 1000)):
            jax.monitoring.record_event_duration_secs(BACKEND_COMPILE_EVENT, 0.0)
    return bool(graphs or programs)


def _traced(obj) -> bool:
    jax_core = sys.modules.get("jax.core") or sys.modules.get("jax._src.core")
    if jax_core is not None and isinstance(obj, getattr(jax_core, "Tracer", ())):
        return True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor) and type(obj) not in (torch.Tensor, torch.nn.Parameter)


def _copy_into(arg, data: memoryview) -> None:
    """What the worker's call wrote into an argument (``out=``, in place), into the judge's copy."""
    if type(arg).__module__ == "numpy":
        import numpy as np

        if len(data) != arg.nbytes or not arg.flags.c_contiguous or not arg.flags.writeable:
            raise wire.WireError("written memory that does not fit its argument")
        np.copyto(arg, np.frombuffer(data, dtype=arg.dtype).reshape(arg.shape))
        return
    import torch

    memory = torch.empty(0, dtype=torch.uint8, device=arg.device).set_(arg.untyped_storage())
    if len(data) != memory.numel():
        raise wire.WireError("written memory that does not fit its argument")
    with torch.no_grad():
        memory.copy_(torch.frombuffer(bytearray(data), dtype=torch.uint8))


def _borrowing(error: BaseException, name: str) -> BaseException:
    """A call into one of the suite's solutions, which the worker sees stripped (integrity.stripped_solutions),
    as contract.Borrowed naming it (``source``): the student's function earns nothing."""
    said = str(error)
    if not isinstance(error, NotImplementedError) or not said.startswith(integrity.STRIPPED):
        return error
    source = said.removeprefix(integrity.STRIPPED).split(",", 1)[0]
    borrowed = contract.Borrowed(
        f"borrowed: {name} (course §{_section(name)}) called {source}, the suite's own solution; it earns no "
        "points until it is your own work"
    )
    borrowed.source, borrowed.student = source, name
    return borrowed


def _section(name: str) -> str:
    task = contract.TASKS.get(name)
    return task.section if task else "?"


_COMPILE = contextvars.ContextVar("stackcheck_compile_in_worker", default=None)  # torch.compile's options


def compiled(fn: Callable, **options) -> Callable:
    """``torch.compile(fn, **options)``; where ``fn`` is a graded submission's function, a call of it
    that the worker compiles there (its compiles counted as the worker measured them): the judge
    never holds the code to compile, and compiling its proxy would only run the function eagerly."""
    if owner_of(fn) is None:
        import torch

        return torch.compile(fn, **options)

    def call(*args, **kwargs):
        __tracebackhide__ = True
        token = _COMPILE.set(options)
        try:
            return fn(*args, **kwargs)
        finally:
            _COMPILE.reset(token)

    return call


def proxy(owner: Worker, name: str) -> Callable:
    """The student's ``name``, run in the worker."""

    def call(*args, **kwargs):
        __tracebackhide__ = True
        return owner.call(name, args, kwargs)

    call.__name__ = call.__qualname__ = name
    call.__stackcheck_remote__ = name
    call.__stackcheck_worker__ = owner
    call.__stackcheck_evidence__ = functools.partial(_evidence, owner, name)
    torch = sys.modules.get("torch")
    return torch.compiler.disable(call) if torch is not None else call


# JAX helpers that read a compiled program: the judge compiles the worker's export itself and takes
# from the worker only these keys, read from the jaxpr (stackcheck.toolchains.ir).
JAX_PROGRAM_HELPERS = {"jax_stages": ("jaxpr",), "jax_counts": ("nodes",)}


def _evidence(owner: Worker, name: str, helper: Callable, *args, **kwargs):
    if helper.__name__ in JAX_PROGRAM_HELPERS and not kwargs:
        return owner.jax_program(helper, name, args)
    if helper.__name__ == "eager_ops" and args and all(type(a).__name__ == "Tensor" for a in args):
        return owner.eager_ops(helper, name, args, kwargs)
    return owner.evidence(helper, name, args, kwargs)


def owner_of(fn) -> tuple[Worker, str] | None:
    """(worker, surface name) where ``fn`` is a proxy (or the contract's wrapper of one), else None."""
    while fn is not None:
        owner = getattr(fn, "__stackcheck_worker__", None)
        if owner is not None:
            return owner, fn.__stackcheck_remote__
        fn = getattr(fn, "__wrapped__", None)
    return None


def evidence(helper: Callable, fn, *args, **kwargs):
    """``helper(fn, *args, **kwargs)``: here, or in the worker where ``fn`` is a graded submission's
    function (what the helper reads, a dispatch mode or a trace, needs the function in its process).
    What comes back is the helper's data as the worker measured it."""
    found = owner_of(fn)
    if found is None:
        return helper(fn, *args, **kwargs)
    owner, name = found
    return owner.evidence(helper, name, args, kwargs)


def stand_in(owner: Worker, names: list[str], file: str, module_name: str) -> ModuleType:
    """A module object of proxies for the surface names the submission defines: what the judge's
    ``Impl`` treats as the student's module."""
    module = ModuleType(f"stackcheck_remote_{module_name}")
    module.__file__ = file
    for name in names:
        fn = proxy(owner, name)
        fn.__module__ = module.__name__
        setattr(module, name, fn)
    return module
