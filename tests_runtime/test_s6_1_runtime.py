"""§6.1: the runtime binds a prepared program to data. Called again, a compiled forward compiles
nothing, and each call gets a fresh output buffer: an earlier result is never overwritten."""

import pytest

from stackcheck.evidence.compiles import assert_matmul_compiled, inductor_code, jax_compiles, torch_compiles
from stackcheck.evidence.numerics import assert_matches_reference, make_inputs, reference_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import stack_params
from stackcheck.stacks.records import jax_in, jax_out, numpy_in, numpy_out, torch_in, torch_out

SHAPE = (16, 8, 4)


def inputs(seeds):
    return [make_inputs(*SHAPE, seed=s) for s in seeds]


@pytest.mark.claim("S6.1-runtime")
@pytest.mark.parametrize("stack, device", stack_params("torch_compile"))
def test_torch_compiled_calls_reuse_the_program_not_the_output(impl, stack, device):
    torch = need("torch")
    data = inputs((31, 32, 33))
    torch._dynamo.reset()  # compile once, outside the count: the program prepared holds the whole forward
    assert_matmul_compiled(inductor_code(impl.torch_compiled_forward, *torch_in(data[0], device, "float32"))[1])
    with torch_compiles() as count:
        outs = [impl.torch_compiled_forward(*torch_in(d, device, "float32")) for d in data[1:]]
    assert count.compiles == 0, f"the second and third calls compile nothing: {count.compiles} compiles"
    assert outs[0].data_ptr() != outs[1].data_ptr(), "each call gets a fresh output buffer"
    for out, d in zip(outs, data[1:]):  # the first result is intact after the second call
        assert_matches_reference(
            torch_out(out, "float32"), reference_forward(*d), dtype="float32", k=SHAPE[1], stack=stack, device=device
        )


@pytest.mark.claim("S6.1-runtime")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_jax_calls_reuse_the_program_not_the_output(impl, stack, device):
    need("jax")
    data = inputs((34, 35, 36))
    impl.jax_sync(impl.jax_forward(*jax_in(data[0], device, "float32")))
    with jax_compiles() as count:
        outs = [impl.jax_forward(*jax_in(d, device, "float32")) for d in data[1:]]
        impl.jax_sync(outs)
    assert count.compiles == 0, f"the second and third calls compile nothing: {count.compiles} compiles"
    assert outs[0].unsafe_buffer_pointer() != outs[1].unsafe_buffer_pointer(), "each call gets a fresh buffer"
    for out, d in zip(outs, data[1:]):
        assert_matches_reference(
            jax_out(out, "float32"), reference_forward(*d), dtype="float32", k=SHAPE[1], stack=stack, device=device
        )


@pytest.mark.claim("S6.1-runtime")
@pytest.mark.parametrize("stack, device", stack_params("numpy", "torch"))
def test_a_call_reads_the_data_it_is_given_now(impl, stack, device):
    """The program is bound to the data at each call: the same X, W, b objects, changed in place
    since the last call, give the new Y (a forward that kept Y by its inputs' identity returns the
    old one), and the earlier result is left as it was."""
    first, second = inputs((37, 38))
    expected = [reference_forward(*first), reference_forward(*second)]  # before anything changes in place
    convert_in, convert_out = {"numpy": (numpy_in, numpy_out), "torch": (torch_in, torch_out)}[stack]
    forward = impl.numpy_forward if stack == "numpy" else impl.torch_forward
    operands = convert_in(first, device, "float32")
    y_first = convert_out(forward(*operands), "float32")
    for operand, new in zip(operands, convert_in(second, device, "float32")):
        operand[...] = new  # the same objects, new values
    y_second = convert_out(forward(*operands), "float32")
    for y, reference, what in zip((y_first, y_second), expected, ("the first call's Y", "Y after X, W, b changed")):
        assert_matches_reference(y, reference, dtype="float32", k=SHAPE[1], stack=stack, device=device, what=what)
