"""§9.4: "jax.nn.relu가 추가 호출·함수 경계를 포함한 형태로 보일 수 있으며, 이후 최적화가 이를 다시
바꿀 수 있다." In StableHLO, jax.nn.relu is a call of a private function @relu; XLA's optimized HLO has
no call left, and the maximum sits inside a fusion. The compiled program computes ReLU."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_exact, uniform
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out
from stackcheck.toolchains import ir


@pytest.mark.claim("S9.4-relu-call")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_jax_nn_relu_is_a_call_in_stablehlo_and_a_fused_maximum_once_optimized(stack, device):
    jax = need("jax")
    z = uniform((4, 6), seed=94)
    stages = ir.jax_stages(lambda v: jax.nn.relu(v) * 2, *jax_in((z,), device, "float32"))
    judges.assert_relu_call_inlined(stages["stablehlo"], stages["hlo"])
    y = stages["compiled"](*jax_in((z,), device, "float32"))
    assert_exact(jax_out(y, "float32"), np.maximum(z, 0) * 2, what="ReLU(z) * 2", stack=stack, device=device)
