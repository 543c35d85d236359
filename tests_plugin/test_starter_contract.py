"""Issue 51 item 6: each surface's docstring in the starter (``stackcheck homework init``) states what
is required, never how the reference spells it: no library call the reference's own body makes is
named in its contract, unless the contract requires exactly that call (a jit, a compile, a custom op)."""

import ast
import inspect
import textwrap

import pytest

from stackcheck.homework import assignment
from stackcheck.impl import reference
from stackcheck.impl.contract import TASKS

pytestmark = pytest.mark.meta

# Calls a contract names because the course requires them: the tool the task is about.
REQUIRED = {
    "check_operands",  # the suite's own validator, handed to the student
    "jax.jit",  # §9: one compiled program
    "torch.compile",  # §8.1
    "ops.custom",  # §10.4: the Mojo custom op
    "triton.jit",  # §11.2: a Triton kernel
    "torch.nn.Linear",  # §2.1: the module whose weight is read
}


def calls_of(fn) -> set[str]:
    """The dotted names the body of ``fn`` (and of the suite helpers it calls in reference) calls."""
    found, todo, seen = set(), [fn], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        tree = ast.parse(textwrap.dedent(inspect.getsource(current)))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = ast.unparse(node.func)
                found.add(name)
                helper = getattr(reference, name, None)
                if inspect.isfunction(helper) and name.startswith("_"):
                    todo.append(helper)
    return {n for n in found if "." in n and not n.startswith(("self.", "_"))}


@pytest.mark.parametrize("name", list(TASKS))
def test_the_starters_contract_never_spells_the_reference(name):
    doc = inspect.getdoc(getattr(reference, name)) or ""
    spelled = sorted(c for c in calls_of(getattr(reference, name)) if c not in REQUIRED and f"``{c}``" in doc)
    assert not spelled, f"{name}'s contract names how the reference spells it: {spelled}; state what is required"
    assert doc and doc.split(maxsplit=1)[0].startswith(("§", "MC")), f"{name}: the contract starts with its section"
    assert doc.splitlines()[0] in assignment.stub_source(["all"]), f"{name}: the starter carries the contract"
