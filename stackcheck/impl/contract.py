"""What every surface function must return (course sections in every message): the task table, the
return-value checks wrapped around a student's functions, and the stub of a function not written."""

from __future__ import annotations

import numbers
import sys
from dataclasses import dataclass
from typing import Callable

from stackcheck.impl import isolation

TIMEOUT_S = 60.0  # per test, in homework mode, unless pytest-timeout's --timeout says otherwise
# per test that waits for a MAX graph compile (marked max_graph), in homework mode: a cold sm_90
# compile of the student's Mojo package took 22-68 s on the 2-core CI machine, and is not their code
COMPILE_TIMEOUT_S = 900.0
# per test of torch.compile (marked torch_compile), in homework mode: a cold Inductor compile of a
# correct torch_compiled_forward ran past 60 s on the H200's 16-core host while other tests and a
# second grading job ran, and the solution scored 80 % for work that was right
TORCH_COMPILE_TIMEOUT_S = 300.0


def shape_spelled(shape) -> str:
    """A regex for ``shape`` in any common spelling of an error message, since the contract asks a
    message to name the shape, not to format it one way: [2, 3], (2, 3), [2,3], torch.Size([2, 3]),
    2x3 and 2 x 3; (5,) and [5] for one dimension."""
    dims = [str(int(d)) for d in shape]
    listed = r"\s*,\s*".join(dims) + r"\s*,?"
    forms = [rf"[\[(]\s*{listed}\s*[\])]"]
    if len(dims) > 1:
        forms.append(r"\b" + r"\s*[x×]\s*".join(dims) + r"\b")
    return "(?:" + "|".join(forms) + ")"


class NotAttempted(NotImplementedError):
    """An assigned function the student has not written (a stub, or a name the file lacks)."""


class Borrowed(Exception):
    """An assigned function whose work is the suite's own solution (stackcheck.impl.integrity): it
    earns nothing, whatever it returns."""


class TimedOut(Exception):
    """An assigned function that already ran past the per-test timeout in this run."""


class ReturnError(TypeError):
    """A surface function returned something of the wrong kind; the message says what it must return."""


def _array(value) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def _arrays(count: int) -> Callable[[object], bool]:
    return lambda v: isinstance(v, (tuple, list)) and len(v) == count and all(_array(x) for x in v)


def _scalar(value) -> bool:
    return isinstance(value, numbers.Real) or (_array(value) and getattr(value, "ndim", 1) == 0)


def _loss_and_grads(value) -> bool:
    return isinstance(value, (tuple, list)) and len(value) == 2 and _arrays(3)(value[1])


