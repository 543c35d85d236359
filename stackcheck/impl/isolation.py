"""A student's Triton kernel run by the CPU interpreter runs in a forked child process (course §11.2).

The interpreter hands a kernel raw host pointers. A kernel without its mask reads and writes past its
buffers, which corrupts the heap of the process it runs in; glibc then aborts it later, somewhere else
(in Dynamo's compiler, in the reproduction of issue 23). In a child, that damage dies with the child:
the call fails with a message naming the function, and the run and the other scores survive.

Only CPU calls are moved: a CUDA context does not survive a fork, and the compiled GPU kernel reports
an illegal address as an exception anyway. What crosses back: the return value, the exception (its
type and message, with the child's traceback as a note), the whole memory of the tensors the call
wrote into (``out=`` and the storage around it), the grids it launched
(stackcheck.toolchains.triton_kernels.recorded_launches) and the ATen ops it ran
(stackcheck.toolchains.inductor.eager_ops)."""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import sys
import time
import traceback
import warnings

# surface functions whose student versions launch Triton kernels of their own
KERNEL_FUNCTIONS = frozenset({"triton_bias_relu", "triton_forward"})
# one call; the suite's longest test of a student kernel takes about a second in all, its kernels launched
# twice (the student's run, then the judge's replay, stackcheck.impl.kernel_source), slower on a loaded machine
LIMIT_S = 30.0


class Crashed(RuntimeError):
    """The student's function killed the process it ran in (a signal, or exit without returning)."""


def applies(name: str, args: tuple, kwargs: dict) -> bool:
    """Whether the call of surface function ``name`` runs in a child: a kernel function given only host
    tensors, where the OS can fork."""
    if name not in KERNEL_FUNCTIONS:  # first: a forward traced by torch.compile reads no more
        return False
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(os, "fork"):
        return False
    tensors = [v for v in (*args, *kwargs.values()) if isinstance(v, torch.Tensor)]
    return all(t.device.type == "cpu" for t in tensors)


def call(name: str, section: str, fn, args: tuple, kwargs: dict):
    """``fn(*args, **kwargs)`` run in a forked child; its result, or its exception, raised here."""
    __tracebackhide__ = True
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():  # JAX warns at every fork; the child never touches JAX
        warnings.filterwarnings("ignore", "os.fork", RuntimeWarning)
        pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        os.close(read_end)
        _child(fn, args, kwargs, write_end)
    os.close(write_end)
    try:
        message = _read(read_end, time.monotonic() + LIMIT_S)
    finally:  # the answer is in, or it never came (a crash, a hang, the per-test timeout): the child goes
        os.close(read_end)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        status = os.waitpid(pid, 0)[1]
    if message is None:
        raise Crashed(_crash_text(name, section, status))
    with _unrecorded():
        kind, payload, written, launched = pickle.loads(message)
        _copy_back(args, kwargs, written)
    for recording, grids in zip(_recordings(), launched):
        recording.extend(grids)
    if kind == "raise":
        raise payload
    return _resolve(payload, args, kwargs)


def _read(fd: int, deadline: float) -> bytes | None:
    """The child's length-prefixed answer, or None if it died or the deadline passed first. The
    length says when it is complete: a child whose heap the kernel corrupted may hang while it frees
    memory afterwards (glibc waits on a lock word the kernel overwrote), and need not be waited for."""
    data = b""
    while time.monotonic() < deadline:
        if select.select([fd], [], [], min(1.0, max(0.0, deadline - time.monotonic())))[0]:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None  # closed without an answer: it died
            data += chunk
            if len(data) >= 8 and len(data) - 8 >= int.from_bytes(data[:8], "little"):
                return data[8:]
    return None


