"""The numerics policy, as data in one place (course §2, §5.5, misconception MC13).

Every stack's result is compared with a float64 NumPy reference computed from the very
same (already rounded) inputs. Allowed error per element:

    |actual - reference| <= atol(dtype) * sqrt(K) + rtol(dtype) * |reference|

``atol`` grows with sqrt(K) because rounding errors of a K-term dot product add up like a
random walk; the table assumes inputs drawn from [-1, 1] (``make_inputs`` does that).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from dataclasses import dataclass

import numpy as np

DTYPES = ("float32", "bfloat16", "float16")


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float  # for K = 1; scaled by sqrt(K)

    def scaled(self, k: int) -> "Tolerance":
        return Tolerance(self.rtol, self.atol * math.sqrt(max(k, 1)))


# Unit roundoff u: float32 2**-24, float16 2**-11, bfloat16 2**-8. Low-precision results are
# rounded at least twice (A, then Z), so their bounds are a few u; float32 leaves room for
# different summation orders (blocked GEMMs, split-K).
TOLERANCES = {
    "float64": Tolerance(rtol=1e-12, atol=1e-12),
    "float32": Tolerance(rtol=1e-6, atol=1e-6),
    "float16": Tolerance(rtol=1e-3, atol=4e-3),
    "bfloat16": Tolerance(rtol=8e-3, atol=3.2e-2),
    # float32 tensors multiplied on Tensor Cores in TF32: each input rounded to 10 mantissa bits
    # (u = 2**-11), products accumulated in float32; for tests marked ``precision`` (MC13).
    "tfloat32": Tolerance(rtol=2e-3, atol=4e-3),
}


def tolerance(dtype: str, k: int) -> Tolerance:
    return TOLERANCES[dtype].scaled(k)


def round_to(array, dtype: str) -> np.ndarray:
    """float32 array holding values exactly representable in ``dtype`` (round to nearest even);
    "tfloat32" is what a Tensor Core multiplies in TF32 mode: 10 mantissa bits."""
    a = np.ascontiguousarray(array, dtype=np.float32)
    if dtype == "float32":
        return a
    if dtype == "float16":
        return a.astype(np.float16).astype(np.float32)
    if dtype in ("bfloat16", "tfloat32"):  # keep 7 or 10 of float32's 23 mantissa bits
        dropped = 16 if dtype == "bfloat16" else 13
        bits = a.view(np.uint32).astype(np.uint64)
        half, keep = (1 << (dropped - 1)) - 1, (0xFFFFFFFF >> dropped) << dropped
        bits = (bits + half + ((bits >> dropped) & 1)) & keep
        return bits.astype(np.uint32).view(np.float32)
    raise ValueError(f"unknown dtype {dtype!r}; expected one of {DTYPES} or 'tfloat32'")


# The random draws of the running test, so a failure can print them (see ``seeds_drawn``).
_DRAWN: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("stackcheck_drawn", default=None)


@contextlib.contextmanager
def seeds_drawn():
    """Collect, inside the block, a line per random input drawn: what, its shape and its seed."""
    token = _DRAWN.set([])
    try:
        yield _DRAWN.get()
    finally:
        _DRAWN.reset(token)


def _note(draw: str) -> None:
    drawn = _DRAWN.get()
    if drawn is not None and draw not in drawn:
        drawn.append(draw)


def make_inputs(n: int, k: int, m: int, dtype: str = "float32", seed: int = 0):
    """X[N,K], W[K,M], b[M] drawn from [-1, 1] and rounded to ``dtype`` (returned as float32)."""
    _note(f"make_inputs(N={n}, K={k}, M={m}, dtype={dtype!r}, seed={seed})")
    rng = np.random.default_rng(seed)
    return tuple(round_to(rng.uniform(-1.0, 1.0, size=shape), dtype) for shape in ((n, k), (k, m), (m,)))


def uniform(shape, seed: int, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """A float32 array drawn from [low, high) with its own seed: the suite's only random source."""
    _note(f"uniform({tuple(shape)}, seed={seed}, low={low}, high={high})")
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(np.float32)


def as_numpy(value) -> np.ndarray:
    """float64 NumPy from a NumPy array, a torch tensor (any device) or a JAX array."""
    if hasattr(value, "detach"):  # torch
        import torch

        return value.detach().to("cpu", torch.float64).numpy()
    if hasattr(value, "dtype") and str(value.dtype) == "bfloat16":  # JAX / ml_dtypes
        value = value.astype("float32")
    return np.asarray(value, dtype=np.float64)


