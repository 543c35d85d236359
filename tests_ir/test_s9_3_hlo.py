"""§9.2/§9.3: JAX's staged path. jaxpr -> lower -> StableHLO -> compile -> optimized HLO, each its own layer."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, reference_forward
from stackcheck.stacks.params import stack_params
from stackcheck.toolchains import ir


@pytest.mark.claim("S9.3-hlo")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_each_stage_is_its_own_layer(impl, jax_inputs, example_inputs, stack, device):
    stages = ir.jax_stages(impl.jax_forward, *jax_inputs)
    jaxpr, stablehlo, hlo = stages["jaxpr"], stages["stablehlo"], stages["hlo"]
    assert jaxpr.lstrip().startswith("{ lambda") and "stablehlo" not in jaxpr, "a jaxpr is JAX's own IR"
    judges.assert_stablehlo_and_hlo_are_different_irs(stablehlo, hlo)
    y = stages["compiled"](*jax_inputs)
    assert_matches_reference(
        np.asarray(y), reference_forward(*example_inputs), dtype="float32", k=32, stack=stack, device=device
    )
