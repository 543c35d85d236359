"""§11.2: the wrapper refuses what the kernel cannot take, with a ValueError saying what is wrong;
an empty input returns an empty result without a launch."""
import pytest

from stackcheck import need, stack_params


def inputs(torch, device, n=4, m=3, dtype=None):
    dtype = dtype or torch.float32
    return torch.rand(n, m, device=device, dtype=dtype), torch.rand(m, device=device, dtype=dtype)


CASES = {
    "wrong device": (lambda t, d: (t.empty(4, 3, device="meta"), t.empty(3, device="meta")), r"device meta"),
    "wrong dtype": (lambda t, d: inputs(t, d, dtype=t.float64), r"float64.*must be one of"),
    "integer dtype": (lambda t, d: (t.ones(4, 3, dtype=t.int32, device=d), t.ones(3, dtype=t.int32, device=d)),
                      r"int32"),
    "wrong rank": (lambda t, d: (t.rand(2, 4, 3, device=d), t.rand(3, device=d)), r"2-D.*\[2, 4, 3\]"),
    "shape mismatch": (lambda t, d: (t.rand(4, 3, device=d), t.rand(5, device=d)), r"\[5\].*\[4, 3\]"),
    "non-contiguous": (lambda t, d: (t.rand(3, 4, device=d).T, t.rand(3, device=d)), r"contiguous"),
    "requires grad": (lambda t, d: (t.rand(4, 3, device=d, requires_grad=True), t.rand(3, device=d)),
                      r"require grad"),
}


@pytest.mark.claim("S11.2-guard")
@pytest.mark.parametrize("stack, device", stack_params("triton"))
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_a_value_error_that_says_why(impl, launches, stack, device, case):
    torch = need("torch")
    make, message = CASES[case]
    a, b = make(torch, device)
    with pytest.raises(ValueError, match=message):
        impl.triton_bias_relu(a, b)
    assert launches() == [], "a refused input must not launch the kernel"


@pytest.mark.claim("S11.2-guard")
@pytest.mark.parametrize("stack, device", stack_params("triton", devices=("cuda",)))
def test_mixed_devices_are_refused(impl, stack, device):
    torch = need("torch")
    a, b = inputs(torch, device)
    with pytest.raises(ValueError, match=r"A is on cuda:0 but b is on cpu"):
        impl.triton_bias_relu(a, b.cpu())


@pytest.mark.claim("S11.2-guard")
@pytest.mark.parametrize("stack, device", stack_params("triton"))
@pytest.mark.parametrize("n, m", [(0, 5), (4, 0), (0, 0)])
def test_empty_input_returns_empty_without_launching(impl, launches, stack, device, n, m):
    torch = need("torch")
    a, b = inputs(torch, device, n, m)
    y = impl.triton_bias_relu(a, b)
    assert tuple(y.shape) == (n, m) and y.dtype == a.dtype and y.device == a.device
    assert launches() == [], f"an empty input launched the kernel: {launches()}"
