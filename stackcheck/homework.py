"""Homework: which surface functions each part assigns, the starter a student gets, what each
function must return, and the score (course sections in every message).

A part names a test folder and the surface functions whose tests it grades. In homework mode
(``--homework DIR`` or ``--impl FILE --strict-impl``) the assigned names come from the student's
file only: a missing one is a stub that raises NotImplementedError, never the reference.
"""

from __future__ import annotations

import inspect
import numbers
import sys
import textwrap
from dataclasses import dataclass
from typing import Callable

from stackcheck import reference

TIMEOUT_S = 60.0  # per test, in homework mode, unless pytest-timeout's --timeout says otherwise


class NotAttempted(NotImplementedError):
    """An assigned function the student has not written (a stub, or a name the file lacks)."""


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
PARTS = {"math": "tests_math", "ir": "tests_ir", "runtime": "tests_runtime", "kernels": "tests_kernels"}


def assigned(parts: tuple[str, ...] | list[str]) -> frozenset[str]:
    """The surface names ``parts`` assign ("all" for every part)."""
    chosen = set(PARTS) if "all" in parts else set(parts)
    unknown = chosen - set(PARTS)
    if unknown:
        raise ValueError(f"unknown part(s) {sorted(unknown)}; choose from {sorted(PARTS)} or all")
    return frozenset(t.name for t in TASKS.values() if t.part in chosen)


def folders(parts) -> list[str]:
    return [folder for part, folder in PARTS.items() if "all" in parts or part in parts]


BASE_STACKS = ("numpy", "torch", "torch_compile", "jax")  # every part's tests run on these


def stack_runs(stack: str, names: frozenset[str]) -> bool:
    """Whether a homework of ``names`` runs the tests of ``stack``: the base stacks always (the
    runtime's and the IR's tests use them too); MAX, Mojo and Triton only when one of their own
    functions is assigned (else they would grade nothing and cost minutes of compiles)."""
    return stack in BASE_STACKS or any(TASKS[n].stack == stack for n in names)


def not_attempted(name: str) -> Callable:
    task = TASKS[name]

    def stub(*args, **kwargs):
        raise NotAttempted(f"§{task.section}: {name} is not written yet")

    stub.__name__ = name
    return stub


def compiling() -> bool:
    """Whether torch.compile is tracing this call: the homework's bookkeeping and checks step
    aside, since a side effect in traced code becomes a guard (a recompile on every call)."""
    torch = sys.modules.get("torch")
    return torch is not None and torch.compiler.is_compiling()


def checked(name: str, fn: Callable) -> Callable:
    """``fn`` with its return value checked against the surface contract (homework feedback)."""
    task = TASKS.get(name)
    if task is None or task.check is _anything:
        return fn

    def call(*args, **kwargs):
        value = fn(*args, **kwargs)
        if not compiling() and not task.check(value):
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


# ---- the starter --------------------------------------------------------------------------


def stub_source(parts: list[str]) -> str:
    """homework.py for ``parts``: every assigned function as a stub that states its contract."""
    chosen = assigned(parts)
    names = [n for n in TASKS if n in chosen]
    lines = [
        '"""Week 02 homework: Y = ReLU(X @ W + b) on every stack (stackcheck homework).',
        "",
        "Write each function below; its docstring is the whole contract, checks included.",
        "Grade yourself:  python -m pytest --homework .   (from the stackcheck checkout: --homework DIR)",
        '"""',
        "import numpy as np",
        "",
        f"ASSIGNED = {tuple(sorted(set(parts)))!r}  # written by `stackcheck homework init`; do not edit",
        "",
    ]
    for name in names:
        fn = getattr(reference, name)
        doc = textwrap.indent(inspect.getdoc(fn) or "", "    ")
        lines += [
            "",
            f"def {name}{inspect.signature(fn)}:",
            f'    """{doc.strip()}',
            '    """',
            f'    raise NotImplementedError("§{TASKS[name].section}: write {name}")',
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def stripped_reference(parts: list[str]) -> str:
    """stackcheck/reference.py with the assigned functions' bodies (and the private helpers only
    they use) replaced by stubs: the file an instructor ships so ``parts``' solutions stay out of
    the students' install. Homework mode never falls back to an assigned name, so grading works."""
    names = set(assigned(parts))
    helpers = {n for n in vars(reference) if n.startswith("_") and inspect.isfunction(getattr(reference, n))}
    users = {h: {n for n in TASKS if h in getattr(reference, n).__code__.co_names} for h in helpers}
    names |= {h for h, used_by in users.items() if used_by and used_by <= names}
    lines = inspect.getsource(reference).splitlines()
    for name in sorted(names, key=lambda n: -inspect.getsourcelines(getattr(reference, n))[1]):
        body, start = inspect.getsourcelines(getattr(reference, name))
        first, end = start - 1, start - 1 + len(body)
        keep = first + 1  # past the signature; and past the docstring, the contract, if there is one
        if getattr(reference, name).__doc__:
            while keep == first + 1 and lines[keep].strip() == '"""' or not lines[keep].rstrip().endswith('"""'):
                keep += 1
            keep += 1
        section = TASKS[name].section if name in TASKS else TASKS[sorted(users[name])[0]].section
        lines[keep:end] = [f'    raise NotImplementedError("§{section}: {name} is the students\' homework")']
    return "\n".join(lines) + "\n"
