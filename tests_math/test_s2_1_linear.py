"""§2.1: the course's W is [K, M] = [in, out]; nn.Linear stores weight as [out, in], i.e. W transposed."""

import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, mismatch_report, tolerance
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params, stack_params


@pytest.mark.claim("S2.1-linear")
@pytest.mark.parametrize("stack, device", stack_params("torch"))
@pytest.mark.parametrize("k, m", [(3, 2), (16, 16)])
def test_linear_weight_is_w_transposed(impl, stack, device, k, m):
    torch = need("torch")
    x_np, w_np, b_np = make_inputs(5, k, m, seed=k)
    linear = torch.nn.Linear(k, m).to(device)
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(w_np.T))
        linear.bias.copy_(torch.from_numpy(b_np))
        x = torch.from_numpy(x_np).to(device)
        w = impl.w_from_linear(linear)
        assert tuple(w.shape) == (k, m), (
            f"W must be [K, M] = [{k}, {m}]; nn.Linear.weight is {list(linear.weight.shape)}"
        )
        assert_matches_reference(  # W judged on its own first, so a wrong forward is not blamed on it
            w.cpu().numpy(), w_np, dtype="float32", k=1, what="w_from_linear(linear) vs the course's W[K, M]"
        )
        y = impl.torch_forward(x, w, linear.bias)
        expected = torch.relu(linear(x))
    assert_matches_reference(
        y.cpu().numpy(),
        expected.cpu().numpy(),
        dtype="float32",
        k=k,
        stack=stack,
        device=device,
        what="w_from_linear was right; torch_forward(X, W, bias) vs ReLU(linear(X))",
    )


@pytest.mark.claim("S2.1-linear")
@pytest.mark.parametrize("device", device_params("torch"))
def test_untransposed_weight_is_wrong(device):
    """Using nn.Linear.weight as W is a shape error when K != M, and silently wrong when K == M."""
    torch = need("torch")
    x = torch.from_numpy(make_inputs(5, 3, 2)[0]).to(device)
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        x @ torch.nn.Linear(3, 2).to(device).weight
    x_sq, w_sq, _ = make_inputs(5, 16, 16, seed=1)
    square = torch.nn.Linear(16, 16, bias=False).to(device)
    with torch.no_grad():
        square.weight.copy_(torch.from_numpy(w_sq.T))
        x_sq = torch.from_numpy(x_sq).to(device)
        wrong = (x_sq @ square.weight).cpu().numpy()
        right = square(x_sq).cpu().numpy()
    assert mismatch_report(wrong, right, tolerance("float32", 16)) is not None, (
        "with K == M the untransposed weight must give different numbers (it is W transposed)"
    )