FORWARDS: list[tuple[np.ndarray, tuple]] = []  # the last few reference_forward results and their inputs
# What a wrong forward computes instead, as the course names the mistake (diagnosis() tries each on
# the inputs of the reference a failure was measured against; the first that the output equals is named).
MISTAKES = {
    "ReLU(X @ W): the bias b was never added": lambda x, w, b: np.maximum(x @ w, 0.0),
    "X @ W + b: the ReLU was never applied": lambda x, w, b: x @ w + b,
    "|X @ W + b|: the ReLU is an absolute value": lambda x, w, b: np.abs(x @ w + b),
    "ReLU(X @ W) + b: the bias was added after the ReLU": lambda x, w, b: np.maximum(x @ w, 0.0) + b,
    "ReLU(X @ W - b): the bias was subtracted": lambda x, w, b: np.maximum(x @ w - b, 0.0),
    "ReLU(X @ W.T + b): W was transposed": lambda x, w, b: np.maximum(x @ w.T + b, 0.0),
    "ReLU(X @ W + b[:, None]): b was added by row, not by column": lambda x, w, b: np.maximum(x @ w + b[:, None], 0.0),
}


def reference_forward(x, w, b) -> np.ndarray:
    """Y = ReLU(X @ W + b) in float64: the reference every stack is held to."""
    x64, w64, b64 = (np.asarray(v, dtype=np.float64) for v in (x, w, b))
    y = np.maximum(x64 @ w64 + b64, 0.0)
    if y.size + x64.size + w64.size <= 1 << 18:  # remembered for diagnosis(), by identity: a few small ones
        FORWARDS[:] = [(y, (x64, w64, b64)), *FORWARDS[:3]]
    return y


def diagnosis(actual: np.ndarray, reference, tol: Tolerance) -> str | None:
    """Which known mistake ``actual`` (float64, as_numpy's) computes, where ``reference`` is a recent reference_forward
    result: evaluated on that result's own inputs, never read from the code's spelling."""
    inputs = next((given for y, given in FORWARDS if y is reference), None)
    if inputs is None:
        return None
    for name, mistake in MISTAKES.items():
        try:
            wrong = mistake(*inputs)
        except ValueError:  # a mistake these shapes cannot make (W.T of a non-square W)
            continue
        if wrong.shape != actual.shape or np.allclose(wrong, reference):
            continue
        if mismatch_report(actual, wrong, tol) is None:
            return name
    return None


def _where(index) -> str:
    return "(" + ", ".join(str(int(i)) for i in index) + ")"


