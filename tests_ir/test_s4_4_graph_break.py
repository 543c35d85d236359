"""§4.4: a graph break cuts the compiled region; results stay right; fullgraph=True refuses it;
a shape change recompiles when shapes are static."""
import pytest

from stackcheck import assert_matches_reference, need, reference_forward, device_params
from stackcheck.compiles import torch_compiles
from stackcheck.numerics import make_inputs


def with_print(x, w, b):
    z = x @ w + b
    print("z computed")  # Python I/O: Dynamo cannot put it in a graph
    return z.relu()


def with_branch(x, w, b):
    z = x @ w + b
    if z.sum() > 0:  # data-dependent control flow: the branch depends on values
        return z.relu()
    return z.relu() * 1


@pytest.mark.claim("S4.4-graph-break")
@pytest.mark.parametrize("device", device_params("torch_compile"))
def test_the_course_forward_is_one_graph(impl, torch_inputs, example_inputs):
    torch = need("torch")
    explained = torch._dynamo.explain(impl.torch_forward)(*torch_inputs)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained.break_reasons
    y = torch.compile(impl.torch_forward, fullgraph=True)(*torch_inputs)
    assert_matches_reference(y.cpu().numpy(), reference_forward(*example_inputs), dtype="float32", k=32)


@pytest.mark.claim("S4.4-graph-break")
@pytest.mark.parametrize("device", device_params("torch_compile"))
@pytest.mark.parametrize("fn", [with_print, with_branch], ids=["print", "data-dependent-branch"])
def test_a_break_splits_the_graph_but_not_the_result(torch_inputs, example_inputs, fn):
    torch = need("torch")
    torch._dynamo.reset()
    explained = torch._dynamo.explain(fn)(*torch_inputs)
    assert explained.graph_break_count >= 1 and explained.graph_count >= 2, explained
    assert all(str(r.reason).strip() for r in explained.break_reasons), "each break has a reason"
    y = torch.compile(fn)(*torch_inputs)
    assert_matches_reference(y.cpu().numpy(), reference_forward(*example_inputs), dtype="float32", k=32)
    torch._dynamo.reset()  # or the cached graphs of the call above would be reused
    with pytest.raises(Exception, match=r"(?i)graph break|unsupported|data-dependent|print"):
        torch.compile(fn, fullgraph=True)(*torch_inputs)


@pytest.mark.claim("S4.4-graph-break")
@pytest.mark.parametrize("device", device_params("torch_compile"))
def test_a_shape_change_recompiles_with_static_shapes(impl, device):
    torch = need("torch")

    def forward(x, w, b):
        return impl.torch_forward(x, w, b)

    compiled = torch.compile(forward, dynamic=False)
    counts = []
    for n in (4, 4, 5):
        x, w, b = make_inputs(n, 8, 3, seed=n)
        with torch_compiles() as count:
            y = compiled(*(torch.from_numpy(v).to(device) for v in (x, w, b)))
        counts.append(count.compiles)
        assert_matches_reference(y.cpu().numpy(), reference_forward(x, w, b), dtype="float32", k=8)
    assert counts == [1, 0, 1], f"compiles per call for N = 4, 4, 5: {counts}"