def _seconds(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and value >= 0


def _anything(value) -> bool:
    return True


@dataclass(frozen=True)
class Task:
    name: str
    part: str  # math | ir | runtime | kernels
    section: str  # where the course teaches it
    stack: str | None  # the stack whose tests run it (None: every stack's tests)
    returns: str  # what it must return, as the message says it
    check: Callable[[object], bool]


TASKS = {
    t.name: t
    for t in (
        Task("check_operands", "math", "2.1", None, "None (or raise ValueError)", _anything),
        Task("numpy_steps", "math", "2.2", "numpy", "(A, Z, Y): a tuple of 3 arrays", _arrays(3)),
        Task("numpy_forward", "math", "2.2", "numpy", "Y: one array", _array),
        Task("broadcast_bias", "math", "2.3", None, "an [n, M] array view", _array),
        Task("torch_steps", "math", "8.1", "torch", "(A, Z, Y): a tuple of 3 tensors", _arrays(3)),
        Task("torch_forward", "math", "8.1", "torch", "Y: one tensor", _array),
        Task("torch_broadcast_bias", "math", "2.3", None, "an [n, M] tensor view", _array),
        Task("w_from_linear", "math", "2.1", None, "W[K, M]: one tensor", _array),
        Task("torch_compiled_forward", "math", "8.1", "torch_compile", "Y: one tensor", _array),
        Task("torch_grads", "math", "8.2", None, "(Y, loss, dX, dW, db): a tuple of 5 tensors", _arrays(5)),
        Task("jax_steps", "math", "9", "jax", "(A, Z, Y): a tuple of 3 arrays", _arrays(3)),
        Task("jax_forward", "math", "9", "jax", "Y: one array", _array),
        Task("jax_loss_and_grads", "math", "9.5", None, "(loss, (dX, dW, db))", _loss_and_grads),
        Task("sum_sequential", "math", "MC13", None, "one float32 scalar", _scalar),
        Task("sum_blocked", "math", "MC13", None, "one float32 scalar", _scalar),
        Task("max_steps", "ir", "10.3", "max", "(A, Z, Y): a tuple of 3 graph values", _arrays(3)),
        Task("jax_sync", "runtime", "6.3", None, "the value it waited for", _anything),
        Task("torch_sync", "runtime", "6.5", None, "None", _anything),
        Task("timed_call", "runtime", "6.5", None, "seconds: one float >= 0", _seconds),
        Task(
            "steady_state",
            "runtime",
            "6.5",
            None,
            "a list of floats (seconds)",
            lambda v: isinstance(v, (list, tuple)) and all(_seconds(x) for x in v),
        ),
        Task("triton_bias_relu", "kernels", "11.2", "triton", "Y: one tensor", _array),
        Task("triton_forward", "kernels", "11.4", "triton", "Y: one tensor", _array),
        Task("pallas_bias_relu", "kernels", "12.1", None, "Y: one array", _array),
        Task("mojo_relu", "kernels", "10.4", "mojo", "one graph value", _anything),
        Task("mojo_package", "kernels", "10.4", "mojo", "a path", _anything),
    )
}


STUBS_CALLED: set[str] = set()  # stubs called since the plugin last cleared it (each test's setup)
CALLED: dict[str, int] = {}  # calls of each --impl module function in this process (its ``checked`` wrapper)
RUNNING: list[str] = []  # the --impl module's surface functions running now, innermost last (integrity.tripwire)


def _stub_called(name: str, error: BaseException) -> None:
    """Record the call of stub ``name``, here and on ``error``: an error raised before the test ran
    (a MAX graph built when the session starts, a child process) is recorded again when it reaches
    the test (``recall_stubs``)."""
    STUBS_CALLED.add(name)
    error.stubs = (*getattr(error, "stubs", ()), name)


def recall_stubs(error: BaseException) -> None:
    """Record, for the test now running, the stubs whose calls raised ``error`` earlier."""
    STUBS_CALLED.update(getattr(error, "stubs", ()))


def not_attempted(name: str) -> Callable:
    """The stub of an assigned function the file lacks. Its call is recorded too, so a test that
    catches the NotAttempted it raises (inside ``pytest.raises``) still reads "not attempted"."""
    task = TASKS[name]

    def stub(*args, **kwargs):
        error = NotAttempted(f"§{task.section}: {name} is not written yet")
        _stub_called(name, error)
        raise error

    stub.__name__ = name
    return stub


def _failing(name: str, kind: type[Exception], message: str) -> Callable:
    """A function named ``name`` that raises ``kind(message)`` whenever it is called."""

    def stub(*args, **kwargs):
        raise kind(message)

    stub.__name__ = name
    return stub


def borrowed(name: str, source: str) -> Callable:
    """What stands for an assigned function that borrows ``source``: it fails every test that calls it."""
    said = f"borrowed: {name} (course §{TASKS[name].section}) uses {source}, the suite's own solution"
    return _failing(name, Borrowed, f"{said}; it earns no points until it is your own work")


def hung(name: str, seconds: float) -> Callable:
    """What stands for an assigned function once it has run past the per-test timeout: every later
    test that calls it fails at once, instead of waiting the timeout out again (partial credit for
    the rest of the submission survives one endless loop)."""
    said = f"{name} (course §{TASKS[name].section}) did not return within {seconds:g} s in an earlier test"
    return _failing(name, TimedOut, f"{said}; it is not called again in this run")


def compiling() -> bool:
    """Whether torch.compile is tracing this call: the homework's bookkeeping and checks step
    aside, since a side effect in traced code becomes a guard (a recompile on every call)."""
    torch = sys.modules.get("torch")
    return torch is not None and torch.compiler.is_compiling()


def checked(name: str, fn: Callable) -> Callable:
    """``fn`` with its return value checked against the surface contract (homework feedback), and
    its NotImplementedError (the starter's stub) recorded even where a test catches it."""
    task = TASKS.get(name)
    if task is None:
        return fn

    def call(*args, **kwargs):
        traced = compiling()  # bookkeeping in traced code would be a guard: a recompile on every call
        if not traced:
            CALLED[name] = CALLED.get(name, 0) + 1
            RUNNING.append(name)
        try:
            if isolation.applies(name, args, kwargs) and not hasattr(fn, "__stackcheck_remote__"):
                value = isolation.call(name, task.section, fn, args, kwargs)
            else:
                value = fn(*args, **kwargs)
        except NotImplementedError as error:
            _stub_called(name, error)
            raise
        finally:
            if not traced:
                RUNNING.pop()
        if task.check is not _anything and not compiling() and not task.check(value):
            raise ReturnError(
                f"{name} returned {_describe(value)}; it must return {task.returns} (course §{task.section})"
            )
        return value

    call.__name__ = name
    call.__wrapped__ = fn
    return call


def _describe(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}: ({', '.join(type(v).__name__ for v in value)})"
    return f"a {type(value).__module__}.{type(value).__qualname__}"
