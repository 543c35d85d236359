"""§5.1: "XLA 공식 아키텍처는 하드웨어 독립 최적화, 대상별 최적화, 라이브러리 호출 선택, 대상별 코드
생성의 단계를 설명한다." XLA, dumping the course's line after every pass that changed it, shows those
stages in that order: algebraic simplification, then layout assignment, then the matmul handed to a
library (the CPU's dot-library rewriter, the GPU's GEMM rewriter), then the target's code (LLVM IR,
PTX)."""

import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out
from stackcheck.toolchains import ir


@pytest.mark.claim("S5.1-passes")
@pytest.mark.parametrize("stack, device", stack_params("jax", devices=("cpu", "cuda")))  # a TPU calls no library
def test_xla_passes_run_in_the_courses_stages(evidence, stack, device, tmp_path):
    jax = need("jax")

    def line(x, w, b):
        return jax.nn.relu(x @ w + b)

    x, w, b = make_inputs(64, 32, 16, seed=152)
    args = jax_in((x, w, b), device, "float32")
    names = ir.xla_pass_dump(line, *args, folder=tmp_path)
    evidence(device=device, first_dump_of_each_stage=judges.assert_xla_stages_in_order(names))
    assert_matches_reference(
        jax_out(jax.jit(line)(*args), "float32"),
        reference_forward(x, w, b),
        dtype="float32",
        k=32,
        stack=stack,
        device=device,
    )
