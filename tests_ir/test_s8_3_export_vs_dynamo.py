"""§8.3: torch.export's graph and the graph Dynamo hands torch.compile's backend are two graphs of
one computation: ATen operator overloads in one, Python-level torch functions in the other."""

import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import assert_matches_reference, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import ir


@pytest.mark.claim("S8.3-export-vs-dynamo")
@pytest.mark.parametrize("device", device_params("torch_compile"))
def test_export_and_dynamo_graphs_differ_in_level(impl, torch_inputs, example_inputs):
    torch = need("torch")

    class Forward(torch.nn.Module):
        def forward(self, x, w, b):
            return impl.torch_forward(x, w, b)

    exported = torch.export.export(Forward(), tuple(torch_inputs))
    module = exported.module()
    graphs, y = ir.dynamo_graphs(impl.torch_forward, *torch_inputs)
    assert len(graphs) == 1, "one Dynamo graph"
    inputs = graphs[0].meta["example_inputs"]
    families = (
        ir.torch_math_ops(ir.core_aten(module, *torch_inputs), *torch_inputs),
        ir.torch_math_ops(ir.core_aten(graphs[0], *inputs), *inputs),
    )
    judges.assert_export_and_dynamo_levels(ir.call_targets(exported.graph), ir.call_targets(graphs[0].graph), families)
    for result in (module(*torch_inputs), y):
        assert_matches_reference(result.cpu().numpy(), reference_forward(*example_inputs), dtype="float32", k=32)
