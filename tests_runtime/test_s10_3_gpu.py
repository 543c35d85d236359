"""§10.3: the example keeps CPU() as its device for the simplest observation; with a supported GPU
and MAX, choosing Accelerator() runs the same graph there. The graph, with the built-in ReLU and
the Mojo custom op study_relu (whose `target` parameter picks CPU or GPU code at compile time),
on the GPU gives what it gives on the CPU. Needs MAX and a GPU that MAX sees."""
import pytest

from stackcheck import env, max_graphs, need
from stackcheck.numerics import assert_outputs_match, make_inputs, reference_forward

pytestmark = [pytest.mark.max, pytest.mark.mojo, pytest.mark.max_graph("structure-gpu")]


@pytest.mark.claim("S10.3-gpu")
@pytest.mark.cuda
def test_the_graph_on_accelerator_matches_the_cpu(impl, evidence):
    need("max")
    from max import driver

    if driver.accelerator_count() == 0:
        raise env.Missing("MAX sees no GPU (max.driver.accelerator_count() == 0)", "cuda")
    x, w, b = make_inputs(33, 65, 17, seed=103)  # sizes no vector width or block divides
    on_gpu = max_graphs.execute("structure-gpu", impl, x, w, b)
    on_cpu = max_graphs.execute("structure", impl, x, w, b)
    evidence(device=driver.accelerator_architecture_name(), outputs=sorted(on_gpu))
    assert_outputs_match(on_gpu, on_cpu, dtype="float32", k=65, where="the MAX graph on Accelerator() vs CPU()")
    assert_outputs_match(on_gpu, {name: reference_forward(x, w, b) for name in on_cpu}, dtype="float32", k=65,
                         where="the MAX graph on Accelerator()")
