"""F.linear (weight stored [M, K], so W is transposed), ReLU as clamp_min(0)."""

import torch.nn.functional as F

from stackcheck.impl.reference import check_operands


def torch_forward(x, w, b):
    check_operands(x, w, b)
    return F.linear(x, w.t(), b).clamp_min(0)


def torch_steps(x, w, b):
    check_operands(x, w, b)
    a = x.matmul(w)
    z = a + b.unsqueeze(0)
    return a, z, z.clamp_min(0)
