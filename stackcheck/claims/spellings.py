"""Issue 51: a grammar of the public spellings of Y = ReLU(X @ W + b), and the --impl modules it writes.

A spelling is one choice of each part: the matmul, the bias add (or one fused call for both), the
ReLU, the form the forward takes (a function, its own steps, a lambda, an ``nn.Module``; for JAX where
the ``jax.jit`` sits: per call, module level, decorator, built lazily on first call) and how the module
was loaded (defined in it, re-exported by name, star-imported from another module). ``wrong`` replaces
one part with a mistake of the same grammar (a ReLU that is ``abs``, leaky or NaN-dropping, a bias
subtracted or left out, X @ W computed on the host, a jit rebuilt each call around W and b as
constants): such a spelling must fail its claim. Triton's §11.2 kernel has a grammar of its own
(grid, cdiv, mask, ReLU; wrong: an unmasked load and store, a grid that drops the last partial block)."""

from __future__ import annotations

import contextlib
import re
import sys
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
            "where_negative": "jnp.where(z < 0, 0.0, z)",
            "select": "lax.select(z < 0, jnp.zeros_like(z), z)",
        },
    },
}
# One wrong part each: the claim whose tests must catch it.
WRONG = {
    "numpy": {
        "relu": {"abs": "np.abs(z)", "fmax": "np.fmax(z, 0)"},
        # b on the wrong axis: added by row (a shape error unless N == M, as in §2.2's 2 x 2 example)
        "bias": {"minus": "a - b", "none": "a", "wrong_axis": "a + b[:, np.newaxis]"},
    },
    "torch": {
        "relu": {
            "abs": "torch.abs(z)",
            "leaky": "F.leaky_relu(z, 0.01)",
            "nan_dropping": "torch.where(z > 0, z, 0.0)",
            "mask_multiply": "z * (z > 0)",
        },
        "bias": {"minus": "a - b", "none": "a", "doubled": "a + 2 * b"},
        # X @ W computed on the host: right numbers, but no graph can hold it (§1.2, §4.3)
        "matmul": {
            "host_round_trip": "torch.from_numpy(x.detach().cpu().numpy() @ w.detach().cpu().numpy()).to(x.device)"
        },
    },
    "jax": {
        "relu": {
            "abs": "jnp.abs(z)",
            "leaky": "jax.nn.leaky_relu(z, 0.01)",
            "nan_dropping": "jnp.where(z > 0, z, 0.0)",
        },
        "bias": {"minus": "a - b", "none": "a"},
    },
}
# A wrong form: a jit built each call around a function that closes over W and b, so new values are
# new constants and every call compiles again (§2.4: new values must reuse the program). A jit built
# each call around the same function (jit_per_call) is right: JAX finds its program again.
WRONG_FORMS = {"jax": ("jit_closure_per_call",)}
CAUGHT_BY = {
    "relu": {"S2.2-hand", "X-numerics"},
    "bias": {"S2.2-hand", "S4.3-ir"},
    "matmul": {"S4.3-ir", "S1.2-abstract"},
    "form": {"S2.4-specialize"},
}


def wrong_kinds(stack: str) -> list[str]:
    """The parts of ``stack``'s spellings that the grammar can get wrong."""
    return sorted(set(WRONG.get(stack, {})) | ({"form"} if stack in WRONG_FORMS else set()))


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
    wrong: str | None = None  # the part (relu, bias, matmul, form) that holds a mistake, if any

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
            "jit_closure_per_call": ("", "jax.jit(lambda x: _traced(x, w, b))(x)"),
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
        sys.path for a re-exported spelling (``importable``); the path of the --impl module."""
        return written(folder, name, self.source(), self.loading, f"{self.stack}_steps, {self.stack}_forward")

    def __str__(self) -> str:
        wrong = f" WRONG {self.wrong}" if self.wrong else ""
        return f"{self.stack}: {self.matmul} x {self.bias} x {self.relu} x {self.form} x {self.loading}{wrong}"


def written(folder: Path, name: str, source: str, loading: str, names: str) -> Path:
    """``source`` as the --impl module ``name`` in ``folder``, or, re-exported (by ``names``) or
    star-imported, as a module of its own that ``name`` imports from; the --impl module's path."""
    if loading == "defined":
        (folder / f"{name}.py").write_text(source)
    else:
        (folder / f"{name}_defs.py").write_text(source)
        line = f"from {name}_defs import *  # noqa: F403\n" if loading == "star" else ""
        line = line or f"from {name}_defs import {names}  # noqa: F401\n"
        (folder / f"{name}.py").write_text(f'"""Re-exported: {loading}."""\n\n{line}')
    return folder / f"{name}.py"


@contextlib.contextmanager
def importable(folder: Path):
    """``folder`` on sys.path while inside: a re-exported spelling imports its definitions by name."""
    sys.path.insert(0, str(folder))
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))


def spellings(stack: str, wrong: str | None = None) -> st.SearchStrategy[Spelling]:
    """Spellings of ``stack``: every part correct, or the part ``wrong`` (one of wrong_kinds) a mistake."""
    parts = PARTS[stack]

    def pick(kind: str):
        table = WRONG[stack][kind] if wrong == kind else parts[kind]
        if wrong == "matmul" and kind == "bias":  # a fused bias computes X @ W itself: the mistake must be used
            table = {k: v for k, v in table.items() if not k.startswith("fused:")}
        return st.sampled_from(sorted(table))

    return st.builds(
        Spelling,
        stack=st.just(stack),
        matmul=pick("matmul"),
        bias=pick("bias"),
        relu=pick("relu"),
        form=st.sampled_from(WRONG_FORMS[stack] if wrong == "form" else FORMS[stack]),
        loading=st.sampled_from(LOADINGS),
        wrong=st.just(wrong),
    )


