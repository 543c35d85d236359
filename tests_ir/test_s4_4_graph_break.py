"""§4.4: a graph break cuts the compiled region; results stay right; fullgraph=True refuses it;
a shape change recompiles when shapes are static."""

import numpy as np
import pytest

from stackcheck.evidence.compiles import torch_compiles
from stackcheck.evidence.numerics import assert_exact, assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains.inductor import compile_and_read


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


def epilogue(a, b):
    return torch_module().relu(a + b)


def epilogue_with_print(a, b):
    z = a + b
    print("z computed")
    return torch_module().relu(z)


def torch_module():
    return need("torch")


@pytest.mark.claim("S4.4-graph-break")
@pytest.mark.parametrize("device", device_params("torch_compile"))
def test_a_break_costs_the_fusion_of_add_and_relu(device):
    """What a break costs: in one graph Inductor fuses + b and ReLU into one kernel; with a break
    between them each graph gets its own kernel, and Z makes a round trip through memory. (A is
    given: on CPU Inductor folds + b into the GEMM library call, whether or not there is a break.)"""
    torch = need("torch")
    x, w, b_np = make_inputs(64, 16, 32, seed=8)
    a_np = x @ w
    a, b = torch.from_numpy(a_np).to(device), torch.from_numpy(b_np).to(device)
    whole = compile_and_read(epilogue, a, b)
    split = compile_and_read(epilogue_with_print, a, b)

    def fused_add_relu(generated):
        return [k for k in generated.kernels if {"add", "relu"} <= set(k.split("_"))]

    assert whole.programs == 1 and fused_add_relu(whole), (
        f"one graph: + b and ReLU fused in one kernel: {whole.programs} graph(s), kernels {whole.kernels}"
    )
    assert split.programs >= 2 and not fused_add_relu(split) and len(split.kernels) >= 2, (
        f"broken between add and ReLU, they cannot fuse: {split.programs} graph(s), kernels {split.kernels}"
    )
    expected = np.maximum(a_np + b_np, np.float32(0))  # one float32 add and a max: exact in every order
    for generated in (whole, split):
        assert_exact(generated.result.cpu().numpy(), expected, what="ReLU(A + b)", device=device)
