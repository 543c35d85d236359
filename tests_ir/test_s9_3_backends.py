"""§9.3: "버전과 backend에 따라 연산 이름, 출력 형식, 가용성이 달라질 수 있다." and §12.5: "라이브러리 지원
수준과 컴파일러 최적화도 다르다." The course's line compiled by one JAX for two backends, the CPU and a
GPU: the optimized HLO of each holds the matmul under its own name, a library of its own (the CPU a
library fusion or a dot, the GPU a cuBLAS custom call or a GEMM fusion); the two optimize it
differently (the instructions that run and the intermediates kept in memory); and the two give the
same numbers."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in
from stackcheck.toolchains import ir


@pytest.mark.claim("S9.3-backends")
@pytest.mark.parametrize("stack, device", stack_params("jax", devices=("cuda",)))
def test_backends_print_the_matmul_their_own_way(evidence, stack, device):
    jax = need("jax")

    def line(x, w, b):
        return jax.nn.relu(x @ w + b)

    x, w, b = make_inputs(64, 32, 16, seed=158)
    compiled = {d: jax.jit(line).lower(*jax_in((x, w, b), d, "float32")).compile() for d in ("cpu", device)}
    names = {d: ir.hlo_matmul_op(c.as_text()) for d, c in compiled.items()}
    evidence(matmul_op=judges.assert_backends_name_the_matmul_differently(names))
    optimized = {d: ir.hlo_optimization(c.as_text(), f"f32[{x.shape[0]},{w.shape[1]}]") for d, c in compiled.items()}
    evidence(optimized=judges.assert_backends_optimize_differently(optimized))
    ys = {d: np.asarray(c(*jax_in((x, w, b), d, "float32"))) for d, c in compiled.items()}
    for d, y in ys.items():
        assert_matches_reference(y, reference_forward(x, w, b), dtype="float32", k=32, stack=stack, device=d)
