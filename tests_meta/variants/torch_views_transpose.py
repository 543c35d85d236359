"""b.unsqueeze(0).expand(n, -1) for the bias view; W from nn.Linear by transpose(0, 1)."""


def torch_broadcast_bias(b, n: int):
    return b.unsqueeze(0).expand(n, -1)


def w_from_linear(linear):
    return linear.weight.transpose(0, 1)
