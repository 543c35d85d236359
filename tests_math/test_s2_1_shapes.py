"""§2.1 and experiment A: X[N,K] @ W[K,M] is [N,M]; K disappears; a K mismatch is a shape error."""

import re

import numpy as np
import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.impl.contract import shape_spelled
from stackcheck.run.runners import run_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params, tolerance_row
from stackcheck.stacks.records import jax_in

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
    assert re.search(shape_spelled((2, 3)), message) and re.search(shape_spelled((4, 2)), message), (
        f"the error must name both shapes X[2, 3] and W[4, 2]; got: {message!r}"
    )
    assert re.search(
        r"\bK\b|inner|contract|mismatch|disagree|differ|incompatible|must (?:equal|match)", message, re.I
    ), f"the error must say that the contracted dimension (K) disagrees, in any words: {message!r}"
    assert not re.search(r"cuda|out of memory|illegal", message, re.I), (
        f"a K mismatch is a shape error, not a device error: {message!r}"
    )


@pytest.mark.claim("S2.1-shapes")
@pytest.mark.parametrize("stack, device", stack_params())
@pytest.mark.parametrize("bias_shape", [(1,), ()], ids=["b[1]", "b[]"])
def test_bias_must_be_m_even_where_it_would_broadcast(impl, stack, device, bias_shape):
    """The contract is b[M]: a bias of shape [1] or [] would broadcast silently, and is refused."""
    x, w, b = make_inputs(2, 3, 5)
    with pytest.raises(ValueError) as info:
        run_forward(impl, stack, device, x, w, b[:1].reshape(bias_shape))
    assert re.search(r"\bb\b", str(info.value)), f"the error must name b: {info.value}"


@pytest.mark.claim("S2.1-shapes")
@pytest.mark.parametrize("stack, device", stack_params())
def test_square_w_is_not_transposed(impl, stack, device):
    """K == M lets a forward that quietly uses W.T run without a shape error: W here is far from
    symmetric, so only X @ W itself matches the reference."""
    x, w, b = make_inputs(5, 4, 4, seed=21)
    w = w + np.triu(np.full((4, 4), 2.0, dtype=np.float32), 1)  # upper triangle far from the lower
    y = run_forward(impl, stack, device, x, w, b)
    assert_matches_reference(
        y,
        reference_forward(x, w, b),
        dtype=tolerance_row(stack, device, "float32"),
        k=4,
        stack=stack,
        device=device,
        what="Y with a square, asymmetric W",
        seed=21,
    )


def k_mismatch_in(stack: str, device: str):
    """The stack's own X @ W on a K mismatch (no stackcheck check in between): the exception."""
    x, _, _ = make_inputs(2, 3, 2)
    _, w, _ = make_inputs(2, 4, 2)
    if stack == "numpy":
        run = lambda: x @ w  # noqa: E731
    elif stack == "torch":
        torch = need("torch")
        run = lambda: torch.from_numpy(x).to(device) @ torch.from_numpy(w).to(device)  # noqa: E731
    elif stack == "jax":
        jax = need("jax")
        run = lambda: jax.jit(lambda a, c: a @ c)(*jax_in((x, w), device, "float32"))  # noqa: E731
    else:  # MAX refuses it while the graph is built, before any compile
        run = lambda: max_matmul_graph(x.shape, w.shape)  # noqa: E731
    with pytest.raises(Exception) as info:
        run()
    return info.value


def max_matmul_graph(x_shape, w_shape):
    need("max")
    from max.dtype import DType
    from max.graph import DeviceRef, Graph, TensorType, ops

    ref = DeviceRef.CPU()
    types = [TensorType(DType.float32, list(shape), device=ref) for shape in (x_shape, w_shape)]
    with Graph("k_mismatch", input_types=types) as graph:
        graph.output(ops.matmul(graph.inputs[0].tensor, graph.inputs[1].tensor))


@pytest.mark.claim("S2.1-shapes")
@pytest.mark.parametrize("stack, device", stack_params("numpy", "torch", "jax", "max"))
def test_the_stack_itself_raises_a_shape_error_not_a_device_error(stack, device):
    """The course's point, shown on each framework's own matmul: a K mismatch is refused before any
    work, as a shape error that names the sizes, not a device, memory or performance problem."""
    error = k_mismatch_in(stack, device)
    message = f"{type(error).__name__}: {error}"
    assert isinstance(error, (ValueError, TypeError, RuntimeError)), message
    assert re.search(r"(?<!\d)3(?!\d)", message) and re.search(r"(?<!\d)4(?!\d)", message), (
        f"the sizes 3 and 4 must be named: {message}"
    )
    assert re.search(r"(?i)shape|dimension|size", message), f"it must say it is about shapes: {message}"
    where = re.sub(r"device=\w+:\d+", "", message)  # MAX names each input's placement; that is no error
    assert not re.search(r"(?i)cuda|out of memory|illegal|device", where), f"not a device error: {message}"