def _child(fn, args, kwargs, fd: int) -> None:
    import faulthandler

    import torch

    faulthandler.disable()  # the parent says what happened, once; not a dump of the child's stacks
    torch.set_num_threads(1)  # an OpenMP pool does not survive a fork; one thread needs none
    with _unrecorded():  # the child's own bookkeeping is not the call's
        tensors = _tensors(args, kwargs)
        memories = storage_memories(tensors)
        before = [m.clone() for m in memories]
        launches_before = [len(r) for r in _recordings()]
    try:
        try:
            value = fn(*args, **kwargs)
            same = [i for i, (_, t) in enumerate(tensors) if value is t]
            result = ("return", ("arg", same[0]) if same else ("value", value))
        except BaseException as error:  # noqa: BLE001 - every failure crosses back to the test
            result = ("raise", _portable(error))
        with _unrecorded():
            written = {i: m for i, (m, old) in enumerate(zip(memories, before)) if not torch.equal(m, old)}
            launched = [r[n:] for r, n in zip(_recordings(), launches_before)]
            data = pickle.dumps((*result, written, launched))
    except BaseException as error:  # noqa: BLE001 - a result that cannot cross: say so
        data = pickle.dumps(("raise", RuntimeError(f"its result cannot be returned: {error}"), {}, []))
    with os.fdopen(fd, "wb") as pipe:
        pipe.write(len(data).to_bytes(8, "little") + data)
    os._exit(0)


def _unrecorded():
    """A block whose torch ops no recording sees (an eager_ops dispatch mode, inherited by the child)."""
    from torch.utils._python_dispatch import _disable_current_modes

    return _disable_current_modes()


def _recordings() -> list[list]:
    """The recordings open in this process, which what the child did must reach: Triton launches
    (the ``launches`` fixture's) and eager ATen ops (``inductor.eager_ops``), so a test reads the same
    evidence of a call run here or in the child."""
    from stackcheck.toolchains import inductor, triton_kernels

    return [*triton_kernels.RECORDING, *inductor.RECORDING]


def _tensors(args: tuple, kwargs: dict) -> list:
    import torch

    keyed = [*enumerate(args), *kwargs.items()]
    return [(key, v) for key, v in keyed if isinstance(v, torch.Tensor) and not v.requires_grad]


def storage_memories(tensors: list) -> list:
    """The whole memory of each (key, tensor), once per storage, as bytes on its device: a store past a
    view's end lands in its storage (a canary around ``out=``), and must reach the caller's copy too."""
    import torch

    seen, memories = set(), []
    for _, t in tensors:
        storage = t.untyped_storage()
        if storage.data_ptr() not in seen:
            seen.add(storage.data_ptr())
            memories.append(torch.empty(0, dtype=torch.uint8, device=t.device).set_(storage))
    return memories


def _portable(error: BaseException) -> BaseException:
    """``error`` with the child's traceback as a note, or a RuntimeError naming it where it cannot be pickled."""
    error.add_note("".join(traceback.format_exception(error)).rstrip())
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:  # noqa: BLE001 - an exception class pickle cannot rebuild
        return RuntimeError(f"{type(error).__name__}: {error}\n" + "\n".join(getattr(error, "__notes__", [])))


def _copy_back(args: tuple, kwargs: dict, written: dict) -> None:
    memories = storage_memories(_tensors(args, kwargs))
    for index, value in written.items():
        memories[index].copy_(value)


def _resolve(payload, args: tuple, kwargs: dict):
    kind, value = payload
    if kind == "arg":  # it returned one of its arguments (out=): the caller's object, not a copy
        key = _tensors(args, kwargs)[value][0]
        return args[key] if isinstance(key, int) else kwargs[key]
    return value


def _crash_text(name: str, section: str, status: int) -> str:
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
        how = f"did not answer within {LIMIT_S:g} s (a hang, or a heap the kernel corrupted)"
    elif os.WIFSIGNALED(status):
        how = f"was killed by {signal.Signals(os.WTERMSIG(status)).name}"
    else:
        how = f"exited with code {os.WEXITSTATUS(status)} without returning"
    return (
        f"{name} (course §{section}) crashed: the process it ran in {how}. A kernel that loads or stores "
        "past its buffers (a missing mask, §11.2) does this under the Triton interpreter"
    )
