"""Homework parts: which surface functions each part assigns and grades, the starter a student
gets, and the reference with the assigned solutions stripped.

A part names a test folder and the surface functions whose tests it grades. In homework mode
(``--homework DIR`` or ``--impl FILE --strict-impl``) the assigned names come from the student's
file only: a missing one is a stub that raises NotImplementedError, never the reference."""

from __future__ import annotations

import ast
import inspect
import textwrap

from stackcheck.impl import reference
from stackcheck.impl.contract import TASKS

PARTS = {"math": "tests_math", "ir": "tests_ir", "runtime": "tests_runtime", "kernels": "tests_kernels"}


def assigned(parts: tuple[str, ...] | list[str]) -> frozenset[str]:
    """The surface names ``parts`` assign ("all" for every part)."""
    chosen = set(PARTS) if "all" in parts else set(parts)
    unknown = chosen - set(PARTS)
    if unknown:
        raise ValueError(f"unknown part(s) {sorted(unknown)}; choose from {sorted(PARTS)} or all")
    return frozenset(t.name for t in TASKS.values() if t.part in chosen)


def parsed(path: str) -> ast.Module | None:
    """The homework file at ``path`` as Python's syntax tree (read, never run); None where it does not parse."""
    try:
        return ast.parse(open(path, encoding="utf-8").read())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):  # ValueError: bad bytes too
        return None


def declared(path: str, tree: ast.Module | None = None) -> tuple[str, ...] | None:
    """The parts a homework file's ``ASSIGNED = (...)`` names, read without running the file (a graded
    run loads it only after collecting the tests); None where it names none as a literal or does not
    parse. ``tree``: the file's, where it was parsed already."""
    tree = tree if tree is not None else parsed(path)
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ASSIGNED" for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except Exception:  # noqa: BLE001 - any literal it cannot make ({[]: 1}: TypeError; depth: RecursionError)
                return None
            value = (value,) if isinstance(value, str) else value
            return tuple(value) if isinstance(value, (tuple, list)) and all(isinstance(v, str) for v in value) else None
    return None


def folders(parts) -> list[str]:
    return [folder for part, folder in PARTS.items() if "all" in parts or part in parts]


BASE_STACKS = ("numpy", "torch", "torch_compile", "jax")  # every part's tests run on these


def stack_runs(stack: str, names: frozenset[str]) -> bool:
    """Whether a homework of ``names`` runs the tests of ``stack``: the base stacks always (the
    runtime's and the IR's tests use them too); MAX, Mojo and Triton only when one of their own
    functions is assigned (else they would grade nothing and cost minutes of compiles)."""
    return stack in BASE_STACKS or any(TASKS[n].stack == stack for n in names)


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
    """stackcheck/impl/reference.py with the assigned functions' bodies (and the private helpers only
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
