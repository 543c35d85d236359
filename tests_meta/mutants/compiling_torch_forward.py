"""An "eager" torch forward that goes through torch.compile: right numbers, but eager mode's
library call becomes a compiled program (§1.2: eager calls the already compiled library)."""


def torch_forward(x, w, b):
    from stackcheck.impl import reference

    return reference.torch_compiled_forward(x, w, b)
