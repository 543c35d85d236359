"""§2.1 and experiment A: X[N,K] @ W[K,M] is [N,M]; K disappears; a K mismatch is a shape error."""
import re

import pytest

from stackcheck import stack_params
from stackcheck.numerics import make_inputs
from stackcheck.stacks import run_forward

# N, K, M all different, so a swapped or kept axis cannot pass by accident.
SHAPES = [(2, 3, 5), (7, 1, 4), (1, 9, 1), (6, 11, 3)]


@pytest.mark.claim("S2.1-shapes")
@pytest.mark.parametrize("stack, device", stack_params())
@pytest.mark.parametrize("n, k, m", SHAPES)
def test_output_is_n_by_m_and_k_is_contracted(impl, stack, device, n, k, m):
    y = run_forward(impl, stack, device, *make_inputs(n, k, m, seed=n * 100 + k))
    assert y.shape == (n, m), f"X[{n},{k}] @ W[{k},{m}] must give [N, M] = [{n}, {m}], got {list(y.shape)}"


@pytest.mark.claim("S2.1-shapes")
@pytest.mark.parametrize("stack, device", stack_params())
def test_k_mismatch_is_a_shape_error_naming_both_shapes(impl, stack, device):
    x, _, _ = make_inputs(2, 3, 2)
    _, w, b = make_inputs(2, 4, 2)
    with pytest.raises(ValueError) as info:
        run_forward(impl, stack, device, x, w, b)
    message = str(info.value)
    assert re.search(r"\[2, 3\]", message) and re.search(r"\[4, 2\]", message), (
        f"the error must name both shapes X[2, 3] and W[4, 2]; got: {message!r}")
    assert re.search(r"\bK\b", message), f"the error must say the contraction dimension K disagrees: {message!r}"
    assert not re.search(r"cuda|out of memory|illegal", message, re.I), (
        f"a K mismatch is a shape error, not a device error: {message!r}")
