"""Checkpoint 4 (after §12) and MC11: each component sits at its own layer. For each stack, the
learner's forward is handed from layer to layer, and each layer is read from what it produced: the
captured program and the high-level IR hold the line's matmul, add and ReLU (the ReLU by what it
computes on probe values, however it is spelled), the compiler runs them in fewer kernels than ops,
and the runtime's result lives on the device with the reference's numbers. MAX + Mojo is read layer
for layer beside the whole XLA stack (MC11), not beside one of XLA's layers. (That the answer key
agrees with §12.1's table is the suite's own data: tests_plugin/test_layers_table.py.)"""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.claims import layers
from stackcheck.evidence.numerics import as_numpy, assert_matches_reference, make_inputs, reference_forward
from stackcheck.run import max_graphs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params, tolerance_row
from stackcheck.stacks.records import jax_in, jax_platform, torch_in
from stackcheck.toolchains import ir, pointwise
from stackcheck.toolchains.inductor import compile_and_read


@pytest.mark.claim("Q4", "MC11")
@pytest.mark.parametrize("device", device_params("jax"))
def test_jax_hands_the_forward_from_layer_to_layer(impl, device, evidence):
    """Tracing captures a jaxpr; lowering gives StableHLO (MLIR); XLA compiles it to kernels; PJRT
    runs them on the device."""
    need("jax")
    x, w, b = make_inputs(5, 4, 3, seed=44)
    args = jax_in((x, w, b), device, "float32")
    stages = ir.jax_stages(impl.jax_forward, *args)
    found = {
        "captured": pointwise.families(stages["jaxpr"], "jaxpr"),
        "IR": pointwise.families(stages["stablehlo"], "stablehlo"),
        "kernels": ir.hlo_kernels(stages["hlo"]),
    }
    evidence(device=device, **judges.assert_layers_hand_off("JAX", found))
    assert ir.parses_as_mlir(stages["stablehlo"]) and not ir.parses_as_mlir(stages["jaxpr"]), (
        "the high-level IR is an MLIR module (StableHLO); the captured jaxpr is not"
    )
    y = stages["compiled"](*args)
    pjrt_devices = layers.exposed(layers.LAYERS["jax"]["device runtime"][1])(jax_platform(device))
    assert y.devices() <= set(pjrt_devices), f"the result should live on a PJRT {device} device: {y.devices()}"
    assert_matches_reference(np.asarray(y), reference_forward(x, w, b), dtype="float32", k=4)


@pytest.mark.claim("Q4")
@pytest.mark.parametrize("device", device_params("torch_compile"))
def test_torch_hands_the_forward_from_dynamo_to_inductor(impl, device, evidence):
    """Dynamo captures an FX graph of Python-level torch calls and hands it to the compiler backend,
    Inductor, which works on ATen ops and writes the kernels that run on the device."""
    torch = need("torch")
    inductor = layers.exposed(layers.LAYERS["torch"]["compiler"][1])
    graphs = []

    def backend(graph_module, example_inputs):
        graphs.append((graph_module, list(example_inputs)))
        return inductor(graph_module, example_inputs)

    inputs = make_inputs(5, 4, 3, seed=45)
    args = torch_in(inputs, device, "float32")
    generated = compile_and_read(impl.torch_forward, *args, backend=backend)
    captured = [f for gm, given in graphs for f in ir.torch_math_ops(ir.core_aten(gm, *given), *given)]
    found = {
        "captured": captured,
        "IR": ir.torch_math_ops(ir.core_aten(impl.torch_forward, *args), *args),
        "kernels": generated.externs + generated.kernels,
    }
    evidence(device=device, **judges.assert_layers_hand_off("torch", found))
    aten = [t for gm, _ in graphs for t in ir.call_targets(gm.graph) if t.startswith("aten.")]
    assert graphs and not aten, f"Dynamo's graph calls Python-level torch functions, not ATen ops: {aten}"
    assert isinstance(generated.result, torch.Tensor) and generated.result.device.type == device, (
        f"the compiled forward's result should be a tensor on {device}: {generated.result!r}"
    )
    assert_matches_reference(as_numpy(generated.result), reference_forward(*inputs), dtype="float32", k=4)


@pytest.mark.claim("Q4", "MC11")
@pytest.mark.max
@pytest.mark.max_graph("structure")
@pytest.mark.parametrize("device", device_params("max"))
def test_max_hands_the_forward_from_layer_to_layer(impl, device, evidence):
    """The learner's max_steps runs while the graph is built and records symbols (capture); the graph
    is MO, MLIR of MAX's own dialect (the high-level IR; in MAX, capture and IR are this one graph);
    InferenceSession compiles it to kernels, read from the model's kernel summaries; the model runs on
    the MAX device."""
    need("max")
    kind = max_graphs.on_device("structure", device)
    graph, model, _ = max_graphs.model(kind, impl)
    text = str(graph)
    assert text.lstrip().startswith("mo.graph"), f"MAX's graph is MLIR in the mo dialect:\n{text[:1000]}"
    found = {"captured": pointwise.families(text, "mo"), "IR": pointwise.families(text, "mo")}
    found["kernels"] = ir.max_kernels(model)
    evidence(device=device, **judges.assert_layers_hand_off("MAX", found))
    on = max_graphs.device_of(kind)
    assert all(d.label == on.label for d in model.output_devices), (
        f"the model's results should live on the {on.label} device: {model.output_devices}"
    )
    x, w, b = make_inputs(5, 4, 3, seed=46)
    y = max_graphs.execute(kind, impl, x, w, b)["y"]
    row = tolerance_row("max", device, "float32")  # MAX multiplies float32 in TF32 on a GPU
    assert_matches_reference(y, reference_forward(x, w, b), dtype=row, k=4, what=f"MAX's Y on {device}")
