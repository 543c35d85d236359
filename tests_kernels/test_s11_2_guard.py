"""§11.2: the wrapper refuses what the kernel cannot take, with a ValueError saying what is wrong;
an empty input returns an empty result without a launch.

The course's wrapper promises exactly this: inputs on one CUDA device, float32, A[N, M] with b[M],
contiguous, no autograd, each refused with a ValueError; an empty A returns at once. Each of those
refusals is a case below. The suite's wrapper extends the course in two places, and says so in
its docstring (stackcheck.impl.reference.triton_bias_relu): it also runs on the CPU through Triton's
interpreter, and it also takes float16 and bfloat16 (so a float64 or integer input is what the
dtype cases refuse), plus ``block_size`` and ``out``, which the listing fixes or lacks."""

import pytest

from stackcheck.evidence.numerics import uniform
from stackcheck.impl.contract import shape_spelled
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params


def rand(t, *shape, device, dtype=None, requires_grad=False):
    """A seeded uniform tensor (the suite's one random source)."""
    return t.from_numpy(uniform(shape, seed=sum(shape))).to(device, dtype or t.float32).requires_grad_(requires_grad)


def inputs(torch, device, n=4, m=3, dtype=None):
    return rand(torch, n, m, device=device, dtype=dtype), rand(torch, m, device=device, dtype=dtype)


# Each case: the inputs, and what the message must name (in any wording): the device, the dtype, the
# shape in any common spelling, both shapes in any order, contiguity or strides, gradients.
CASES = {
    "wrong device": (lambda t, d: (t.empty(4, 3, device="meta"), t.empty(3, device="meta")), r"meta"),
    "wrong dtype": (lambda t, d: inputs(t, d, dtype=t.float64), r"float64"),
    "integer dtype": (
        lambda t, d: (t.ones(4, 3, dtype=t.int32, device=d), t.ones(3, dtype=t.int32, device=d)),
        r"int32",
    ),
    "wrong rank": (lambda t, d: (rand(t, 2, 4, 3, device=d), rand(t, 3, device=d)), shape_spelled((2, 4, 3))),
    "shape mismatch": (
        lambda t, d: (rand(t, 4, 3, device=d), rand(t, 5, device=d)),
        rf"(?s)(?=.*{shape_spelled((5,))})(?=.*{shape_spelled((4, 3))})",
    ),
    "non-contiguous": (lambda t, d: (rand(t, 3, 4, device=d).T, rand(t, 3, device=d)), r"(?i)contiguous|stride"),
    "requires grad": (
        lambda t, d: (rand(t, 4, 3, device=d, requires_grad=True), rand(t, 3, device=d)),
        r"(?i)grad",
    ),
}


@pytest.mark.claim("S11.2-guard")
@pytest.mark.parametrize("device", device_params("triton"))
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_a_value_error_that_says_why(impl, launches, device, case):
    torch = need("torch")
    make, message = CASES[case]
    a, b = make(torch, device)
    with pytest.raises(ValueError, match=message):
        impl.triton_bias_relu(a, b)
    assert launches() == [], "a refused input must not launch the kernel"


@pytest.mark.claim("S11.2-guard")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
def test_mixed_devices_are_refused(impl, device):
    torch = need("torch")
    a, b = inputs(torch, device)
    with pytest.raises(ValueError, match=r"(?s)(?=.*\bcuda)(?=.*\bcpu\b)"):  # both devices, in any wording
        impl.triton_bias_relu(a, b.cpu())


@pytest.mark.claim("S11.2-guard")
@pytest.mark.parametrize("device", device_params("triton"))
@pytest.mark.parametrize("n, m", [(0, 5), (4, 0), (0, 0)])
def test_empty_input_returns_empty_without_launching(impl, launches, device, n, m):
    torch = need("torch")
    a, b = inputs(torch, device, n, m)
    y = impl.triton_bias_relu(a, b)
    assert tuple(y.shape) == (n, m) and y.dtype == a.dtype and y.device == a.device
    assert launches() == [], f"an empty input launched the kernel: {launches()}"
