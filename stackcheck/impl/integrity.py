"""Homework integrity: which of a submission's functions borrow the suite's solutions, read from its
source before any of it runs. The solutions are the course's reference implementations
(stackcheck.impl.reference), the reference forward of the tolerance policy, the suite's Triton
kernels and the shipped wrong implementations (tests_meta.mutants). A function borrows when it is
imported from them, bound to them, or reaches them (through an alias, ``importlib.import_module``,
``__import__``, a star import, or another function of the file that does). What the source
cannot show is read once the file has run (``with_reached``): a solution module or function among
the globals and closures a function's code uses (an import built from strings), or a function
compiled from a solution's text outside the file (``exec`` of the suite's source). What no reading
finds (a module name built while the function runs) is caught when it runs (``tripwire``)."""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

SOLUTIONS = {  # module -> the names in it that are solutions (None: all of it)
    "stackcheck.impl.reference": None,
    "stackcheck.evidence.numerics": {"reference_forward"},
    "stackcheck.evidence.gradients": {"closed_form"},  # Y, the loss and its gradients in float64
    "stackcheck.toolchains.triton_kernels": {  # the kernels and their launchers; jit_both, validate are helpers
        "bias_relu",
        "matmul_bias_relu",
        "launch",
        "compiled_kernel",
        "interpreted_kernel",
        "matmul_compiled",
        "matmul_interpreted",
        "_bias_relu_kernel",
        "_matmul_bias_relu_kernel",
    },
    "stackcheck.toolchains.mojo_build": {"source"},  # the suite's Mojo package (mojo/study_relu)
    "stackcheck.claims.spellings": None,  # writes correct forwards on demand (tests_meta's generator)
    "stackcheck.claims.not_waiting": None,  # writes correct timing functions on demand (issue 80's generator)
    "tests_meta.mutants": None,
    "tests_meta": None,
}


def _solution(dotted: str) -> str | None:
    """The solution module ``dotted`` (a module, or module.name) reaches, or None."""
    for module, names in SOLUTIONS.items():
        if dotted == module:
            return module if names is None else None
        if dotted.startswith(module + "."):
            if names is None:
                return module
            attr = dotted[len(module) + 1 :].split(".")[0]
            if attr in names:
                return f"{module}.{attr}"
    return None


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


class _Scan:
    def __init__(self, tree: ast.Module):
        self.aliases: dict[str, str] = {}  # local name -> dotted stackcheck/tests_meta path it stands for
        self.tainted: dict[str, str] = {}  # local name -> the solution it reaches
        self.star: list[str] = []  # solution modules star-imported
        self.imported: set[str] = set()  # every name an import binds
        self.docstrings = {
            id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
        }

    def bind(self, name: str, dotted: str) -> None:
        self.imported.add(name)
        if dotted.startswith(("stackcheck", "tests_meta")):
            self.aliases[name] = dotted
        found = _solution(dotted)
        if found:
            self.tainted[name] = found

    def resolve(self, node: ast.AST) -> str | None:
        """The solution an expression reaches, through aliases and string module names."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and id(sub) not in self.docstrings:
                found = _solution(sub.value.strip())
                if found:
                    return found
            dotted = _dotted(sub) if isinstance(sub, (ast.Attribute, ast.Name)) else None
            if dotted:
                root, _, rest = dotted.partition(".")
                if root in self.tainted:
                    return self.tainted[root]
                if root in self.aliases:
                    found = _solution(self.aliases[root] + ("." + rest if rest else ""))
                    if found:
                        return found
        return None

    def imports(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.bind(alias.asname, alias.name)
                else:  # `import stackcheck.impl.reference` binds `stackcheck`; its uses spell the rest
                    root = alias.name.split(".")[0]
                    self.imported.add(root)
                    self.aliases.setdefault(root, root)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name == "*":
                    found = _solution(node.module)
                    if found:
                        self.star.append(found)
                    continue
                self.bind(alias.asname or alias.name, f"{node.module}.{alias.name}")


@dataclass(frozen=True)
class Borrowing:
    names: dict[str, str]  # name bound at the top of the file -> the solution it reaches
    star: str | None  # a solution module star-imported: what the file does not define comes from it
    defined: frozenset[str]

    def of(self, name: str) -> str | None:
        """The solution ``name`` of the submission borrows, or None when it is the student's own."""
        if name in self.names:
            return self.names[name]
        return self.star if name not in self.defined else None

    def __bool__(self) -> bool:
        return bool(self.names or self.star)


