"""Which claim tests reach which surface functions, read from the test files (not listed by hand):
a test file that asks for ``impl.NAME``, runs a stack's forward through stackcheck.run.runners, or
builds a MAX graph (whose builders are ``max_steps``, ``mojo_relu`` and ``mojo_package``). The
variants meta-test runs a correct implementation against what it reaches; ``stackcheck watch``
reruns what an edit reaches."""

from __future__ import annotations

import re
from pathlib import Path

from stackcheck.impl.contract import TASKS

CLAIM_FOLDERS = ("tests_math", "tests_ir", "tests_runtime", "tests_kernels", "tests_hardware", "tests_course")
SELF_TEST_FOLDERS = ("tests_plugin", "tests_meta")  # the suite's own proof: never a homework's
RUNNER_SURFACE = {"numpy_steps", "numpy_forward", "torch_steps", "torch_forward", "torch_compiled_forward"}
RUNNER_SURFACE |= {"jax_steps", "jax_forward", "triton_forward", "check_operands"}
GRAPH_BUILDERS = {"max_steps", "mojo_relu", "mojo_package"}


def test_files(functions, root: Path, folders=CLAIM_FOLDERS) -> list[str]:
    """The claim test files under ``root`` (in ``folders``) that call any of ``functions``."""
    functions = set(functions)
    patterns = [rf"\bimpl\.{f}\b" for f in sorted(functions)]
    if RUNNER_SURFACE & functions:
        patterns.append(r"\brun_(?:steps|forward)\(")
    if GRAPH_BUILDERS & functions:
        patterns.append(r"\bmax_graphs\.")
    if not patterns:
        return []
    found = re.compile("|".join(patterns))
    files = [p for folder in folders for p in sorted((root / folder).glob("test_*.py"))]
    return [str(p) for p in files if found.search(p.read_text(encoding="utf-8"))]


def mark_expression(functions, device: str = "cpu") -> str:
    """``-m`` for the tests of ``device`` on the stacks that run ``functions`` (each function's stack, as
    the homework contract says; a function of no one stack: every stack's)."""
    stacks = {TASKS[f].stack for f in functions}
    return device if None in stacks else f"{device} and (" + " or ".join(sorted(stacks)) + ")"
