"""§9.2/§9.3: JAX's staged path. jaxpr -> lower -> StableHLO -> compile -> optimized HLO, each its own layer."""

import re

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, reference_forward
from stackcheck.stacks.params import stack_params
from stackcheck.toolchains import ir


@pytest.mark.claim("S9.3-hlo")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_each_stage_is_its_own_layer(impl, jax_inputs, example_inputs, stack, device):
    stages = ir.jax_stages(impl.jax_forward, *jax_inputs)
    jaxpr, stablehlo, hlo = stages["jaxpr"], stages["stablehlo"], stages["hlo"]
    assert jaxpr.lstrip().startswith("{ lambda") and "stablehlo" not in jaxpr, "a jaxpr is JAX's own IR"
    assert re.search(r"^module @\S+", stablehlo, re.M) and "stablehlo.dot_general" in stablehlo, (
        "lower() gives an MLIR module in the StableHLO dialect"
    )
    separate = sorted(set(re.findall(r"= stablehlo\.(add|maximum) ", stablehlo)))
    assert separate == ["add", "maximum"], (
        f"StableHLO is before XLA's optimizations: the add and the maximum are still separate ops: {separate}"
    )
    assert hlo.startswith("HloModule"), "compile() gives XLA's optimized HLO, not MLIR"
    fusions = ir.hlo_fusions(hlo)
    fused = [name for name, body in fusions.items() if re.search(r"\badd\(", body) and re.search(r"\bmaximum\(", body)]
    assert fused, f"one fusion must hold both the add and the maximum (ReLU); fusions: {list(fusions)}\n{hlo}"
    y = stages["compiled"](*jax_inputs)
    assert_matches_reference(
        np.asarray(y), reference_forward(*example_inputs), dtype="float32", k=32, stack=stack, device=device
    )
