"""§2.1/§2.3 and experiment B: b is broadcast over N rows as a view, not copied N times."""

import re

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_exact, assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params, stack_params
from stackcheck.stacks.records import jax_in, jax_out
from stackcheck.toolchains.inductor import eager_ops
from stackcheck.toolchains.ir import hlo_entry, hlo_fusions, jax_stages

N, M = 64, 5


@pytest.mark.claim("S2.3-broadcast")
@pytest.mark.numpy
def test_numpy_bias_is_a_stride_zero_view(impl):
    _, _, b = make_inputs(1, 1, M)
    view = impl.broadcast_bias(b, N)
    assert view.shape == (N, M)
    assert view.strides[0] == 0, f"rows of the broadcast bias must share memory (stride 0), got strides {view.strides}"
    assert np.shares_memory(view, b), "the broadcast bias must be a view of b, not a copy"
    assert_exact(view, np.tile(b, (N, 1)), what="the broadcast bias", N=N, M=M)


@pytest.mark.claim("S2.3-broadcast")
@pytest.mark.parametrize("device", device_params("torch"))
def test_torch_bias_is_a_stride_zero_view(impl, device):
    torch = need("torch")
    b = torch.from_numpy(make_inputs(1, 1, M)[2]).to(device)
    view = impl.torch_broadcast_bias(b, N)
    assert tuple(view.shape) == (N, M)
    assert view.stride(0) == 0, f"rows must share memory (stride 0), got stride {view.stride()}"
    assert view.untyped_storage().data_ptr() == b.untyped_storage().data_ptr(), "the view must share b's storage"
    assert view.untyped_storage().nbytes() == M * b.element_size(), "no N-fold copy of b may exist behind the view"
    assert torch.equal(view, b.unsqueeze(0).repeat(N, 1))


@pytest.mark.claim("S2.3-broadcast")
@pytest.mark.parametrize("stack, device", stack_params("torch"))
def test_torch_eager_adds_b_without_an_n_fold_copy(impl, stack, device):
    """In the stack itself: no op of eager Y = ReLU(X @ W + b) writes b's values alone into an
    [N, M] tensor of its own (a stride-0 view of b is no copy), whatever the ops are called (an add,
    an addmm that takes b, a linear); and b's values do meet X @ W's in some op."""
    torch = need("torch")
    x, w, b = make_inputs(N, 7, M, seed=5)
    tensors = [torch.from_numpy(v).to(device) for v in (x, w, b)]
    y, ops = eager_ops(impl.torch_forward, *tensors, names=("X", "W", "b"))
    copies = [
        (o["op"], t) for o in ops for t in o["written"] if t["fresh"] and t["shape"] == (N, M) and t["sources"] == ["b"]
    ]
    assert not copies, f"b[{M}] was materialized as [{N}, {M}] before the add: {copies} (all ops: {ops})"
    meets = [o["op"] for o in ops if any("b" in t["sources"] and len(t["sources"]) > 1 for t in o["written"])]
    assert meets, f"b's values must meet X @ W's in some op (the add, or a matmul that adds b): {ops}"
    assert_matches_reference(
        y.cpu().numpy(), reference_forward(x, w, b), dtype="float32", k=7, stack=stack, device=device
    )


@pytest.mark.claim("S2.3-broadcast")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_xla_broadcasts_b_inside_the_fused_add(impl, stack, device):
    """Optimized HLO: b[M] enters a fusion (or library call) as it is; the broadcast to [N, M] lives
    inside the fused computation, so no [N, M] copy of b is ever written to memory."""
    x, w, b = make_inputs(N, 7, M, seed=6)
    stages = jax_stages(impl.jax_forward, *jax_in((x, w, b), device, "float32"))
    entry = hlo_entry(stages["hlo"])
    bias = next((line.split(" = ")[0] for line in entry if re.search(rf"\[{M}\]\{{0\}} parameter\(2\)", line)), None)
    assert bias, f"b[{M}] must be the program's third parameter: {entry}"
    assert not [line for line in entry if " broadcast(" in line], f"a broadcast in ENTRY materializes [N, M]: {entry}"
    users = [line for line in entry if re.search(rf"[(,] ?{re.escape(bias)}[,)]", line)]
    assert users and all(re.search(r"= \S+ (fusion|custom-call)\(", u) for u in users), (
        f"b must go as it is into a fused computation or a library call: {users}"
    )
    fused = "\n".join(hlo_fusions(stages["hlo"]).values())
    assert re.search(rf"\[{N},{M}\]\S* broadcast\(", fused) or any("custom-call(" in u for u in users), (
        f"the broadcast of b to [{N}, {M}] must be inside a fusion: {fused}"
    )
    y = stages["compiled"](*jax_in((x, w, b), device, "float32"))
    assert_matches_reference(
        jax_out(y, "float32"), reference_forward(x, w, b), dtype="float32", k=7, stack=stack, device=device
    )
