"""A torch forward that pads an odd number of rows to an even one ('kernels like even sizes') and cuts
the pad off again: the right numbers, but the branch on N makes every compile specialize on its parity."""

import torch


def torch_forward(x, w, b):
    n = x.shape[0]
    if n % 2:
        x = torch.cat([x, x.new_zeros(1, x.shape[1])])
    return torch.relu(x @ w + b)[:n]
