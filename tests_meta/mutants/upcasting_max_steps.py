"""A MAX graph builder whose ReLU compares Z with a float32 zero: MAX promotes a bfloat16 or float16
Z to float32 there, so the low-precision graphs return Y in float32, right in value, wrong in dtype."""


def max_steps(x, w, b):
    from max.dtype import DType
    from max.graph import ops

    a = ops.matmul(x, w)
    z = a + b
    return a, z, ops.max(z, ops.constant(0.0, DType.float32, device=z.device))
