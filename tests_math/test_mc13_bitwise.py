"""MC13: the same formula does not give bitwise-identical results; the tolerance is the right check.

The inputs make the difference certain rather than likely: 2**24 + 1 is not a float32, so
adding the ones one at a time after the big value loses them, while adding them first keeps them.
"""

import numpy as np
import pytest

from stackcheck.evidence import precision
from stackcheck.evidence.numerics import (
    assert_exact,
    assert_matches_reference,
    difference_histogram,
    make_inputs,
    reference_forward,
    uniform,
)
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params

# One big value, then 64 ones, then the big value taken away: the exact sum is 64.
VALUES = np.array([2.0**24] + [1.0] * 64 + [-(2.0**24)], dtype=np.float32)


@pytest.mark.claim("MC13")
def test_summation_order_changes_the_bits(impl):
    forward = impl.sum_sequential(VALUES)
    backward = impl.sum_sequential(VALUES[::-1])
    blocked = impl.sum_blocked(VALUES, 8)
    exact = float(np.sum(VALUES.astype(np.float64)))
    assert exact == 64.0
    results = {"left to right": float(forward), "right to left": float(backward), "blocks of 8": float(blocked)}
    assert len(set(results.values())) == 3, (
        f"three orders of one sum must give three different float32 results here, got {results}"
    )
    assert float(backward) == exact, "adding the ones before the big value keeps them all"


@pytest.mark.claim("MC13")
def test_sequential_sum_is_exactly_left_to_right(impl):
    """sum_sequential must be the left-to-right float32 sum, bit for bit: on these inputs the
    pairwise sum NumPy uses (np.sum) gives other bits, so a pairwise 'sequential' sum fails."""
    values = uniform((4096,), seed=13) * np.float32(1e4)
    left_to_right = np.cumsum(values, dtype=np.float32)[-1]  # cumsum adds one element at a time
    assert left_to_right != np.sum(values, dtype=np.float32), "the inputs must tell the two orders apart"
    assert_exact(np.float32(impl.sum_sequential(values)), left_to_right, what="sum_sequential", seed=13)


@pytest.mark.claim("MC13")
@pytest.mark.parametrize("block", [64, 100])
def test_blocked_sum_is_exactly_its_blocks_then_their_partials(impl, block):
    """sum_blocked must be the left-to-right sums of each run of ``block`` elements, the last run
    short (4099 elements divide by neither block), then their partials left to right, bit for bit."""
    values = uniform((4099,), seed=14) * np.float32(1e4)
    partials = [np.cumsum(values[i : i + block], dtype=np.float32)[-1] for i in range(0, len(values), block)]
    blocked = np.cumsum(np.array(partials, dtype=np.float32), dtype=np.float32)[-1]
    assert_exact(np.float32(impl.sum_blocked(values, block)), blocked, what=f"sum_blocked(v, {block})", seed=14)


@pytest.mark.claim("MC13")
@pytest.mark.numpy
def test_float32_and_float64_accumulation_differ_but_agree_within_tolerance():
    x, w, b = make_inputs(16, 4096, 16, seed=13)
    y32 = np.maximum(x @ w + b, 0)  # float32 accumulation
    y64 = np.maximum(x.astype(np.float64) @ w.astype(np.float64) + b, 0)
    assert not np.array_equal(y32.astype(np.float64), y64), "float32 and float64 accumulation must differ in bits"
    assert_matches_reference(y32, y64, dtype="float32", k=4096, what="float32-accumulated Y")


@pytest.mark.claim("MC13")
@pytest.mark.parametrize("stack, device", stack_params("torch"))
def test_blocked_matmul_differs_in_bits_but_matches_with_tolerance(stack, device):
    """A matmul split along K into blocks (what GEMM libraries and split-K do) vs one dot per element."""
    torch = need("torch")
    x, w, b = (torch.from_numpy(v).to(device) for v in make_inputs(8, 4096, 8, seed=7))
    plain = torch.relu(x @ w + b)
    blocked = torch.relu(sum(x[:, i : i + 512] @ w[i : i + 512] for i in range(0, 4096, 512)) + b)
    assert not torch.equal(plain, blocked), "the blocked order must change some bits for these inputs"
    assert_matches_reference(
        blocked.cpu().numpy(),
        plain.cpu().numpy(),
        dtype="float32",
        k=4096,
        stack=stack,
        device=device,
        what="blocked-K Y vs plain Y",
    )


@pytest.mark.claim("MC13")
@pytest.mark.parametrize("stack, device", stack_params("torch_compile"))
def test_eager_vs_compiled_bits_are_reported_and_tolerance_decides(impl, evidence, stack, device):
    torch = need("torch")
    x, w, b = (torch.from_numpy(v).to(device) for v in make_inputs(64, 1024, 64, seed=3))
    eager = impl.torch_forward(x, w, b)
    compiled = impl.torch_compiled_forward(x, w, b)
    differing = int((eager != compiled).sum())
    evidence(
        eager_vs_compiled_bits_differing=differing,
        elements=eager.numel(),
        device=device,
        compiled_vs_eager=difference_histogram(compiled.cpu(), eager.cpu()),
    )
    assert_matches_reference(
        compiled.cpu().numpy(),
        eager.cpu().numpy(),
        dtype="float32",
        k=1024,
        stack=stack,
        device=device,
        what="compiled Y vs eager Y",
    )


@pytest.mark.claim("MC13")
@pytest.mark.precision  # the test sets TF32 itself, both ways
@pytest.mark.gpu_needs("tf32")
@pytest.mark.parametrize("stack, device", stack_params("torch", devices=("cuda",)))
def test_tf32_and_float32_matmuls_differ_in_bits_and_each_meets_its_own_tolerance(impl, evidence, stack, device):
    """The same float32 formula, with TF32 off and on: different bits; each within the tolerance of
    its own precision, and the TF32 result outside float32's (it really is less precise)."""
    torch = need("torch")
    x, w, b = make_inputs(256, 1024, 256, seed=13)
    operands = [torch.from_numpy(v).to(device) for v in (x, w, b)]
    results = {}
    for enabled in (False, True):
        with precision.torch_tf32(torch, enabled):
            results[enabled] = impl.torch_forward(*operands).cpu().numpy()
    reference = reference_forward(x, w, b)
    differing = int((results[False] != results[True]).sum())
    evidence(
        device=device,
        tf32_vs_fp32_elements_differing=differing,
        elements=results[False].size,
        tf32_vs_fp32=difference_histogram(results[True], results[False]),
    )
    assert differing > 0, "TF32 rounds the inputs to 10 mantissa bits: the bits must differ from float32's"
    assert_matches_reference(
        results[False], reference, dtype="float32", k=1024, stack=stack, device=device, what="Y with TF32 off"
    )
    assert_matches_reference(
        results[True], reference, dtype="tfloat32", k=1024, stack=stack, device=device, what="Y with TF32 on"
    )
    with pytest.raises(AssertionError, match="does not match"):
        assert_matches_reference(results[True], reference, dtype="float32", k=1024, what="Y with TF32 on")
