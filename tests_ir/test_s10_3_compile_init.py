"""§10.3: MAX's compile() makes a compiled artifact; init() makes a runnable model of it; load()
does both in one step. The two paths give the same model, output for output."""
import pytest

from stackcheck import assert_matches_reference, reference_forward
from stackcheck import ir, max_graphs
from stackcheck.numerics import make_inputs

pytestmark = [pytest.mark.max, pytest.mark.max_graph("math")]


@pytest.mark.claim("S10.3-compile-init")
def test_compile_then_init_is_the_model_load_gives(impl):
    x, w, b = make_inputs(5, 7, 3, seed=101)
    artifact, model = max_graphs.compile_then_init("math", impl)
    assert not hasattr(artifact, "execute") and hasattr(model, "execute"), \
        f"compile() gives an artifact ({type(artifact).__name__}), init() a runnable model ({type(model).__name__})"
    by_init = max_graphs.execute("math", impl, x, w, b, runnable=model)
    by_load = max_graphs.execute("math", impl, x, w, b)
    ir.assert_same_model(by_init, by_load)
    assert_matches_reference(by_init["y"], reference_forward(x, w, b), dtype="float32", k=7, what="Y by compile + init")
