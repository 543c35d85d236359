"""Takes nn.Linear.weight as the course's W without transposing it."""


def w_from_linear(linear):
    return linear.weight
