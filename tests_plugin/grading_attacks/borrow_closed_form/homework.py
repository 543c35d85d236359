from stackcheck.evidence.gradients import closed_form as _closed_form


def numpy_forward(x, w, b):
    return _closed_form(x, w, b)["Y"].astype(x.dtype)