def mismatch_report(actual, expected, tol: Tolerance) -> str | None:
    """assert_close-style description of where ``actual`` leaves the tolerance, or None."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        return f"Shape mismatch: got {list(actual.shape)}, expected {list(expected.shape)}"
    if actual.size == 0:
        return None
    with np.errstate(invalid="ignore"):  # inf - inf
        diff = np.abs(actual - expected)
    equal = actual == expected  # equal infinities match; NaN never does
    diff = np.where(equal, 0.0, diff)
    with np.errstate(invalid="ignore"):  # 0 * inf
        allowed = tol.atol + tol.rtol * np.abs(expected)
    bad = ~(equal | (diff <= allowed))
    if not bad.any():
        return None
    scored = np.where(np.isnan(diff), np.inf, diff)
    worst_abs = np.unravel_index(np.argmax(scored), diff.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(scored == 0, 0.0, scored / np.abs(expected))
    worst_rel = np.unravel_index(np.argmax(rel), diff.shape)
    return "\n".join(
        [
            f"Mismatched elements: {int(bad.sum())} / {bad.size} ({100.0 * bad.sum() / bad.size:.1f}%)",
            f"Greatest absolute difference: {diff[worst_abs]:.6g} at index {_where(worst_abs)} "
            f"(got {actual[worst_abs]:.9g}, expected {expected[worst_abs]:.9g}; "
            f"up to {allowed[worst_abs]:.3g} allowed)",
            f"Greatest relative difference: {rel[worst_rel]:.6g} at index {_where(worst_rel)} "
            f"(up to {tol.rtol:.3g} allowed)",
        ]
    )


def failure_message(summary: str, details: str, inputs: dict) -> str:
    """What broke, where, and the inputs that broke it (the plugin adds the course section and a
    rerun line to every failing claim test's report)."""
    shown = ", ".join(f"{k}={v}" for k, v in inputs.items())
    return "\n".join([summary, details, f"Inputs: {shown}"])


def assert_matches_reference(
    actual, reference, *, dtype: str, k: int, what: str = "Y = ReLU(X @ W + b)", **inputs
) -> None:
    """Fail with a full report unless ``actual`` is within the policy's tolerance of ``reference``."""
    __tracebackhide__ = True
    tol = tolerance(dtype, k)
    got = as_numpy(actual)
    details = mismatch_report(got, as_numpy(reference), tol)
    if details is None:
        return
    mistake = diagnosis(got, reference, tol)
    details += f"\nIt equals {mistake}" if mistake else ""
    base = TOLERANCES[dtype]
    details += (
        f"\nTolerance: {dtype} row of stackcheck.evidence.numerics.TOLERANCES: rtol={base.rtol:g}, "
        f"atol={base.atol:g} x sqrt(K={k}) = {tol.atol:.3g}"
    )
    raise AssertionError(
        failure_message(f"{what} does not match the float64 reference.", details, {"dtype": dtype, "K": k, **inputs})
    )


def assert_exact(actual, expected, *, what: str, **inputs) -> None:
    """Bitwise equality, for values exactly representable in the dtype (the §2.2 hand example)."""
    __tracebackhide__ = True
    details = mismatch_report(as_numpy(actual), as_numpy(expected), Tolerance(0.0, 0.0))
    if details is not None:
        raise AssertionError(failure_message(f"{what} is not exactly the course's value.", details, inputs))


def assert_relu_by_select(z, relu, *, what: str) -> None:
    """``relu`` is ``select(z > 0, z, 0)`` bit for bit: NaN and both zeros give +0 (course §10.4's
    study ReLU), where ``max(z, 0)`` may propagate NaN and ``z * (z > 0)`` gives NaN and -0."""
    __tracebackhide__ = True
    z, relu = np.asarray(z, np.float32), np.asarray(relu, np.float32)
    want = np.where(z > 0, z, np.float32(0))
    differ = want.view(np.uint32) != relu.view(np.uint32)
    if differ.any():
        raise AssertionError(
            f"{what} is not select(z > 0, z, 0) at z = {z[differ].tolist()}: "
            f"got {relu[differ].tolist()} (signs {np.signbit(relu[differ]).tolist()})"
        )


def assert_outputs_match(outputs: dict, references: dict, *, dtype: str, k: int, where: str) -> None:
    """Every named output is there and within the policy's tolerance of its reference (the same
    graph's outputs on another device, §10.3)."""
    __tracebackhide__ = True
    missing = sorted(set(references) - set(outputs))
    assert not missing, f"{where}: outputs {missing} missing; got {sorted(outputs)}"
    for name, reference in references.items():
        assert_matches_reference(outputs[name], reference, dtype=dtype, k=k, what=f"{where}: output {name}")


def difference_histogram(actual, expected) -> dict:
    """How far ``actual`` is from ``expected``, element by element, as evidence for a report: the
    count of elements in each decade of relative difference |a - e| / max(|e|, tiny), equal ones
    apart (MC13: which elements differ, and by how much)."""
    a, e = as_numpy(actual).astype(np.float64).ravel(), as_numpy(expected).astype(np.float64).ravel()
    relative = np.abs(a - e) / np.maximum(np.abs(e), np.finfo(np.float32).tiny)
    decades = np.arange(-9, 0)  # 1e-9 .. 1e-1, then everything larger
    labels = ["equal", f"<1e{decades[0]}"]
    counts = [int((relative == 0).sum()), int(((relative > 0) & (relative < 10.0 ** decades[0])).sum())]
    for low in decades:
        labels.append(f"1e{low}..1e{low + 1}")
        counts.append(int(((relative >= 10.0**low) & (relative < 10.0 ** (low + 1))).sum()))
    labels.append(f">=1e{decades[-1] + 1}")
    counts.append(int((relative >= 10.0 ** (decades[-1] + 1)).sum()))
    return {"of": "relative difference", "bins": labels, "counts": counts}