# ---- Triton: the §11.2 kernel Y = ReLU(A + b) and its launch ------------------------------------
# A kernel spelling is one choice of: the grid (one flat axis of cdiv(N * M, BLOCK) programs, or a
# program per row and column block, axes either way round), how cdiv is spelled, the mask's
# comparison, the ReLU, and how the module was loaded. ``wrong``: a load and store left unmasked, or
# a grid that drops the last partial block (floor division): each must fail its claim.
TRITON = {
    "grid": ("flat", "rows_by_columns", "columns_by_rows"),
    "cdiv": {
        "triton": "triton.cdiv({n}, {b})",
        "ceil_by_floor": "({n} + {b} - 1) // {b}",
        "negated_floor": "-(-{n} // {b})",
        "math_ceil": "math.ceil({n} / {b})",
    },
    "mask": {"less": "{i} < {n}", "greater": "{n} > {i}"},
    "relu": {
        "maximum": "tl.maximum(z, 0.0)",
        "where_negative": "tl.where(z < 0.0, 0.0, z)",
    },
}
TRITON_WRONG = {
    "mask": {"unmasked": None},
    "cdiv": {"floor": "{n} // {b}"},
}
TRITON_CAUGHT_BY = {"mask": {"S11.2-mask"}, "cdiv": {"S11.3-program", "S11.2-mask"}}
TRITON_HEAD = """import math

import torch
import triton
import triton.language as tl

from stackcheck.toolchains.triton_kernels import validate

"""


@dataclass(frozen=True)
class TritonSpelling:
    grid: str
    cdiv: str
    mask: str
    relu: str
    loading: str
    wrong: str | None = None  # "mask" or "cdiv"
    stack: str = "triton"

    def _part(self, kind: str) -> str | None:
        table = TRITON_WRONG[kind] if self.wrong == kind else TRITON[kind]
        return table[getattr(self, kind)]

    def _cdiv(self, n: str, b: str) -> str:
        return self._part("cdiv").format(n=n, b=b)

    def _masks(self, index: str, bound: str) -> tuple[str, str]:
        """The mask arguments of a load and of a store ("" for both where the kernel has no mask)."""
        mask = self._part("mask")
        if mask is None:
            return "", ""
        stored = f", mask={mask.format(i=index, n=bound)}"
        return stored + ", other=0.0", stored

    def source(self) -> str:
        relu = self._part("relu")
        if self.grid == "flat":
            load, store = self._masks("offsets", "n_elements")
            body = (
                "    pid = tl.program_id(axis=0)\n"
                "    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
                f"    a = tl.load(a_ptr + offsets{load})\n"
                f"    b = tl.load(b_ptr + offsets % M{load})\n"
                "    z = a + b\n"
                f"    tl.store(y_ptr + offsets, {relu}{store})\n"
            )
            grid = f"({self._cdiv('n', 'block_size')},)"
        else:
            row_axis, column_axis = (0, 1) if self.grid == "rows_by_columns" else (1, 0)
            load, store = self._masks("columns", "M")
            body = (
                f"    row = tl.program_id(axis={row_axis})\n"
                f"    columns = tl.program_id(axis={column_axis}) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
                f"    a = tl.load(a_ptr + row * M + columns{load})\n"
                f"    b = tl.load(b_ptr + columns{load})\n"
                "    z = a + b\n"
                f"    tl.store(y_ptr + row * M + columns, {relu}{store})\n"
            )
            blocks = self._cdiv("m", "block_size")
            grid = f"(n_rows, {blocks})" if row_axis == 0 else f"({blocks}, n_rows)"
        kernel = (
            "@triton.jit\n"
            "def _bias_relu(a_ptr, b_ptr, y_ptr, n_elements, M: tl.constexpr, BLOCK_SIZE: tl.constexpr):\n" + body
        )
        surface = (
            "def triton_bias_relu(a, b, block_size=256, out=None):\n"
            "    validate(a, b)\n"
            "    if block_size <= 0 or block_size & (block_size - 1):\n"
            '        raise ValueError(f"block_size must be a power of two, got {block_size}")\n'
            "    out = torch.empty_like(a) if out is None else out\n"
            "    n_rows, m = a.shape\n"
            "    n = a.numel()\n"
            "    if n == 0:\n"
            "        return out\n"
            f"    _bias_relu[{grid}](a, b, out, n, M=m, BLOCK_SIZE=block_size)\n"
            "    return out\n"
        )
        return TRITON_HEAD + kernel + "\n\n" + surface

    def write(self, folder: Path, name: str) -> Path:
        return written(folder, name, self.source(), self.loading, "triton_bias_relu")

    def __str__(self) -> str:
        wrong = f" WRONG {self.wrong}" if self.wrong else ""
        return f"triton: {self.grid} x {self.cdiv} x {self.mask} x {self.relu} x {self.loading}{wrong}"


def triton_spellings(wrong: str | None = None) -> st.SearchStrategy[TritonSpelling]:
    """Spellings of the §11.2 kernel and its launch: every part correct, or ``wrong`` (mask, cdiv) a mistake."""

    def pick(kind: str):
        return st.sampled_from(sorted(TRITON_WRONG[kind] if wrong == kind else TRITON[kind]))

    return st.builds(
        TritonSpelling,
        grid=st.sampled_from(TRITON["grid"]),
        cdiv=pick("cdiv"),
        mask=pick("mask"),
        relu=pick("relu"),
        loading=st.sampled_from(LOADINGS),
        wrong=st.just(wrong),
    )
