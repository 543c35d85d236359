"""nn.Linear's way: the bias folded into the matmul call (addmm), ReLU by torch.relu."""

import torch

from stackcheck.impl.reference import check_operands


def torch_forward(x, w, b):
    check_operands(x, w, b)
    return torch.relu(torch.addmm(b, x, w))


def torch_steps(x, w, b):
    check_operands(x, w, b)
    a = torch.mm(x, w)
    z = torch.add(a, b)
    return a, z, torch.relu(z)
