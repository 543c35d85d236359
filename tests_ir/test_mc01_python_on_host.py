"""MC01: Python does not run on the device. It runs on the host, while tracing; what repeats on the
device is the compiled program."""

import numpy as np
import pytest

from stackcheck.evidence.compiles import jax_compiles
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.stacks.records import jax_device
from stackcheck.toolchains import ir


@pytest.mark.claim("MC01")
@pytest.mark.parametrize("device", device_params("jax"))
def test_python_side_effect_runs_once_at_trace_time(impl, device):
    jax = need("jax")
    ran = []

    def forward(x, w, b):
        ran.append("python ran")  # host Python: happens while JAX traces, not on the device
        return impl.jax_forward(x, w, b)

    compiled = jax.jit(forward)
    target = jax_device(device)
    x, w, b = make_inputs(8, 4, 3)
    args = [jax.device_put(v, target) for v in (x, w, b)]
    with jax_compiles() as count:
        results = [compiled(*args) for _ in range(5)]
    assert len(ran) == 1, f"5 calls, but the Python body ran {len(ran)} times"
    assert count.compiles == 1, "one device program, compiled once, run five times"
    for y in results:
        assert_matches_reference(np.asarray(y), reference_forward(x, w, b), dtype="float32", k=4)


@pytest.mark.claim("MC01")
@pytest.mark.parametrize("device", device_params("torch_compile"))
def test_torch_graph_holds_only_tensor_ops(torch_inputs, example_inputs):
    """Dynamo replays a Python side effect on the host after each call; the graph it hands the
    compiler, which is what becomes device code, holds tensor ops only."""
    ran = []

    def forward(x, w, b):
        ran.append(1)
        return (x @ w + b).relu()

    graphs, y = ir.dynamo_graphs(forward, *torch_inputs)
    assert len(graphs) == 1
    targets = [str(node.target) for node in graphs[0].graph.nodes if node.op in ("call_function", "call_method")]
    inputs = graphs[0].meta["example_inputs"]
    assert ir.torch_math_ops(ir.core_aten(graphs[0], *inputs), *inputs) == ["matmul", "add", "relu"], (
        f"the graph holds the tensor ops and nothing else: {targets}"
    )
    ran.clear()
    compiled = need("torch").compile(forward)
    for _ in range(3):
        compiled(*torch_inputs)
    assert len(ran) == 3, f"the host runs the Python append on every call, beside the graph: {len(ran)} for 3 calls"
    assert_matches_reference(y.cpu().numpy(), reference_forward(*example_inputs), dtype="float32", k=32)