def borrowed(path: str) -> Borrowing:
    """What the top-level names of ``path`` borrow. Reads the file, never runs it."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
    scan = _Scan(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            scan.imports(node)
    defined: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and node.value is not None:
                    defined[target.id] = node.value
    if scan.star:  # every name the file uses but does not define comes from the star import
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for name in used - set(defined) - scan.imported - set(dir(builtins)):
            scan.tainted.setdefault(name, scan.star[0])
    changed = True
    while changed:  # a function reaching a borrowing name borrows too
        changed = False
        for name, node in defined.items():
            if name in scan.tainted:
                continue
            found = scan.resolve(node)
            if found:
                scan.tainted[name] = found
                changed = True
    return Borrowing(dict(scan.tainted), scan.star[0] if scan.star else None, frozenset(defined))


def with_reached(borrowing: Borrowing | None, module: types.ModuleType, names) -> Borrowing | None:
    """``borrowing`` (read from the source) and what ``names`` of ``module`` reach once it has run,
    however the file spelled it: a solution module or function among the globals a function uses
    (an import built from strings), or a function compiled from a solution's text elsewhere than the
    file (``exec`` of the suite's source)."""
    own = getattr(module, "__file__", None)
    prints = _solution_prints()
    found = {n: source for n in names if (source := _reaches(getattr(module, n, None), own, prints, set()))}
    if not found:
        return borrowing
    if borrowing is None:
        return Borrowing(found, None, frozenset(names))
    return dataclasses.replace(borrowing, names={**found, **borrowing.names})


def _print(code: types.CodeType) -> tuple:
    """What a function computes, as compiled: its bytecode, names and constants (nested code too)."""
    consts = tuple(_print(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts)
    return code.co_code, code.co_names, consts


def _solution_prints() -> dict[tuple, str]:
    """The compiled form of each solution function already imported -> its dotted name."""
    prints = {}
    for name, module in list(sys.modules.items()):
        for attr, value in list(vars(module).items()) if _solution(name) or name in SOLUTIONS else ():
            if isinstance(value, types.FunctionType) and value.__module__ == name and _solution(f"{name}.{attr}"):
                prints[_print(value.__code__)] = f"{name}.{attr}"
    return prints


def _reaches(obj, own: str | None, prints: dict, seen: set) -> str | None:
    """The solution ``obj`` is or reaches (through the globals and closures its code uses), or None."""
    if isinstance(obj, types.ModuleType):
        return _solution(obj.__name__)
    while isinstance(obj, functools.partial) or hasattr(obj, "__wrapped__"):
        obj = obj.func if isinstance(obj, functools.partial) else obj.__wrapped__
    if not isinstance(obj, types.FunctionType):
        named = f"{getattr(obj, '__module__', None)}.{getattr(obj, '__name__', None)}"
        return _solution(named) if callable(obj) else None
    if id(obj) in seen:
        return None
    seen.add(id(obj))
    code = obj.__code__
    found = _solution(f"{obj.__module__}.{obj.__name__}")
    if not found and code.co_filename != own:
        found = prints.get(_print(code))
    if found:
        return found
    for name in _global_names(code) & obj.__globals__.keys():
        if found := _reaches(obj.__globals__[name], own, prints, seen):
            return found
    for cell in obj.__closure__ or ():
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if found := _reaches(contents, own, prints, seen):
            return found
    return None


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def tripwire(impl) -> Callable[[], None]:
    """Until the returned undo is called, each function of stackcheck.impl.reference, and the reference
    forward, fails when called while an assigned function of ``impl`` (a loader.Impl) runs
    (contract.RUNNING): that call raises contract.Borrowed, and ``impl.borrowed`` names it for the
    score. The suite's own fallbacks are copies (loader._rebound) and never trip it."""
    from stackcheck.evidence import numerics
    from stackcheck.impl import contract, reference

    wired = [(reference, n) for n, f in vars(reference).items() if _defined_in(f, reference)]
    wired.append((numerics, "reference_forward"))
    originals = [(module, name, getattr(module, name)) for module, name in wired]

    def wire(module, name, fn):
        source = f"{module.__name__}.{name}"

        def tripped(*args, **kwargs):
            student = next((n for n in reversed(contract.RUNNING) if n in (impl.assigned or ())), None)
            if student is None:
                return fn(*args, **kwargs)
            impl.borrowed.setdefault(student, f"{source} (called while it ran)")
            raise contract.Borrowed(
                f"borrowed: {student} (course §{contract.TASKS[student].section}) called {source}, the "
                "suite's own solution, while it ran; it earns no points until it is your own work"
            )

        return functools.wraps(fn)(tripped)

    for module, name, fn in originals:
        setattr(module, name, wire(module, name, fn))

    def undo() -> None:
        for module, name, fn in originals:
            setattr(module, name, fn)

    return undo


def _defined_in(value, module) -> bool:
    return isinstance(value, types.FunctionType) and value.__module__ == module.__name__


STRIPPED = "borrowed: "  # how a stripped solution's error starts (stackcheck.grading.judge makes it contract.Borrowed)


def stripped_solutions(folder: Path) -> list[tuple[Path, Path]]:
    """Each solution module of SOLUTIONS written into ``folder`` without its solutions (their bodies
    raise NotImplementedError; signatures, docstrings and everything else kept): (stripped copy, the
    module's file), for a graded submission's worker to see in their place. Folders of solutions
    (``tests_meta``) it never sees at all (stackcheck.grading.sandbox.covered)."""
    import importlib.util

    made = []
    for module, names in SOLUTIONS.items():
        spec = importlib.util.find_spec(module) if not module.startswith("tests_") else None
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        source = Path(spec.origin)
        tree = ast.parse(source.read_text(encoding="utf-8"))
        # a named solution is a module-level function; a nested one of the same name (EitherDevice's
        # launch, which runs the student's own kernels) is not
        for node in ast.walk(tree) if names is None else tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (names is None or node.name in names):
                said = f"{STRIPPED}{module}.{node.name}, the suite's own solution, is not in a graded world"
                keep = node.body[:1] if ast.get_docstring(node) else []
                node.body = [*keep, ast.parse(f"raise NotImplementedError({said!r})").body[0]]
        target = folder / f"{module.replace('.', '_')}.py"
        target.write_text(ast.unparse(tree) + "\n", encoding="utf-8")
        made.append((target, source))
    return made
