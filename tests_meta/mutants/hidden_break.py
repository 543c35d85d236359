"""A forward with a hidden graph break: a debug print between matmul and ReLU."""


def torch_forward(x, w, b):
    z = x @ w + b
    print("debug: z ready")
    return z.relu()
