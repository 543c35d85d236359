"""What every surface function must return (course sections in every message): the task table, the
return-value checks wrapped around a student's functions, and the stub of a function not written."""

from __future__ import annotations

import functools
import numbers
import os
import sys
from dataclasses import dataclass
from typing import Callable

from stackcheck.impl import isolation, kernel_source

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


@dataclass(frozen=True)
class ArrayType:
    """The array type of one stack, looked up only where its module is imported already: a value of a
    stack whose module was never imported cannot be one of its arrays."""

    module: str
    attribute: str

    @property
    def spelled(self) -> str:
        return f"{self.module}.{self.attribute}"

    def holds(self, value) -> bool:
        kind = getattr(sys.modules.get(self.module), self.attribute, None)
        return kind is not None and isinstance(value, kind)


ARRAY_TYPES = {
    "numpy": ArrayType("numpy", "ndarray"),
    "torch": ArrayType("torch", "Tensor"),
    "jax": ArrayType("jax", "Array"),  # a tracer is one too: the checks hold inside jax.jit and jax.grad
    "max": ArrayType("max.graph", "TensorValue"),
}

# What a surface function returns, as a template: ARRAY is an array of the task's stack, a tuple a
# tuple (or list) of that many, [SECONDS] a list of any length, None None itself.
ARRAY, SCALAR, SECONDS, PATH, ANYTHING = "array", "scalar", "seconds", "path", "anything"


def _fits(value, form, array: ArrayType) -> bool:
    """Whether ``value`` has the form ``form`` (a template of the task table), its arrays of type ``array``."""
    if form is None:
        return value is None
    if isinstance(form, tuple):
        return (
            isinstance(value, (tuple, list))
            and len(value) == len(form)
            and all(_fits(v, f, array) for v, f in zip(value, form))
        )
    if isinstance(form, list):
        return isinstance(value, (tuple, list)) and all(_fits(v, form[0], array) for v in value)
    if form == ARRAY:
        return array.holds(value)
    if form == SCALAR:  # a float32 scalar: a number, or a 0-d array of the task's stack
        real = isinstance(value, numbers.Real) and not isinstance(value, bool)
        return real or (array.holds(value) and getattr(value, "ndim", None) == 0)
    if form == SECONDS:
        return isinstance(value, numbers.Real) and not isinstance(value, bool) and value >= 0
    if form == PATH:  # in a graded run, the package's files (the worker reads them: mojo_source)
        return isinstance(value, (str, os.PathLike)) or type(value).__name__ == "Shipped"
    return form == ANYTHING


def _leaves(value, form) -> list:
    """The values of ``value`` that stand where ``form`` has ARRAY."""
    if isinstance(form, (tuple, list)) and isinstance(value, (tuple, list)):
        forms = form if isinstance(form, tuple) else form * len(value)
        return [leaf for v, f in zip(value, forms) for leaf in _leaves(v, f)]
    return [value] if form == ARRAY else []


@dataclass(frozen=True)
class Task:
    name: str
    part: str  # math | ir | runtime | kernels
    section: str  # where the course teaches it
    stack: str | None  # the stack whose tests run it (None: every stack's tests)
    returns: str  # what it must return, as the message says it
    form: object  # the same as a template (ARRAY, SCALAR, ..., tuples and lists of them, None)
    array: str | None = None  # the stack whose array type (ARRAY_TYPES) its arrays are

    def refusal(self, value, args: tuple = (), kwargs: dict | None = None) -> str | None:
        """Why ``value``, returned for ``args`` and ``kwargs``, breaks this task's contract, or None:
        the wrong form, an array of another stack, or a tensor off the inputs' device (torch)."""
        array = ARRAY_TYPES.get(self.array, _NO_ARRAY)
        said = f"it must return {self.returns} (course §{self.section})"
        if not _fits(value, self.form, array):
            return f"{self.name} returned {_describe(value)}; {said}"
        device = _input_device(args, kwargs or {}) if self.array == "torch" else None
        off = [leaf.device for leaf in _leaves(value, self.form) if device is not None and leaf.device != device]
        if off:
            return f"{self.name} returned a torch.Tensor on {off[0]} for inputs on {device}; {said}"
        return None


_NO_ARRAY = ArrayType("", "")  # a task that returns no array: nothing is one


