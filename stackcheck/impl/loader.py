"""``--impl MODULE``: swap in another implementation of some or all reference names."""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import os
import sys
import types
from types import ModuleType

from stackcheck.evidence import timing
from stackcheck.impl import contract, reference

SURFACE = tuple(
    name
    for name in dir(reference)
    if not name.startswith("_")
    and callable(getattr(reference, name))
    and getattr(getattr(reference, name), "__module__", "") == reference.__name__
)


class ImplError(Exception):
    """``--impl`` names something that cannot be imported; the message is one line."""


JUDGE = "STACKCHECK_GRADED_JUDGE"  # set in a graded run's judge, so in every process it starts


def load_module(spec: str) -> ModuleType:
    """Import ``spec``: a dotted module name or a path to a .py file (a student's homework).

    Every way this can go wrong (no such file, a folder, a syntax error, an import that raises)
    is an ImplError whose message is one line naming the file and line where it can."""
    as_path = spec.endswith(".py") or os.sep in spec or os.path.exists(spec)
    if as_path and os.environ.get(JUDGE):
        raise ImplError(
            f"--impl {spec}: not imported: this process is a graded run's judge or one it started, and a "
            "graded submission runs only in its sandboxed worker (a test that needs it here is judge_traces)"
        )
    try:
        return _kernels_for_either_device(_load_file(spec) if as_path else importlib.import_module(spec))
    except SyntaxError as error:
        shown = spec if error.filename and os.path.abspath(error.filename) == os.path.abspath(spec) else error.filename
        where = f"{shown}:{error.lineno}" if shown else spec
        raise ImplError(f"--impl {spec}: {where}: SyntaxError: {error.msg}") from None
    except ModuleNotFoundError as error:
        missing = "" if error.name == spec else f" (it imports {error.name!r}, which is not installed)"
        raise ImplError(
            f"--impl {spec}: no module named {error.name!r}{missing}; give a dotted module name "
            "importable here or a path to a .py file"
        ) from None
    except ImplError:
        raise
    except Exception as error:  # the module ran and raised: say where
        frame = _last_frame_in(error, spec)
        raise ImplError(f"--impl {spec}: {frame}importing it raised {type(error).__name__}: {error}") from None


def _kernels_for_either_device(module: ModuleType) -> ModuleType:
    """Each plain ``@triton.jit`` kernel of ``module`` launched by Triton's interpreter for CPU tensors
    too (triton_kernels.EitherDevice): without it, such a kernel fails on a machine with no GPU. A
    function another ``@triton.jit`` function calls (a helper) stays as it is: a kernel compiled for
    the GPU calls it by its name, and the interpreted kernel calls its interpreted twin."""
    if "triton" not in sys.modules:
        return module
    from triton.runtime.jit import JITFunction

    from stackcheck.toolchains.triton_kernels import EitherDevice

    for home in _homes(module):  # the module and those its functions were re-exported from
        jitted = {name: value for name, value in vars(home).items() if type(value) is JITFunction}
        called = {name for value in jitted.values() for name in _names_used(value.fn.__code__)}
        for name, value in jitted.items():
            if name not in called:
                setattr(home, name, EitherDevice(value))
    return module


def _names_used(code) -> set[str]:
    """The global names a function's code reads, its nested code's included."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names_used(const)
    return names


LIBRARIES = ("triton", "torch", "numpy", "jax", "jaxlib", "max", "stackcheck", "builtins")


def _homes(module: ModuleType) -> list[ModuleType]:
    """``module`` and every module its functions come from (a re-export, a star import) that is not a
    library's: where a launch looks its kernel up."""
    homes = {module.__name__: module}
    for value in vars(module).values():
        origin = getattr(value, "__module__", None) if callable(value) else None
        if origin and origin in sys.modules and origin.split(".")[0] not in LIBRARIES:
            homes.setdefault(origin, sys.modules[origin])
    return list(homes.values())


