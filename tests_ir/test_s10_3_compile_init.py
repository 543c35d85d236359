"""§10.3: MAX's compile() makes a compiled artifact; init() makes a runnable model of it; load()
does both in one step. The two paths give the same model, output for output."""

import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.run import max_graphs
from stackcheck.stacks.params import device_params, tolerance_row
from stackcheck.toolchains import ir

pytestmark = [pytest.mark.max, pytest.mark.max_graph("math")]


@pytest.mark.claim("S10.3-compile-init")
@pytest.mark.parametrize("device", device_params("max"))
def test_compile_then_init_is_the_model_load_gives(impl, device):
    x, w, b = make_inputs(5, 7, 3, seed=101)
    kind = max_graphs.on_device("math", device)
    artifact, model = max_graphs.compile_then_init(kind, impl)
    assert not hasattr(artifact, "execute") and hasattr(model, "execute"), (
        f"compile() gives an artifact ({type(artifact).__name__}), init() a runnable model ({type(model).__name__})"
    )
    by_init = max_graphs.execute(kind, impl, x, w, b, runnable=model)
    by_load = max_graphs.execute(kind, impl, x, w, b)
    ir.assert_same_model(by_init, by_load)
    assert_matches_reference(
        by_init["y"],
        reference_forward(x, w, b),
        dtype=tolerance_row("max", device, "float32"),
        k=7,
        what=f"Y by compile + init on {device}",
    )
