"""The line a test judges a number against, recorded beside the number so the report can draw it
(issue 37): ``evidence(..., judged=[judged.line("values_over_shape", ratio, at_least=MARGIN,
of=("values", "shape"))])``. ``of`` names the two timings of the same record whose medians make the
ratio (the report then draws the line on their timing plot too, and says when their trials scattered
more than the margin)."""

from __future__ import annotations


def line(
    name: str, measured: float, *, at_least: float | None = None, at_most: float | None = None, of: tuple = ()
) -> dict:
    """What was judged: ``measured`` (the number called ``name``) passes at or above ``at_least``, or
    at or below ``at_most`` (one of the two)."""
    if (at_least is None) == (at_most is None):
        raise ValueError(f"judged.line({name!r}): give at_least or at_most, one of them")
    if len(of) not in (0, 2):
        raise ValueError(f"judged.line({name!r}): of names the ratio's (numerator, denominator), got {of!r}")
    return {
        "name": name,
        "measured": float(measured),
        "line": float(at_least if at_least is not None else at_most),
        "passes": "above" if at_least is not None else "below",
        **({"of": list(of)} if of else {}),
    }
