"""§12.4: "입력 shape가 자주 바뀌는가? | compile cache와 specialization 정책의 영향". Calling the
implementation's forward for N = 4, 6, 9: torch.compile(dynamic=True) compiles once and reuses the
program (N is a symbol); jax.jit compiles once per N (each shape is its own program)."""

import pytest

from stackcheck.evidence.compiles import counted_compile, fresh_jit, jax_compiles
from stackcheck.evidence.numerics import as_numpy, assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, torch_in

ROWS = (4, 6, 9)
K, M = 5, 3


def compiles_for_each_n(forward, counter, to_device, stack: str) -> list:
    """The compile count of ``forward`` at each N of ROWS (``counter``: a compile counter), its Y checked."""
    counts = []
    for n in ROWS:
        x, w, b = make_inputs(n, K, M, seed=120 + n)
        with counter() as count:
            y = forward(*to_device((x, w, b)))
        counts.append(count)
        assert_matches_reference(as_numpy(y), reference_forward(x, w, b), dtype="float32", k=K, N=n, stack=stack)
    return counts


def assert_compiles_per_shape(counts: list, expected: list[int], policy: str) -> None:
    """Programs compiled at each N, judged by what made each compile: a recompile no shape guard caused
    (a global the forward changed, a guard of the wrapper it was loaded through) is not the shape policy's
    (``Count.input_compiles``); every recompile's reasons are named."""
    judged = [c.input_compiles for c in counts]
    reasons = {n: c.recompiles for n, c in zip(ROWS, counts) if c.recompiles}
    assert judged == expected, (
        f"{policy}: programs compiled for N = {ROWS} because of a shape: {judged}, expected {expected} "
        f"(all compiles {[c.compiles for c in counts]}; Dynamo's recompile reasons by N: {reasons or 'none'})"
    )


@pytest.mark.claim("S12.4-dynamic")
@pytest.mark.parametrize("stack, device", stack_params("torch_compile", devices=("cpu", "cuda")))
def test_a_dynamic_torch_compile_compiles_once_for_every_n(impl, stack, device):
    torch = need("torch")
    torch._dynamo.reset()
    forward, counter = counted_compile(impl.torch_forward, dynamic=True)  # its own graphs, nobody else's
    counts = compiles_for_each_n(forward, counter, lambda v: torch_in(v, device, "float32"), stack)
    assert_compiles_per_shape(counts, [1, 0, 0], "dynamic=True: N is a symbol")


@pytest.mark.claim("S12.4-dynamic")
@pytest.mark.parametrize("stack, device", stack_params("jax", devices=("cpu", "cuda")))
def test_jax_jit_compiles_once_per_n(impl, stack, device):
    jax = need("jax")
    forward = fresh_jit(jax, impl.jax_forward)
    counts = compiles_for_each_n(forward, jax_compiles, lambda v: jax_in(v, device, "float32"), stack)
    assert_compiles_per_shape(counts, [1, 1, 1], "jax.jit: one program per shape")
