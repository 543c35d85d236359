"""Issue 51: a grammar of the public spellings of Y = ReLU(X @ W + b), and the --impl modules it writes.

A spelling is one choice of each part: the matmul, the bias add (or one fused call for both), the
ReLU, the form the forward takes (a function, its own steps, a lambda, an ``nn.Module``; for JAX where
the ``jax.jit`` sits: per call, module level, decorator, built lazily on first call) and how the module
was loaded (defined in it, re-exported by name, star-imported from another module). ``wrong`` replaces
one part with a mistake of the same grammar (a ReLU that is ``abs``, leaky or NaN-dropping, a bias
subtracted or left out): such a spelling must fail its claim."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

# Each part: its name -> an expression, over x, w (matmul), a, b (bias: a is X @ W) or z (ReLU). A bias
# key "fused:..." computes X @ W + b in one call (the matmul part is then only A of the steps).
PARTS = {
    "numpy": {
        "matmul": {
            "at": "x @ w",
            "matmul": "np.matmul(x, w)",
            "dot": "np.dot(x, w)",
            "method": "x.dot(w)",
            "einsum": 'np.einsum("nk,km->nm", x, w)',
            "tensordot": "np.tensordot(x, w, axes=1)",
        },
        "bias": {
            "plus": "a + b",
            "radd": "b + a",
            "add": "np.add(a, b)",
            "row": "a + b[np.newaxis, :]",
            "broadcast_to": "a + np.broadcast_to(b, a.shape)",
        },
        "relu": {
            "maximum": "np.maximum(z, 0)",
            "where": "np.where(z < 0, np.zeros_like(z), z)",
            "clip": "np.clip(z, 0, None)",
            "maximum_zeros": "np.maximum(z, np.zeros_like(z))",
        },
    },
    "torch": {
        "matmul": {
            "at": "x @ w",
            "matmul": "torch.matmul(x, w)",
            "mm": "torch.mm(x, w)",
            "method": "x.matmul(w)",
            "einsum": 'torch.einsum("nk,km->nm", x, w)',
            "tensordot": "torch.tensordot(x, w, dims=1)",
            "bmm": "torch.bmm(x[None], w[None])[0]",
            "linear": "F.linear(x, w.T)",
        },
        "bias": {
            "plus": "a + b",
            "radd": "b + a",
            "add": "torch.add(a, b)",
            "method": "a.add(b)",
            "row": "a + b[None, :]",
            "unsqueeze": "a + b.unsqueeze(0)",
            "expand": "a + b.expand_as(a)",
            "fused:addmm": "torch.addmm(b, x, w)",
            "fused:linear": "F.linear(x, w.T, b)",
        },
        "relu": {
            "relu": "torch.relu(z)",
            "functional": "F.relu(z)",
            "method": "z.relu()",
            "module": "torch.nn.ReLU()(z)",
            "clamp": "torch.clamp(z, min=0)",
            "clamp_min": "z.clamp_min(0)",
            "maximum": "torch.maximum(z, torch.zeros_like(z))",
            "where": "torch.where(z < 0, 0.0, z)",
        },
    },
    "jax": {
        "matmul": {
            "at": "x @ w",
            "matmul": "jnp.matmul(x, w)",
            "dot": "jnp.dot(x, w)",
            "einsum": 'jnp.einsum("nk,km->nm", x, w)',
            "tensordot": "jnp.tensordot(x, w, axes=1)",
            "dot_general": "lax.dot_general(x, w, (((1,), (0,)), ((), ())))",
        },
        "bias": {
            "plus": "a + b",
            "radd": "b + a",
            "add": "jnp.add(a, b)",
            "row": "a + b[None, :]",
        },
        "relu": {
            "relu": "jax.nn.relu(z)",
            "maximum": "jnp.maximum(z, 0)",
            "lax_max": "lax.max(z, jnp.zeros_like(z))",
            "clip": "jnp.clip(z, 0)",
        },
    },
}
# One wrong part each: the claim whose tests must catch it.
WRONG = {
    "numpy": {"relu": {"abs": "np.abs(z)", "fmax": "np.fmax(z, 0)"}, "bias": {"minus": "a - b", "none": "a"}},
    "torch": {
        "relu": {
            "abs": "torch.abs(z)",
            "leaky": "F.leaky_relu(z, 0.01)",
            "nan_dropping": "torch.where(z > 0, z, 0.0)",
            "mask_multiply": "z * (z > 0)",
        },
        "bias": {"minus": "a - b", "none": "a", "doubled": "a + 2 * b"},
    },
    "jax": {
        "relu": {"abs": "jnp.abs(z)", "leaky": "jax.nn.leaky_relu(z, 0.01)"},
        "bias": {"minus": "a - b", "none": "a"},
    },
}
CAUGHT_BY = {"relu": {"S2.2-hand", "X-numerics"}, "bias": {"S2.2-hand", "S4.3-ir"}}
FORMS = {
    "numpy": ("steps", "inline", "lambda"),
    "torch": ("steps", "inline", "lambda", "module", "lazy_module"),
    "jax": ("jit_per_call", "jit_module", "jit_decorator", "jit_lazy"),
}
LOADINGS = ("defined", "reexported", "star")
IMPORTS = {
    "numpy": "import numpy as np\n",
    "torch": "import torch\nimport torch.nn.functional as F\n",
    "jax": "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n",
}


def inlined(expression: str, name: str, value: str) -> str:
    """``expression`` with its first ``name`` computing ``value`` (name := value) and the others reading it."""
    first = iter([f"({name} := {value})"])
    return re.sub(rf"\b{name}\b", lambda _: next(first, name), expression)


@dataclass(frozen=True)
class Spelling:
    stack: str
    matmul: str
    bias: str
    relu: str
    form: str
    loading: str
    wrong: str | None = None  # the part ("relu" or "bias") that holds a mistake, if any

    def part(self, kind: str) -> str:
        table = WRONG[self.stack][kind] if self.wrong == kind else PARTS[self.stack][kind]
        return table[getattr(self, kind)]

    def steps(self) -> str:
        """The body lines computing a, z, y."""
        return f"a = {self.part('matmul')}\nz = {self.part('bias')}\ny = {self.part('relu')}\n"

    def expression(self) -> str:
        """Y as one expression: each of A and Z computed once (an assignment expression where a part
        reads it twice)."""
        z = inlined(self.part("bias"), "a", self.part("matmul"))
        return inlined(self.part("relu"), "z", z)

    def source(self) -> str:
        """The module that defines the stack's surface functions in this spelling."""
        prefix = self.stack
        head = IMPORTS[self.stack] + "\nfrom stackcheck.impl.reference import check_operands\n\n"
        if self.stack == "jax":
            return head + self._jax()
        body = textwrap.indent(self.steps() + "return a, z, y\n", "    ")
        steps_fn = f"def {prefix}_steps(x, w, b):\n    check_operands(x, w, b)\n" + body
        forward = {
            "steps": f"    return {prefix}_steps(x, w, b)[2]\n",
            "inline": f"    check_operands(x, w, b)\n    return {self.expression()}\n",
            "lambda": "    check_operands(x, w, b)\n    return _forward(x, w, b)\n",
            "module": "    check_operands(x, w, b)\n    return _FORWARD(x, w, b)\n",
            "lazy_module": "    global _FORWARD\n    check_operands(x, w, b)\n    if _FORWARD is None:\n"
            "        _FORWARD = _Forward()\n    return _FORWARD(x, w, b)\n",
        }[self.form]
        extra = ""
        if self.form == "lambda":
            extra = f"_forward = lambda x, w, b: {self.expression()}  # noqa: E731\n\n"
        if self.form in ("module", "lazy_module"):
            extra = (
                "class _Forward(torch.nn.Module):\n    def forward(self, x, w, b):\n"
                + textwrap.indent(self.steps(), "        ")
                + "        return y\n\n"
                + ("_FORWARD = _Forward()\n\n" if self.form == "module" else "_FORWARD = None\n\n")
            )
        return head + steps_fn + "\n" + extra + f"def {prefix}_forward(x, w, b):\n" + forward

    def _jax(self) -> str:
        """jax_steps and jax_forward, the steps traced by one ``jax.jit`` placed where ``form`` says."""
        traced = "def _traced(x, w, b):\n" + textwrap.indent(self.steps(), "    ") + "    return a, z, y\n"
        call = {
            "jit_per_call": ("", "jax.jit(_traced)(x, w, b)"),
            "jit_module": ("_JITTED = jax.jit(_traced)\n", "_JITTED(x, w, b)"),
            "jit_decorator": ("", "_traced(x, w, b)"),
            "jit_lazy": ("_JITTED = None\n", "_jitted()(x, w, b)"),
        }[self.form]
        if self.form == "jit_decorator":
            traced = "@jax.jit\n" + traced
        lazy = ""
        if self.form == "jit_lazy":
            lazy = "def _jitted():\n    global _JITTED\n    if _JITTED is None:\n        _JITTED = jax.jit(_traced)\n"
            lazy += "    return _JITTED\n\n"
        return (
            traced
            + "\n"
            + call[0]
            + "\n"
            + lazy
            + "def jax_steps(x, w, b):\n    check_operands(x, w, b)\n"
            + f"    return {call[1]}\n\n"
            + "def jax_forward(x, w, b):\n    return jax_steps(x, w, b)[2]\n"
        )

    def write(self, folder: Path, name: str) -> Path:
        """Write the --impl module (and the module it loads from, if any) into ``folder``, which must be on
        sys.path for a re-exported spelling; the path of the --impl module."""
        names = f"{self.stack}_steps, {self.stack}_forward"
        if self.loading == "defined":
            (folder / f"{name}.py").write_text(self.source())
        else:
            (folder / f"{name}_defs.py").write_text(self.source())
            line = f"from {name}_defs import *  # noqa: F403\n" if self.loading == "star" else ""
            line = line or f"from {name}_defs import {names}  # noqa: F401\n"
            (folder / f"{name}.py").write_text(f'"""{self.stack} re-exported: {self.loading}."""\n\n{line}')
        return folder / f"{name}.py"

    def __str__(self) -> str:
        wrong = f" WRONG {self.wrong}" if self.wrong else ""
        return f"{self.stack}: {self.matmul} x {self.bias} x {self.relu} x {self.form} x {self.loading}{wrong}"


def spellings(stack: str, wrong: str | None = None) -> st.SearchStrategy[Spelling]:
    """Spellings of ``stack``: every part correct, or the part ``wrong`` (relu, bias) a mistake."""
    parts = PARTS[stack]

    def pick(kind: str):
        table = WRONG[stack][kind] if wrong == kind else parts[kind]
        return st.sampled_from(sorted(table))

    return st.builds(
        Spelling,
        stack=st.just(stack),
        matmul=pick("matmul"),
        bias=pick("bias"),
        relu=pick("relu"),
        form=st.sampled_from(FORMS[stack]),
        loading=st.sampled_from(LOADINGS),
        wrong=st.just(wrong),
    )