def _input_device(args: tuple, kwargs: dict):
    """The device of a surface function's first torch input: a tensor, or a module's first parameter
    (w_from_linear's Linear); None if it has none."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            return value.device
        if isinstance(value, torch.nn.Module):
            return next((p.device for p in value.parameters()), None)
    return None


TASKS = {
    t.name: t
    for t in (
        Task("check_operands", "math", "2.1", None, "None (or raise ValueError)", None),
        Task("numpy_steps", "math", "2.2", "numpy", "(A, Z, Y): a tuple of 3 numpy.ndarray", (ARRAY,) * 3, "numpy"),
        Task("numpy_forward", "math", "2.2", "numpy", "Y: one numpy.ndarray", ARRAY, "numpy"),
        Task("broadcast_bias", "math", "2.3", None, "an [n, M] numpy.ndarray view", ARRAY, "numpy"),
        Task(
            "torch_steps",
            "math",
            "8.1",
            "torch",
            "(A, Z, Y): a tuple of 3 torch.Tensor on the inputs' device",
            (ARRAY,) * 3,
            "torch",
        ),
        Task("torch_forward", "math", "8.1", "torch", "Y: one torch.Tensor on the inputs' device", ARRAY, "torch"),
        Task("torch_broadcast_bias", "math", "2.3", None, "an [n, M] torch.Tensor view of b", ARRAY, "torch"),
        Task("w_from_linear", "math", "2.1", None, "W[K, M]: one torch.Tensor on the Linear's device", ARRAY, "torch"),
        Task(
            "torch_compiled_forward",
            "math",
            "8.1",
            "torch_compile",
            "Y: one torch.Tensor on the inputs' device",
            ARRAY,
            "torch",
        ),
        Task(
            "torch_grads",
            "math",
            "8.2",
            None,
            "(Y, loss, dX, dW, db): a tuple of 5 torch.Tensor on the inputs' device",
            (ARRAY,) * 5,
            "torch",
        ),
        Task("jax_steps", "math", "9", "jax", "(A, Z, Y): a tuple of 3 jax.Array", (ARRAY,) * 3, "jax"),
        Task("jax_forward", "math", "9", "jax", "Y: one jax.Array", ARRAY, "jax"),
        Task(
            "jax_loss_and_grads",
            "math",
            "9.5",
            None,
            "(loss, (dX, dW, db)), each a jax.Array",
            (ARRAY, (ARRAY,) * 3),
            "jax",
        ),
        Task(
            "sum_sequential",
            "math",
            "MC13",
            None,
            "one float32 scalar (numpy.float32, a 0-d numpy.ndarray or a float)",
            SCALAR,
            "numpy",
        ),
        Task(
            "sum_blocked",
            "math",
            "MC13",
            None,
            "one float32 scalar (numpy.float32, a 0-d numpy.ndarray or a float)",
            SCALAR,
            "numpy",
        ),
        Task(
            "max_steps",
            "ir",
            "10.3",
            "max",
            "(A, Z, Y): a tuple of 3 graph values (max.graph.TensorValue)",
            (ARRAY,) * 3,
            "max",
        ),
        Task("jax_sync", "runtime", "6.3", None, "the value it waited for", ANYTHING),
        Task("torch_sync", "runtime", "6.5", None, "None", None),
        Task("timed_call", "runtime", "6.5", None, "seconds: one float >= 0", SECONDS),
        Task("steady_state", "runtime", "6.5", None, "a list of floats (seconds)", [SECONDS]),
        Task("triton_bias_relu", "kernels", "11.2", "triton", "Y: one torch.Tensor on A's device", ARRAY, "torch"),
        Task(
            "triton_forward", "kernels", "11.4", "triton", "Y: one torch.Tensor on the inputs' device", ARRAY, "torch"
        ),
        Task("pallas_bias_relu", "kernels", "12.1", None, "Y: one jax.Array", ARRAY, "jax"),
        Task("mojo_relu", "kernels", "10.4", "mojo", "one graph value (max.graph.TensorValue)", ARRAY, "max"),
        Task("mojo_package", "kernels", "10.4", "mojo", "a path (str or pathlib.Path)", PATH),
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


def compiling(name: str = "") -> bool:
    """Whether torch.compile is tracing this call (of surface function ``name``): the homework's
    bookkeeping and checks step aside, since a side effect in traced code becomes a guard (a
    recompile on every call). A torch function ("torch_...") finds torch by an import, which Dynamo
    reads as the module; a lookup in sys.modules it would trace by wrapping all of sys.modules
    (1,500 entries once torch and JAX are in) and guarding on it, in every trace."""
    if name.startswith("torch_"):
        try:
            import torch
        except ImportError:
            return False
    else:
        torch = sys.modules.get("torch")
    return torch is not None and torch.compiler.is_compiling()


def checked(name: str, fn: Callable) -> Callable:
    """``fn`` with its return value checked against the surface contract (homework feedback), and
    its NotImplementedError (the starter's stub) recorded even where a test catches it."""
    task = TASKS.get(name)
    if task is None:
        return fn

    def call(*args, **kwargs):
        traced = compiling(name)  # bookkeeping in traced code would be a guard: a recompile on every call
        if not traced:
            CALLED[name] = CALLED.get(name, 0) + 1
            RUNNING.append(name)
        try:
            run = _as_judged(name, fn)
            if isolation.applies(name, args, kwargs) and not hasattr(fn, "__stackcheck_remote__"):
                value = isolation.call(name, task.section, run, args, kwargs)
            else:
                value = run(*args, **kwargs)
        except NotImplementedError as error:
            _stub_called(name, error)
            raise
        finally:
            if not traced:
                RUNNING.pop()
        refused = None if compiling(name) else task.refusal(value, args, kwargs)
        if refused:
            raise ReturnError(refused)
        return value

    call.__name__ = name
    call.__wrapped__ = fn
    return call


def _as_judged(name: str, fn: Callable) -> Callable:
    """A kernel function run here (not in a graded run's worker) as the grader runs it
    (stackcheck.impl.kernel_source.judged_call); any other function as it is."""
    remote = hasattr(fn, "__stackcheck_remote__")
    if name not in kernel_source.KERNEL_FUNCTIONS or remote or "triton" not in sys.modules:
        return fn
    return functools.partial(kernel_source.judged_call, name, fn)


def _type_name(value) -> str:
    """A stack's array type as the course spells it (numpy.ndarray, jax.Array), else the value's class."""
    known = next((a.spelled for a in ARRAY_TYPES.values() if a.holds(value)), None)
    return known or f"{type(value).__module__}.{type(value).__qualname__}".removeprefix("builtins.")


def _types(value) -> str:
    """The types in ``value``, tuples and lists opened: (numpy.ndarray, (jax.Array, NoneType))."""
    if isinstance(value, (tuple, list)):
        return f"({', '.join(_types(v) for v in value)})"
    return _type_name(value)


def _describe(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}: {_types(value)}"
    return f"a {_type_name(value)}"
