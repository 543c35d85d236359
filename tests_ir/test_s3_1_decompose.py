"""§3.1: a model is a composition of operations. Attention, an MLP (the course's ReLU(XW + b), the
implementation's) and a norm, traced by JAX, are matmuls, reductions, exp, division and adds; and
torch's own nn.MultiheadAttention and nn.LayerNorm, exported and decomposed, leave no module behind:
"Q·K·V projection | 행렬곱, reshape", softmax as exp, sum and div, "LayerNorm" as a mean and rsqrt."""

import collections
import re

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, uniform
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out
from stackcheck.toolchains import ir, pointwise

T, D = 6, 8  # tokens, features


def block(jnp, mlp, x, wq, wk, wv, w1, b1):
    """One pre-norm Transformer block, written out: norm, attention, residual, MLP, residual."""
    h = (x - x.mean(-1, keepdims=True)) / jnp.sqrt(
        ((x - x.mean(-1, keepdims=True)) ** 2).mean(-1, keepdims=True) + 1e-5
    )
    scores = (h @ wq) @ (h @ wk).T / np.sqrt(D)
    p = jnp.exp(scores - scores.max(-1, keepdims=True))
    x = x + (p / p.sum(-1, keepdims=True)) @ (h @ wv)
    return x + mlp(x, w1, b1) @ w1.T


@pytest.mark.claim("S3.1-decompose")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_a_transformer_block_is_matmuls_reductions_exp_div_and_adds(impl, stack, device):
    jax = need("jax")
    x, wq, wk, wv, w1 = (uniform(s, seed=90 + i) for i, s in enumerate([(T, D), (D, D), (D, D), (D, D), (D, 2 * D)]))
    b1 = uniform((2 * D,), seed=95)
    args = jax_in((x, wq, wk, wv, w1, b1), device, "float32")
    jaxpr = str(jax.make_jaxpr(lambda *a: block(jax.numpy, impl.jax_forward, *a))(*args))
    ops = collections.Counter(re.findall(r"= (dot_general|reduce_sum|reduce_max|exp|div|add|sub|sqrt)\b", jaxpr))
    assert (
        ops["dot_general"] >= 7
        and ops["reduce_sum"] + ops["reduce_max"] >= 3
        and ops["exp"] >= 1
        and ops["div"] >= 2
        and ops["add"] >= 3
        and pointwise.families(jaxpr, "jaxpr").count("relu") >= 1  # judged by what it computes
    ), f"attention, norm and MLP must show as matmuls, reductions, exp, division, adds and a ReLU: {dict(ops)}"
    y = jax.jit(lambda *a: block(jax.numpy, impl.jax_forward, *a))(*args)
    reference = block(
        np, lambda a, w, b: np.maximum(a @ w + b, 0), *(v.astype(np.float64) for v in (x, wq, wk, wv, w1, b1))
    )
    assert_matches_reference(
        jax_out(y, "float32"),
        reference,
        dtype="float32",
        k=4 * D,
        stack=stack,
        device=device,
        what="the block's output",
    )


def torch_block(torch, mlp, seed: int):
    """torch's own LayerNorm and MultiheadAttention, then the implementation's MLP, every weight drawn
    from the seeded policy (no module initialiser's random numbers)."""

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.LayerNorm(D)
            self.attn = torch.nn.MultiheadAttention(D, 2, batch_first=True)
            self.w1 = torch.nn.Parameter(torch.empty(D, 2 * D))
            self.b1 = torch.nn.Parameter(torch.empty(2 * D))

        def forward(self, x):
            h = self.norm(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + mlp(x[0], self.w1, self.b1)[None] @ self.w1.T

    block = Block().eval()
    with torch.no_grad():
        for i, parameter in enumerate(block.parameters()):
            parameter.copy_(torch.from_numpy(uniform(tuple(parameter.shape), seed=seed + i)))
    return block


@pytest.mark.claim("S3.1-decompose")
@pytest.mark.parametrize("stack, device", stack_params("torch", devices=("cpu",)))
def test_torchs_own_attention_and_norm_decompose_into_matmuls_reshapes_and_reductions(impl, stack, device):
    torch = need("torch")
    from torch._decomp import get_decompositions

    block = torch_block(torch, impl.torch_forward, seed=120)
    x = torch.from_numpy(uniform((1, T, D), seed=119))
    exported = torch.export.export(block, (x,))
    written = {str(n.target) for n in exported.graph.nodes if n.op == "call_function"}
    table = torch.export.default_decompositions()  # core ATen, then softmax and the norm's own math too
    aten = torch.ops.aten
    table.update(get_decompositions([aten.native_layer_norm.default, aten._softmax.default]))
    decomposed = exported.run_decompositions(table)
    ops = collections.Counter(
        re.sub(r"^aten\.|\.\w+$", "", str(n.target)) for n in decomposed.graph.nodes if n.op == "call_function"
    )
    modules = {"scaled_dot_product_attention", "linear", "layer_norm", "multi_head_attention_forward"}
    assert {re.sub(r"^aten\.|\.\w+$", "", w) for w in written} & modules, f"as exported, modules' ops: {written}"
    assert not set(ops) & modules, f"decomposed, no module-level op remains: {dict(ops)}"
    assert ops["bmm"] + ops["mm"] + ops["addmm"] >= 5, f"Q·K·V projections, scores, values, MLP: matmuls {dict(ops)}"
    assert ops["view"] + ops["permute"] + ops["transpose"] + ops["expand"] >= 3, f"and reshapes: {dict(ops)}"
    assert ops["exp"] and ops["sum"] and ops["div"], f"softmax is exp, sum and div: {dict(ops)}"
    assert (ops["mean"] or ops["var_mean"]) and ops["rsqrt"], f"LayerNorm is a mean and an rsqrt: {dict(ops)}"
    relu = ir.torch_math_ops(decomposed, x).count("relu")  # judged by its values: relu, clamp, where, maximum...
    assert relu, f"the implementation's MLP keeps its ReLU: {dict(ops)}"
    reference = torch_block(torch, lambda a, w, b: torch.relu(a @ w + b), seed=120).double()(x.double())
    assert_matches_reference(
        decomposed.module()(x).detach().numpy(),
        reference.detach().numpy(),
        dtype="float32",
        k=4 * D,
        stack=stack,
        device=device,
        what="the decomposed block's output",
    )
