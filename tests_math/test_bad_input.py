"""Bad input: every stack's forward rejects a wrong rank or mixed devices with a ValueError naming them.

The wrong rank is §2.1's shape error (S2.1-shapes). Mixed devices are the implementations'
contract (stackcheck.impl.contract), no sentence of the course: those tests verify no claim."""

import re

import numpy as np
import pytest

from stackcheck.evidence.numerics import make_inputs
from stackcheck.impl.contract import shape_spelled
from stackcheck.run.runners import run_forward
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params, stack_params
from stackcheck.stacks.records import jax_device


@pytest.mark.claim("S2.1-shapes")
@pytest.mark.parametrize("stack, device", stack_params())
@pytest.mark.parametrize("which", ["X", "W", "b"])
def test_wrong_rank_names_the_operand_and_its_shape(impl, stack, device, which):
    x, w, b = make_inputs(2, 3, 4)
    operands = {"X": x, "W": w, "b": b}
    operands[which] = operands[which][np.newaxis]  # one axis too many
    with pytest.raises(ValueError) as info:
        run_forward(impl, stack, device, operands["X"], operands["W"], operands["b"])
    shape = shape_spelled(operands[which].shape)  # [1, 2, 3], (1, 2, 3), 1x2x3: any spelling
    assert re.search(rf"\b{which}\b.*{shape}", str(info.value)), (
        f"the error must name {which} and its shape {list(operands[which].shape)}: {info.value}"
    )


@pytest.mark.parametrize("stack, device", stack_params("torch", "torch_compile", "triton", devices=("cuda",)))
def test_mixed_devices_are_named(impl, stack, device):
    torch = need("torch")
    x, w, b = (torch.from_numpy(v) for v in make_inputs(2, 3, 4))
    forward = {
        "torch": impl.torch_forward,
        "torch_compile": impl.torch_compiled_forward,
        "triton": impl.triton_forward,
    }[stack]
    with pytest.raises(ValueError, match=placed("cuda", "cpu")):  # each operand named with its device, any wording
        forward(x.to(device), w, b)


def placed(x_device: str, cpu: str) -> str:
    """A message that says where each operand is: X with ``x_device``, W and b with ``cpu``, each
    device in the operand's own clause ("X on cuda:0, W on cpu, b on cpu", "X is cuda:0; W: cpu; ...")."""
    return rf"(?s)(?=.*\bX\b[^,;]*?{x_device})(?=.*\bW\b[^,;]*?{cpu})(?=.*\bb\b[^,;]*?{cpu})"


@pytest.mark.parametrize("device", device_params("jax", devices=("cuda", "tpu")))
def test_mixed_devices_are_named_in_jax(impl, device):
    jax = need("jax")
    x, w, b = make_inputs(2, 3, 4)
    accelerator = jax_device(device)
    cpu = jax.devices("cpu")[0]
    on_cpu = re.escape(str(cpu))
    with pytest.raises(ValueError, match=placed(r"\S", on_cpu)):
        impl.jax_forward(jax.device_put(x, accelerator), jax.device_put(w, cpu), jax.device_put(b, cpu))
