"""A MAX graph builder that records no ops: it hands the input back."""


def max_steps(x, w, b):
    return x, x, x
