"""MC12: MLIR is not a passport to XLA. MAX's graph is MLIR too, yet JAX/XLA's MLIR context has no
`mo` dialect and rejects it, while StableHLO parses there."""

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.run import max_graphs
from stackcheck.stacks.available import need
from stackcheck.toolchains import ir


@pytest.mark.claim("MC12")
@pytest.mark.jax
@pytest.mark.max
@pytest.mark.max_graph("structure")
def test_xla_rejects_the_mo_dialect_and_accepts_stablehlo(impl):
    context, mlir_ir = ir.xla_mlir()
    graph, _, _ = max_graphs.model("structure", impl)
    with pytest.raises(Exception, match=r"Dialect `mo' not found"):
        mlir_ir.Module.parse(str(graph), context=context)
    x, w, b = make_inputs(4, 3, 2)
    stablehlo = ir.jax_stages(impl.jax_forward, x, w, b)["stablehlo"]
    module = mlir_ir.Module.parse(stablehlo, context=context)
    assert "stablehlo.dot_general" in str(module)
    out = max_graphs.execute("structure", impl, x, w, b)
    assert_matches_reference(out["y"], reference_forward(x, w, b), dtype="float32", k=3, what="MAX's Y")
    jax_y = np.asarray(need("jax").jit(impl.jax_forward)(x, w, b))
    assert_matches_reference(jax_y, out["y"], dtype="float32", k=3, what="XLA's Y vs MAX's Y")
