"""§10.4: "출력 shape를 Python에서 명시하므로 이 예제에는 별도 shape function을 넣지 않는다." The output
type of ``ops.custom`` is what Python declares in ``out_types``: MAX infers none from the op and
checks none against its input. Declared wrong (another shape, another dtype), the graph carries the
wrong type as given, where a built-in op's type follows its input. Declared right, the graph runs and
gives ReLU."""

import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.run import max_graphs

pytestmark = [pytest.mark.mojo, pytest.mark.max, pytest.mark.max_graph("structure")]


def output_types(declared: list[tuple[str, list[int]]]) -> dict:
    """For a float32 [2, 3] input: the type of study_relu's output as each (dtype, shape) declares it,
    and the built-in relu's, in graphs that are built, not compiled."""
    from max.driver import CPU
    from max.dtype import DType
    from max.graph import DeviceRef, Graph, TensorType, ops

    from stackcheck.impl import reference
    from stackcheck.toolchains import mojo_build

    ref = DeviceRef.from_device(CPU())
    given = TensorType(DType.float32, [2, 3], device=ref)
    found = {}
    for dtype, shape in declared:
        out = TensorType(getattr(DType, dtype), shape, device=ref)
        with Graph(
            f"declared_{dtype}_{'x'.join(map(str, shape))}",
            input_types=[given],
            custom_extensions=[mojo_build.stable_package(reference.mojo_package())],
        ) as graph:
            y = ops.custom("study_relu", device=ref, values=[graph.inputs[0].tensor], out_types=[out])[0].tensor
            graph.output(y)
        found[(dtype, tuple(shape))] = (str(y.dtype).split(".")[-1], [int(d) for d in y.shape])
    with Graph("builtin_relu", input_types=[given]) as graph:
        y = ops.relu(graph.inputs[0].tensor)
        graph.output(y)
    found["built-in relu"] = (str(y.dtype).split(".")[-1], [int(d) for d in y.shape])
    return found


@pytest.mark.claim("S10.4-out-types")
def test_the_output_type_is_declared_not_inferred(impl, evidence):
    declared = [("float32", [2, 5]), ("float32", [4, 3]), ("float16", [2, 3])]
    found = output_types(declared)
    evidence(types={str(k): v for k, v in found.items()})
    judges.assert_output_type_declared(("float32", [2, 3]), found)
    x, w, b = make_inputs(5, 4, 3, seed=153)
    y = max_graphs.execute(max_graphs.on_device("structure", "cpu"), impl, x, w, b)["y_mojo"]
    assert_matches_reference(
        y, reference_forward(x, w, b), dtype="float32", k=4, what="Y with study_relu declared right"
    )
