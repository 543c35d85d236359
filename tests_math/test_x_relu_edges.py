"""X-numerics, ReLU's exact edges: properties no tolerance may blur, on every stack and dtype.

ReLU(-inf) = 0 (so `z * (z > 0)`, which makes NaN there, is wrong), ReLU(+inf) = +inf, and a
negative Z gives exactly 0 (so a leaky ReLU, whose small slope fits inside the bf16 and fp16
tolerances, is wrong). The bias carries the edge values into Z = X @ W + b. Where the contract says so
(NumPy, torch, torch.compile, JAX: max(Z, 0) as their own relu computes it), ReLU(NaN) is NaN, so a
`where(z > 0, z, 0)`, which makes it 0, is wrong; the Triton and Mojo kernels of the course promise
nothing for NaN (§10.4: "NaN 전파 ... 보장하는 범용 activation 구현이 아니다")."""

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_exact, assert_matches_reference, make_inputs, reference_forward
from stackcheck.run.runners import run_forward
from stackcheck.stacks.params import stack_params, tolerance_row
from stackcheck.stacks.records import ALL_STACKS

N, K = 4, 3  # |X @ W| <= K = 3, so a bias of -100 makes Z at most -97
BIAS = np.array([-np.inf, np.inf, -100.0, 100.0, 0.5, -0.5], dtype=np.float32)
NEG_INF, POS_INF, NEGATIVE = 0, 1, 2
FINITE = [3, 4, 5]


@pytest.mark.claim("X-numerics")
@pytest.mark.parametrize("stack, device, dtype", stack_params(*ALL_STACKS, dtypes=True))
def test_relu_is_exact_at_the_edges(impl, stack, device, dtype):
    x, w, _ = make_inputs(N, K, len(BIAS), dtype, seed=17)
    y = run_forward(impl, stack, device, x, w, BIAS, dtype)
    where = dict(stack=stack, device=device, seed=17)
    assert not np.isnan(y).any(), f"ReLU made NaN (at {np.argwhere(np.isnan(y)).tolist()}): {where}, {dtype}"
    assert (y >= 0).all(), f"ReLU's output is never negative; min {y.min()}: {where}, {dtype}"
    assert_exact(y[:, NEG_INF], np.zeros(N), what="ReLU(-inf), which is 0", dtype=dtype, **where)
    assert_exact(y[:, POS_INF], np.full(N, np.inf), what="ReLU(+inf), which is +inf", dtype=dtype, **where)
    assert_exact(y[:, NEGATIVE], np.zeros(N), what="ReLU of Z <= -97, which is exactly 0", dtype=dtype, **where)
    assert_matches_reference(
        y[:, FINITE],
        reference_forward(x, w, BIAS)[:, FINITE],
        dtype=tolerance_row(stack, device, dtype),
        k=K,
        what="Y where Z is finite",
        **where,
    )


NAN_BIAS = np.array([np.nan, 1.5, -1.5], dtype=np.float32)


@pytest.mark.claim("X-numerics")
@pytest.mark.parametrize("stack, device, dtype", stack_params("numpy", "torch", "torch_compile", "jax", dtypes=True))
def test_relu_keeps_nan(impl, stack, device, dtype):
    x, w, _ = make_inputs(N, K, len(NAN_BIAS), dtype, seed=18)
    y = run_forward(impl, stack, device, x, w, NAN_BIAS, dtype)
    where = dict(stack=stack, device=device, seed=18)
    assert np.isnan(y[:, 0]).all(), f"ReLU(NaN) is NaN, as max(Z, 0) gives it; got {y[:, 0].tolist()}: {where}, {dtype}"
    assert_matches_reference(
        y[:, 1:],
        reference_forward(x, w, NAN_BIAS)[:, 1:],
        dtype=tolerance_row(stack, device, dtype),
        k=K,
        what="Y beside the NaN column",
        **where,
    )
