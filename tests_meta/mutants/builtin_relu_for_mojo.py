"""A "Mojo custom op" that calls MAX's built-in relu: the same numbers on finite values, and no
custom op in the graph at all."""


def mojo_relu(z):
    from max.graph import ops

    return ops.relu(z)
