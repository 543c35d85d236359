"""§2.2: the hand example. A, Z and Y are integers and halves, so every stack must hit them exactly."""

import pytest

from stackcheck.evidence.numerics import assert_exact
from stackcheck.run.runners import run_steps
from stackcheck.stacks.params import stack_params


@pytest.mark.claim("S2.2-hand")
@pytest.mark.parametrize("stack, device", stack_params())
def test_hand_example_a_z_y_exact(impl, hand_example, stack, device):
    """Triton and the Mojo custom op fuse Z away (bias add and ReLU in one kernel): A and Y are checked."""
    ex = hand_example
    steps = run_steps(impl, stack, device, ex["x"], ex["w"], ex["b"])
    for name, got in zip("AZY", steps):
        if got is not None:
            assert_exact(
                got,
                ex[name.lower()],
                what=f"{name} of the §2.2 example",
                stack=stack,
                device=device,
                shape="N=2, K=3, M=2",
                dtype="float32",
            )
