"""torch.compile as a decorator on a module-level function (F.linear, clamp_min)."""

import torch
import torch.nn.functional as F

from stackcheck.impl.reference import check_operands


@torch.compile(dynamic=True)
def _forward(x, w, b):
    return F.linear(x, w.t(), b).clamp_min(0)


def torch_compiled_forward(x, w, b):
    check_operands(x, w, b)
    return _forward(x, w, b)
