"""§10.3: MAX's compile() makes a compiled artifact; init() makes a runnable model of it; load()
does both in one step. The two paths give the same model, output for output."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_outputs_match, make_inputs, reference_forward
from stackcheck.run import max_graphs
from stackcheck.stacks.params import device_params, tolerance_row

pytestmark = [pytest.mark.max, pytest.mark.max_graph("math")]


@pytest.mark.claim("S10.3-compile-init")
@pytest.mark.parametrize("device", device_params("max"))
def test_compile_then_init_is_the_model_load_gives(impl, device):
    x, w, b = make_inputs(5, 7, 3, seed=101)
    kind = max_graphs.on_device("math", device)
    judges.assert_steps_recorded(max_graphs.built(kind, impl))  # A, Z and Y as the graph records them
    artifact, model = max_graphs.compile_then_init(kind, impl)
    assert not hasattr(artifact, "execute") and hasattr(model, "execute"), (
        f"compile() gives an artifact ({type(artifact).__name__}), init() a runnable model ({type(model).__name__})"
    )
    assert model is not max_graphs.model(kind, impl)[1], "init() made a model of its own, not load()'s"
    by_init = max_graphs.execute(kind, impl, x, w, b, runnable=model)
    by_load = max_graphs.execute(kind, impl, x, w, b)
    judges.assert_same_model(by_init, by_load)
    a = x.astype(np.float64) @ w.astype(np.float64)
    assert_outputs_match(  # every step of max_steps, not Y alone: a Z without b must not pass
        {name: by_init[name] for name in ("a", "z", "y")},
        {"a": a, "z": a + b, "y": reference_forward(x, w, b)},
        dtype=tolerance_row("max", device, "float32"),
        k=7,
        where=f"A, Z, Y by compile + init on {device}",
    )
