"""§10.2: building a MAX graph records ops and computes nothing; values exist after compile + execute."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence import timing
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.run import max_graphs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params, tolerance_row


@pytest.mark.claim("S10.2-record")
@pytest.mark.max_graph("structure")
@pytest.mark.parametrize("device", device_params("max"))
def test_building_records_and_only_execution_computes(impl, device):
    need("max")
    from max.driver import Buffer
    from max.dtype import DType
    from max.graph import DeviceRef, Graph, TensorType, TensorValue

    kind = max_graphs.on_device("structure", device)
    ref = DeviceRef.from_device(max_graphs.device_of(kind))
    huge = 100_000  # X @ W at this size is 10^15 multiply-adds and 40 GB per operand: never computed here
    types = [TensorType(DType.float32, shape, device=ref) for shape in ([huge, huge], [huge, huge], [huge])]
    clock = timing.stopwatch()
    with Graph("recorded_only", input_types=types) as graph:
        x, w, b = (v.tensor for v in graph.inputs)
        y = impl.max_steps(x, w, b)[2]
        graph.output(y)
    seconds = clock()
    assert isinstance(y, TensorValue) and not isinstance(y, Buffer), "a graph value is a symbol, not data"
    assert not hasattr(y, "to_numpy"), "a recorded value has no numbers to read"
    assert seconds < 10, f"recording a 10^15-FLOP graph took {seconds:.1f} s: it must not compute"
    judges.assert_ops_in_order(str(graph), ["matmul", "add", "relu"], "the recorded graph")
    x_np, w_np, b_np = make_inputs(5, 4, 3)
    outputs = max_graphs.execute(kind, impl, x_np, w_np, b_np)  # compile + execute: now values exist
    assert isinstance(outputs["y"], np.ndarray)
    assert_matches_reference(
        outputs["y"], reference_forward(x_np, w_np, b_np), dtype=tolerance_row("max", device, "float32"), k=4
    )
