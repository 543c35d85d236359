"""§4.1: "shape와 dtype은 무엇인가? - 개수, 모양에 따라서 메모리가 달라짐". XLA plans the memory of
the implementation's compiled forward from shapes and dtypes alone: its output takes N x M x itemsize
bytes, twice that for twice the rows, half of it in bfloat16; the numbers come with it."""

import pytest

from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out

K, M = 6, 5


def output_bytes(jax, forward, n: int, dtype) -> int:
    specs = [jax.ShapeDtypeStruct(shape, dtype) for shape in ((n, K), (K, M), (M,))]
    return jax.jit(forward).lower(*specs).compile().memory_analysis().output_size_in_bytes


def assert_output_bytes_follow_shape_and_dtype(planned: dict) -> None:
    """``planned``: (N, dtype name) -> output bytes. Each is N x M x itemsize."""
    itemsize = {"float32": 4, "bfloat16": 2}
    wrong = {key: got for key, got in planned.items() if got != key[0] * M * itemsize[key[1]]}
    assert not wrong, f"the output takes N x M x itemsize bytes (M = {M}); planned {planned}, wrong {wrong}"


@pytest.mark.claim("S4.1-memory")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_the_planned_output_memory_follows_shape_and_dtype(impl, evidence, stack, device):
    jax = need("jax")
    planned = {
        (n, dtype): output_bytes(jax, impl.jax_forward, n, getattr(jax.numpy, dtype))
        for n in (8, 16)
        for dtype in ("float32", "bfloat16")
    }
    evidence(device=device, output_bytes={f"N={n} {d}": b for (n, d), b in planned.items()})
    assert_output_bytes_follow_shape_and_dtype(planned)
    x, w, b = make_inputs(8, K, M, seed=141)
    y = jax.jit(impl.jax_forward)(*jax_in((x, w, b), device, "float32"))
    assert_matches_reference(
        jax_out(y, "float32"), reference_forward(x, w, b), dtype="float32", k=K, stack=stack, device=device
    )
