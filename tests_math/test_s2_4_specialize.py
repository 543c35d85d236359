"""§2.4/§4.4: a new shape, dtype or layout makes a new compiled program; the numbers stay right."""

import numpy as np
import pytest

from stackcheck.evidence.compiles import assert_matmul_compiled, inductor_code, jax_compiles, torch_compiles
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_device, jax_in, torch_in


@pytest.mark.claim("S2.4-specialize")
@pytest.mark.judge_traces("torch.compile of a function of its own that calls torch_forward")
@pytest.mark.parametrize("stack, device", stack_params("torch_compile"))
def test_torch_compile_specializes_on_shape_dtype_and_layout(impl, stack, device):
    torch = need("torch")

    def forward(x, w, b):  # a function of this test's own, so no other test's compiled code is reused
        return impl.torch_forward(x, w, b)

    compiled = torch.compile(forward, dynamic=False)

    def run(x, w, b, dtype="float32", transpose_x=False):
        tx, tw, tb = (torch.from_numpy(v).to(device, getattr(torch, dtype)) for v in (x, w, b))
        if transpose_x:  # same values, column-major storage: a non-contiguous view
            tx = tx.T.contiguous().T
            assert not tx.is_contiguous()
        with torch_compiles() as count:
            y = compiled(tx, tw, tb)
        assert_matches_reference(
            y.float().cpu().numpy(),
            reference_forward(x, w, b),
            dtype=dtype,
            k=x.shape[1],
            stack=stack,
            device=device,
            layout="transposed view" if transpose_x else "contiguous",
        )
        return count.input_compiles  # a recompile no guard on the inputs caused is not the claim's

    x, w, b = make_inputs(4, 8, 3, seed=1)
    assert run(x, w, b) == 1, "the first call compiles"
    assert run(*make_inputs(4, 8, 3, seed=2)) == 0, "new values, same shape/dtype/layout: the program is reused"
    assert run(*make_inputs(6, 8, 3, seed=3)) == 1, "a new shape (dynamic=False) makes a new program"
    assert run(*make_inputs(4, 8, 3, "float16", seed=4), dtype="float16") == 1, "a new dtype makes a new program"
    assert run(x, w, b, transpose_x=True) == 1, "a new layout (non-contiguous view) makes a new program"


@pytest.mark.claim("S2.4-specialize")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_jax_jit_specializes_on_shape_and_dtype(impl, stack, device):
    jax = need("jax")
    traces = []

    def forward(x, w, b):
        traces.append((x.shape, str(x.dtype)))  # Python runs only while JAX traces
        a = x @ w
        return jax.numpy.maximum(a + b, 0)

    compiled = jax.jit(forward)
    target = jax_device(device)

    def run(x, w, b, dtype="float32"):
        args = [jax.device_put(np.asarray(v, dtype=getattr(jax.numpy, dtype)), target) for v in (x, w, b)]
        with jax_compiles() as count:
            y = compiled(*args)
        assert_matches_reference(
            np.asarray(y.astype("float32")),
            reference_forward(x, w, b),
            dtype=dtype,
            k=x.shape[1],
            stack=stack,
            device=device,
        )
        return count.input_compiles  # a recompile no guard on the inputs caused is not the claim's

    assert run(*make_inputs(4, 8, 3, seed=1)) == 1, "the first call compiles"
    assert run(*make_inputs(4, 8, 3, seed=2)) == 0, "new values, same shape and dtype: the program is reused"
    assert run(*make_inputs(6, 8, 3, seed=3)) == 1, "a new shape makes a new program"
    assert run(*make_inputs(6, 8, 3, "bfloat16", seed=4), dtype="bfloat16") == 1, "a new dtype makes a new program"
    assert traces == [((4, 8), "float32"), ((6, 8), "float32"), ((6, 8), "bfloat16")], (
        f"Python ran once per trace, not per call: {traces}"
    )


def compiles_per_call(impl, stack: str, device: str, calls: list[tuple], steps: bool = False) -> list[int]:
    """Programs compiled by each call of the implementation's compiled forward (its Y from
    ``jax_steps`` if ``steps``). The shapes must be new to this process for JAX (whose caches other
    tests' workloads rely on); Dynamo is reset."""
    if stack == "jax":
        need("jax")
        forward = (lambda x, w, b: impl.jax_steps(x, w, b)[2]) if steps else impl.jax_forward
        counter = jax_compiles
        convert = lambda arrays: jax_in(arrays, device, "float32")  # noqa: E731
    else:
        need("torch")._dynamo.reset()
        forward, counter = impl.torch_compiled_forward, torch_compiles
        convert = lambda arrays: torch_in(arrays, device, "float32")  # noqa: E731
    counts = []
    for at, arrays in enumerate(calls):
        with counter() as count:
            if stack == "jax" or at:
                y = forward(*convert(arrays))
            else:  # the first compile: the program it makes holds the whole forward (§8.1's check)
                y, codes = inductor_code(forward, *convert(arrays))
                assert_matmul_compiled(codes)
        assert_matches_reference(
            y, reference_forward(*arrays), dtype="float32", k=arrays[0].shape[1], stack=stack, device=device
        )
        counts.append(count.compiles)
    return counts


@pytest.mark.claim("S2.4-specialize")
@pytest.mark.parametrize("stack, device", stack_params("torch_compile", "jax"))
def test_the_compiled_forward_is_one_program_compiled_once(impl, stack, device):
    """The implementation's jit / torch.compile path really compiles: the first call makes exactly
    one program (not one per op, as op-by-op execution would), and new values reuse it."""
    first, second = make_inputs(9, 6, 7, seed=31), make_inputs(9, 6, 7, seed=32)  # a shape no other test uses
    counts = compiles_per_call(impl, stack, device, [first, second])
    assert counts == [1, 0], (
        f"{stack}: programs compiled by the first and a repeated call: {counts} "
        "(0 first: nothing was compiled; more than 1: op by op)"
    )


@pytest.mark.claim("S2.4-specialize")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_jax_steps_is_one_program_compiled_once(impl, stack, device):
    """A, Z and Y come from one jitted program too: a jax_steps run op by op beside a jitted
    jax_forward compiles a program per op (its shapes, 11 x 6 x 13, are used by no other test, so
    no op of it is compiled already)."""
    first, second = make_inputs(11, 6, 13, seed=33), make_inputs(11, 6, 13, seed=34)
    counts = compiles_per_call(impl, stack, device, [first, second], steps=True)
    assert counts == [1, 0], (
        f"jax_steps: programs compiled by the first and a repeated call: {counts} "
        "(0 first: nothing was compiled; more than 1: op by op)"
    )
