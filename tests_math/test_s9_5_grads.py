"""§9.5: JAX value_and_grad on the hand example: loss 9.5625, and the gradients of torch and the closed form;
"이 계산도 컴파일과 실행의 대상이 된다": the implementation's loss and gradients are one compiled program.

Every value of this example is a small multiple of a power of two, so all comparisons are exact.
"""

import numpy as np
import pytest

from stackcheck.evidence.compiles import jax_compiles
from stackcheck.evidence.gradients import closed_form
from stackcheck.evidence.numerics import assert_exact, assert_matches_reference, make_inputs
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params, stack_params
from stackcheck.stacks.records import jax_device, jax_in


@pytest.mark.claim("S9.5-grads")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_jax_value_and_grad_on_the_hand_example(impl, hand_example, stack, device):
    jax = need("jax")
    ex = hand_example
    target = jax_device(device)
    loss, grads = impl.jax_loss_and_grads(*(jax.device_put(ex[k], target) for k in "xwb"))
    assert float(loss) == ex["loss"], f"loss must be {ex['loss']} (course §9.5), got {float(loss)}"
    exact = closed_form(ex["x"], ex["w"], ex["b"])
    for name, got in zip(("dX", "dW", "db"), grads):
        assert_exact(np.asarray(got), exact[name], what=f"JAX {name} vs the closed form", stack=stack, device=device)


@pytest.mark.claim("S9.5-grads")
@pytest.mark.parametrize("device", device_params("torch"))
def test_jax_gradients_equal_torch_gradients(impl, hand_example, device):
    torch = need("torch")
    jax = need("jax")
    ex = hand_example
    _, _, *torch_grads = impl.torch_grads(impl.torch_forward, *(torch.from_numpy(ex[k]).to(device) for k in "xwb"))
    _, jax_grads = impl.jax_loss_and_grads(*(jax.numpy.asarray(ex[k]) for k in "xwb"))
    for name, t, j in zip(("dX", "dW", "db"), torch_grads, jax_grads):
        assert_exact(t.cpu().numpy(), np.asarray(j), what=f"torch {name} vs JAX {name}", device=device)


@pytest.mark.claim("S9.5-grads")
@pytest.mark.parametrize("stack, device", stack_params("jax"))
def test_the_gradient_is_one_compiled_program(impl, stack, device):
    """The first call on a shape new to this process compiles exactly one program, loss and all three
    gradients in it (value_and_grad under jax.jit); op by op it would compile one per primitive."""
    jax = need("jax")
    x, w, b = make_inputs(11, 7, 5, seed=159)  # a shape no other test uses: nothing of it is cached
    with jax_compiles() as count:
        loss, grads = jax.block_until_ready(impl.jax_loss_and_grads(*jax_in((x, w, b), device, "float32")))
    assert count.compiles == 1, f"loss and gradients compiled as {count.compiles} programs, not one"
    exact = closed_form(x, w, b)
    for name, got in zip(("loss", "dX", "dW", "db"), (loss, *grads)):
        assert_matches_reference(np.asarray(got), exact[name], dtype="float32", k=7, what=f"JAX {name}", stack=stack)
