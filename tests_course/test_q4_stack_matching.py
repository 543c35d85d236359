"""Checkpoint 4 (after §12): each component sits at its own layer: Dynamo captures, StableHLO is a
high-level IR, Inductor compiles, PJRT is the device runtime: the learner's forward is handed from
layer to layer by the installed stacks, each object the one §12.1's table names. (That the answer
key agrees with the table is the suite's own data: tests_plugin/test_layers_table.py.)"""

import numpy as np
import pytest

from stackcheck.claims import layers
from stackcheck.evidence.numerics import as_numpy, assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.stacks.records import jax_in, jax_platform, torch_in


@pytest.mark.claim("Q4")
@pytest.mark.parametrize("device", device_params("jax"))
def test_jax_hands_the_forward_from_layer_to_layer(impl, device):
    """make_jaxpr captures; lower() gives the IR (StableHLO); compile() gives XLA's executable; it runs
    on a PJRT device: each object is what §12.1's table says that layer exposes."""
    jax = need("jax")
    row = layers.LAYERS["jax"]
    x, w, b = make_inputs(5, 4, 3, seed=44)
    args = jax_in((x, w, b), device, "float32")
    assert "dot_general" in str(layers.exposed(row["capture"][1])(impl.jax_forward)(*args))
    lowered = jax.jit(impl.jax_forward).lower(*args)
    compiled = lowered.compile()
    assert isinstance(lowered, layers.exposed(row["high-level IR"][1])) and "stablehlo" in lowered.as_text()
    assert isinstance(compiled, layers.exposed(row["compiler"][1]))
    y = compiled(*args)
    pjrt_devices = layers.exposed(row["device runtime"][1])(jax_platform(device))
    assert y.devices() <= set(pjrt_devices), "the result lives on a PJRT device"
    assert {d.platform for d in y.devices()} == {jax_platform(device)}, f"the result should be on {device}"
    assert_matches_reference(np.asarray(y), reference_forward(x, w, b), dtype="float32", k=4)


@pytest.mark.claim("Q4")
@pytest.mark.parametrize("device", device_params("torch_compile"))
def test_torch_hands_the_forward_from_dynamo_to_inductor(impl, device):
    """Dynamo captures an FX graph and hands it to the compiler backend, which is Inductor."""
    torch = need("torch")
    row = layers.LAYERS["torch"]
    inductor = layers.exposed(row["compiler"][1])
    graphs = []

    def backend(graph_module, example_inputs):
        graphs.append(graph_module)
        return inductor(graph_module, example_inputs)

    torch._dynamo.reset()
    inputs = make_inputs(5, 4, 3, seed=45)
    y = torch.compile(impl.torch_forward, backend=backend)(*torch_in(inputs, device, "float32"))
    assert graphs and all(isinstance(g, layers.exposed(row["high-level IR"][1])) for g in graphs), graphs
    assert y.device.type == device, f"the compiled forward ran on {y.device}, not {device}"
    assert_matches_reference(as_numpy(y), reference_forward(*inputs), dtype="float32", k=4)
