"""The custom op called with every argument by keyword and the type built from z's parts; the
package given as a str path."""

from max.graph import TensorType, ops


def mojo_relu(z):
    result = ops.custom(
        name="study_relu",
        device=z.device,
        values=[z],
        out_types=[TensorType(dtype=z.dtype, shape=list(z.shape), device=z.device)],
    )
    return result[0].tensor


def mojo_package():
    from stackcheck.toolchains.mojo_build import source

    return str(source("study_relu"))
