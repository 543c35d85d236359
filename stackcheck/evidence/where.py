"""Where a helper that traces, records or compiles a function reads it (course §2-§9: eager ops,
Inductor's code, JAX's stages): here, or, for a graded submission's function, in the worker that
runs it (stackcheck.grading.judge), which runs the same helper there and returns what it read. The
report marks such evidence as measured by the worker."""

from __future__ import annotations

HERE = object()  # elsewhere() found no other process to ask


def elsewhere(helper, fn, *args, **kwargs):
    """``helper(fn, *args, **kwargs)`` run where ``fn`` lives, if that is not this process; else HERE."""
    while fn is not None:
        ask = getattr(fn, "__stackcheck_evidence__", None)
        if ask is not None:
            return ask(helper, *args, **kwargs)
        fn = getattr(fn, "__wrapped__", None)
    return HERE
