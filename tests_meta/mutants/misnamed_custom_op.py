"""Calls the Mojo custom op by a name nobody registered."""

from max.graph import TensorType, ops


def mojo_relu(z):
    out = TensorType(z.dtype, z.shape, device=z.device)
    return ops.custom(name="study_relu_v2", device=z.device, values=[z], out_types=[out])[0].tensor
