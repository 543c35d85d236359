"""stackcheck: the course's claims about Y = ReLU(X @ W + b) as pytest assertions.

Test-facing helpers are re-exported here; the pytest plugin lives in
``stackcheck.plugin`` and the implementations under test in ``stackcheck.reference``.
"""
from stackcheck.env import need
from stackcheck.numerics import assert_matches_reference, reference_forward
from stackcheck.stacks import device_params, stack_params

__all__ = ["need", "assert_matches_reference", "reference_forward", "stack_params", "device_params"]