def _load_file(spec: str) -> ModuleType:
    path = os.path.abspath(spec)
    if os.path.isdir(path):
        raise ImplError(f"--impl {spec}: is a folder; give the .py file that defines the functions")
    if not os.path.exists(path):
        raise ImplError(f"--impl {spec}: no such file")
    name = "stackcheck_impl_" + os.path.splitext(os.path.basename(path))[0]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ImplError(f"--impl {spec}: not a Python file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def deepest_frame_in(tb, path: str):
    """The innermost frame of traceback ``tb`` that runs in the file ``path`` (a FrameSummary:
    filename, 1-based lineno, name), or None."""
    import traceback

    target = os.path.abspath(path)
    frames = [f for f in traceback.extract_tb(tb) if os.path.abspath(f.filename) == target]
    return frames[-1] if frames else None


def _last_frame_in(error: BaseException, spec: str) -> str:
    """'file:line: ' of the deepest traceback frame inside the --impl file, or ''."""
    frame = deepest_frame_in(error.__traceback__, spec)
    return f"{frame.filename}:{frame.lineno}: " if frame else ""


def _fallback_namespace(module: ModuleType) -> dict:
    """A copy of the reference module's globals, as the globals of a module of its own registered in
    sys.modules (named after the student's): torch.compile, tracing a fallback, guards the globals it
    reads by importing their module by name, which must give these, not the reference's own."""
    fallback = ModuleType(f"{reference.__name__}.fallback_for_{module.__name__.replace('.', '_')}_{id(module):x}")
    fallback.__dict__.update({k: v for k, v in vars(reference).items() if k not in ("__name__", "__spec__")})
    sys.modules[fallback.__name__] = fallback
    return fallback.__dict__


def _rebound(fn, namespace: dict):
    """The reference function ``fn`` with its global names looked up in ``namespace``: a fallback
    that calls the student's versions of the other surface functions, not the reference's."""
    rebound = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    rebound.__kwdefaults__ = fn.__kwdefaults__
    rebound.__doc__, rebound.__wrapped__ = fn.__doc__, fn
    return rebound


def public_functions(module: ModuleType) -> list[str]:
    """Public functions the module itself defines (not ones it imported)."""
    return sorted(
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and callable(v) and getattr(v, "__module__", None) == module.__name__
    )


def check_names(module: ModuleType, spec: str, assigned: frozenset[str] | None) -> None:
    """ImplError, one line listing them, for a name that looks like a misspelt surface name, and
    for a file that provides none of the surface (or, in homework mode, none of its assignment)."""
    others = [n for n in public_functions(module) if n not in SURFACE]
    typos = {n: difflib.get_close_matches(n, SURFACE, n=1, cutoff=0.8) for n in others}
    typos = {n: m[0] for n, m in typos.items() if m}
    if typos:
        listed = "; ".join(f"{n} (did you mean {m}?)" for n, m in sorted(typos.items()))
        raise ImplError(f"--impl {spec}: not surface name(s): {listed}")
    if assigned is not None and others:  # homework: every public function must be graded, or private
        raise ImplError(
            f"--impl {spec}: not surface name(s): {', '.join(others)}; name helpers with a "
            f"leading _ (e.g. _{others[0]})"
        )
    wanted = sorted(assigned) if assigned else list(SURFACE)
    if not any(hasattr(module, n) for n in wanted):
        what = "the names its homework assigns" if assigned else "the surface names"
        raise ImplError(f"--impl {spec}: defines none of {what}: {', '.join(wanted)}")


# the surface's clocks: what they return is seconds, read by the implementation under test
CLOCKS = frozenset(n for n, t in contract.TASKS.items() if t.form in (contract.SECONDS, [contract.SECONDS]))


def _its_clock(fn):
    """``fn``, whose seconds come back as the implementation's reading (timing.ImplSeconds)."""

    def read(*args, **kwargs):
        return timing.read_by_implementation(fn(*args, **kwargs))

    read.__name__, read.__qualname__, read.__doc__, read.__wrapped__ = fn.__name__, fn.__qualname__, fn.__doc__, fn
    return read


class Impl:
    """Attribute access returns the --impl module's version of a name, else the reference one.

    Every reference function used as a fallback calls the module's versions of the others, so a
    student's ``numpy_steps`` is what the reference ``numpy_forward`` runs. In homework mode
    (``assigned`` given) an assigned name never falls back: a missing one is a stub raising
    NotAttempted. The module's functions have their return values checked (contract.checked).
    ``touched`` collects the names a test asked for, for grading."""

    def __init__(self, module: ModuleType | None, assigned: frozenset[str] | None = None, borrowing=None):
        self.module = module
        self.assigned = assigned
        # homework: assigned names whose work is the suite's solution (integrity.Borrowing.of)
        self.borrowed = {n: borrowing.of(n) for n in assigned or () if borrowing and borrowing.of(n)}
        self.provided = sorted(n for n in SURFACE if module is not None and callable(getattr(module, n, None)))
        self.unknown = [n for n in public_functions(module) if n not in SURFACE] if module else []
        self.touched: set[str] = set()
        table = {n: contract.checked(n, getattr(module, n)) for n in self.provided}
        table.update({n: contract.not_attempted(n) for n in assigned or () if n not in table})
        table.update({n: contract.borrowed(n, source) for n, source in self.borrowed.items()})
        namespace = _fallback_namespace(module) if module else dict(vars(reference))
        for name in (n for n in SURFACE if n not in table):
            table[name] = _rebound(getattr(reference, name), namespace) if module else getattr(reference, name)
        namespace.update(table)
        self._table, self._namespace = table, namespace

    def stop_calling(self, name: str, seconds: float) -> None:
        """``name`` ran past the per-test timeout: later calls fail at once (contract.hung), also
        those from the student's other functions (the module's own global is replaced too)."""
        if name in (self.assigned or ()):
            self._table[name] = self._namespace[name] = contract.hung(name, seconds)
            if self.module is not None and hasattr(self.module, name):
                setattr(self.module, name, self._table[name])

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in SURFACE:
            raise AttributeError(f"{name!r} is not part of the stackcheck implementation surface {SURFACE}")
        if not contract.compiling(name):
            self.touched.add(name)
        if name in CLOCKS:
            return _its_clock(self._table[name])
        return self._table[name]

    def student_names(self, names) -> list[str]:
        """Of ``names``, those graded as the student's: the assigned ones in homework mode."""
        return sorted(set(names) & (self.assigned or set()))

    def calls(self) -> str:
        """Which of the module's functions the tests of this process called, and how often: a function
        that was never called was not judged here."""
        counts = [(n, contract.CALLED.get(n, 0)) for n in self.provided]
        called = ", ".join(f"{n} ({c})" for n, c in counts if c) or "none"
        idle = ", ".join(n for n, c in counts if not c) or "none"
        return f"--impl {self.module.__name__}: called {called}; never called by these tests: {idle}"

    def __repr__(self) -> str:
        return f"<Impl: {self.describe()}>"

    def describe(self) -> str:
        if self.module is None and self.assigned is not None:  # a graded run, before load_late
            return f"homework: {len(self.assigned)} assigned functions, loaded once the tests are collected"
        if self.module is None:
            return "stackcheck.impl.reference (the course's solutions)"
        extra = f"; ignored (not in the surface): {', '.join(self.unknown)}" if self.unknown else ""
        if self.assigned is not None:
            missing = sorted(self.assigned - set(self.provided))
            return (
                f"homework {self.module.__name__}: {len(self.assigned) - len(missing)} of {len(self.assigned)} "
                f"assigned functions defined"
                + (f" (missing, graded as not attempted: {', '.join(missing)})" if missing else "")
                + "; nothing assigned falls back"
                + (f"; borrowed, earning nothing: {', '.join(sorted(self.borrowed))}" if self.borrowed else "")
                + extra
            )
        return (
            f"{self.module.__name__} provides {', '.join(self.provided) or 'nothing of the surface'}; "
            f"the rest falls back to stackcheck.impl.reference{extra}"
        )
