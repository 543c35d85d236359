"""§3.2: "실제 최신 Transformer가 반드시 ReLU와 bias를 사용하지는 않는다. GELU, SiLU, SwiGLU와 같은 변형을
사용하거나 bias를 생략할 수 있다." The structure the week teaches carries over: X @ W with GELU or SiLU
and no bias, and SwiGLU's two matmuls, compile under jax.jit like the course's ReLU(X @ W + b): a
kernel per matmul at most (the GPU makes SwiGLU's two one GEMM) and at most one fused kernel for the
elementwise rest, however many elementwise ops
the activation writes (on the H200 ReLU and bias fuse into the GEMM itself); each gives the float64
reference's numbers."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out
from stackcheck.toolchains import ir


def variants(jax):
    """name -> (the JAX line, its float64 NumPy reference)."""

    def gelu(z):  # jax.nn.gelu's default, the tanh approximation
        return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))

    def silu(z):
        return z / (1 + np.exp(-z))

    half = 8  # SwiGLU: silu(X @ W[:, :8]) * (X @ W[:, 8:]), two matmuls of the course's W[32, 16]
    return {
        "relu+bias": (lambda x, w, b: jax.nn.relu(x @ w + b), lambda x, w, b: np.maximum(x @ w + b, 0), 1),
        "gelu": (lambda x, w, b: jax.nn.gelu(x @ w), lambda x, w, b: gelu(x @ w), 1),
        "silu": (lambda x, w, b: jax.nn.silu(x @ w), lambda x, w, b: silu(x @ w), 1),
        "swiglu": (
            lambda x, w, b: jax.nn.silu(x @ w[:, :half]) * (x @ w[:, half:]),
            lambda x, w, b: silu(x @ w[:, :half]) * (x @ w[:, half:]),
            2,
        ),
    }


@pytest.mark.claim("S3.2-variants")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_other_activations_and_no_bias_compile_like_the_course_line(evidence, stack, device):
    jax = need("jax")
    x, w, b = make_inputs(64, 32, 16, seed=160)
    args = jax_in((x, w, b), device, "float32")
    found = {}
    for name, (line, reference, matmuls) in variants(jax).items():
        lowered = jax.jit(line).lower(*args)
        compiled = lowered.compile()
        found[name] = {
            "matmuls": matmuls,
            "kernels": ir.hlo_kernel_kinds(compiled.as_text()),
            "elementwise_ops": ir.elementwise_op_count(lowered.as_text()),
        }
        want = reference(*(a.astype(np.float64) for a in (x, w, b)))
        got = jax_out(compiled(*args), "float32")
        assert_matches_reference(got, want, dtype="float32", k=32, what=name, stack=stack, device=device)
    evidence(device=device, kernels=judges.assert_variants_fuse_alike(found))
