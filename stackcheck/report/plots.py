"""A test's evidence drawn as plots for the HTML report. Evidence is free-form (the ``evidence``
fixture records keyword arguments), so plots come from its shapes, not from claim ids:

- timings: ``{name: {"median_ms", "iqr_ms", ...}}`` (timing.Measurement) -> medians as points on a log
  axis, whiskers from the first to the third quartile (from the fastest to the slowest trial where
  there are fewer than 5; none for a record made before quartiles were kept);
- hardware counters: ``{name: [kernel rows with dram_read, gmma, ...]}`` -> grouped bars, per counter;
- byte counts: two or more ``*_bytes`` numbers -> bars;
- sweeps: ``{series: {x: number}}`` (e.g. tile medians per shape) -> a line per series;
- histograms: ``{"bins": [...], "counts": [...]}`` (numerics.difference_histogram) -> bars.

Each plot keeps its numbers as rows, for the table under the picture (its text alternative). The
pictures are matplotlib's SVG, inlined: no script, no font files, text kept as text. Without
matplotlib a plot is its table alone.
"""

from __future__ import annotations

import importlib.util
import io
import re
from dataclasses import dataclass, field

COUNTERS = ("dram_read", "dram_write", "gmma", "hmma", "ffma", "alu")
MISSING = "matplotlib is not installed (pip install matplotlib): plots are shown as tables"


@dataclass
class Plot:
    kind: str  # "timing", "counters", "bytes", "sweep", "histogram"
    title: str
    columns: tuple[str, ...]
    rows: list[tuple] = field(default_factory=list)
    svg: str = ""


def number(value) -> bool:
    """A plain number (a bool is not one)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _timings(evidence: dict) -> list[Plot]:
    found = {k: v for k, v in evidence.items() if isinstance(v, dict) and {"median_ms", "iqr_ms"} <= v.keys()}
    if not found:
        return []
    rows = [(name, m["median_ms"], *_whisker(m), m.get("trials", ""), m.get("regime", "")) for name, m in found.items()]
    columns = ("what", "median ms", "low ms", "high ms", "trials", "regime")
    return [Plot("timing", "time per call: median, quartiles (extremes under 5 trials)", columns, rows)]


def _whisker(m: dict) -> tuple:
    """(low, high) of a timing's whisker: its quartiles, its extremes under 5 trials, or its median
    twice for a record without them."""
    if "q1_ms" in m and "q3_ms" in m:
        few = isinstance(m.get("trials"), int) and m["trials"] < 5
        return (m["min_ms"], m["max_ms"]) if few and "min_ms" in m else (m["q1_ms"], m["q3_ms"])
    return m["median_ms"], m["median_ms"]


def _counters(evidence: dict) -> list[Plot]:
    groups = {
        k: v
        for k, v in evidence.items()
        if isinstance(v, list) and v and all(isinstance(r, dict) for r in v) and any(c in v[0] for c in COUNTERS)
    }
    if not groups:
        return []
    present = [c for c in COUNTERS if any(c in r for rows in groups.values() for r in rows)]
    units = {
        "bytes": [c for c in present if c.startswith("dram")],
        "instructions": [c for c in present if not c.startswith("dram")],
    }
    plots = []
    for unit, names in units.items():
        if not names:
            continue
        rows = [
            (group, name, sum(r.get(name, 0) or 0 for r in kernel_rows), len(kernel_rows))
            for group, kernel_rows in groups.items()
            for name in names
        ]
        plots.append(Plot("counters", f"hardware counters: {unit}", ("run", "counter", "total", "kernels"), rows))
    return plots


def _bytes(evidence: dict) -> list[Plot]:
    found = {k: v for k, v in evidence.items() if k.endswith("_bytes") and number(v) and v >= 0}
    if len(found) < 2:
        return []
    return [Plot("bytes", "bytes moved", ("what", "bytes"), list(found.items()))]


def _sweeps(evidence: dict) -> list[Plot]:
    plots = []
    for key, value in evidence.items():
        if (
            isinstance(value, dict)
            and value
            and all(isinstance(s, dict) and s and all(number(y) for y in s.values()) for s in value.values())
        ):
            rows = [(series, x, y) for series, points in value.items() for x, y in points.items()]
            plots.append(Plot("sweep", key.replace("_", " "), ("series", "x", "value"), rows))
    return plots


def _histograms(evidence: dict) -> list[Plot]:
    return [
        Plot(
            "histogram",
            f"{key.replace('_', ' ')}: {value.get('of', 'histogram')}",
            ("bin", "count"),
            list(zip(value["bins"], value["counts"])),
        )
        for key, value in evidence.items()
        if isinstance(value, dict) and {"bins", "counts"} <= value.keys() and len(value["bins"]) == len(value["counts"])
    ]


def plots(evidence: dict, draw: bool = True) -> list[Plot]:
    """The plots one evidence record holds (its ``repro`` fingerprint aside), drawn when ``draw``
    and matplotlib is installed."""
    evidence = {k: v for k, v in evidence.items() if k != "repro"}
    found = _timings(evidence) + _counters(evidence) + _bytes(evidence) + _sweeps(evidence) + _histograms(evidence)
    if draw and available():
        for plot in found:
            plot.svg = _svg(plot)
    return found


def available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def _svg(plot: Plot) -> str:
    import matplotlib
    from matplotlib.figure import Figure

    rc = {
        "svg.fonttype": "none",
        "svg.hashsalt": "stackcheck",
        "font.size": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
    }
    with matplotlib.rc_context(rc):
        figure = Figure(figsize=(4.6, 2.4), layout="constrained")
        axes = figure.add_subplot()
        DRAW[plot.kind](axes, plot)
        axes.set_title(plot.title, loc="left", fontsize=9)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML prolog and doctype: the page is HTML
    svg = re.sub(r'\s(width|height)="[\d.]+pt"', "", svg, count=2)  # the page's CSS sizes it
    label = f"{plot.title}: " + "; ".join(", ".join(str(c) for c in row) for row in plot.rows[:12])
    return svg.replace("<svg", f'<svg role="img" aria-label="{_attr(label)}"', 1)


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def _marked(artists, start: int = 0) -> None:
    """Give each drawn mark an id the browser test counts (``mark-N``)."""
    for i, artist in enumerate(artists, start):
        artist.set_gid(f"mark-{i}")


def _draw_timing(axes, plot: Plot) -> None:
    """A point per timing at its median, on a log axis (a bar's length from an arbitrary edge means
    nothing there), its whisker from low to high, as far on each side as it is."""
    for i, (name, median, low, high, *_) in enumerate(plot.rows):
        drawn = axes.errorbar(
            [median],
            [i],
            xerr=[[max(median - low, 0)], [max(high - median, 0)]],
            fmt="o",
            color="#4c72b0",
            ecolor="#222",
            capsize=3,
        )
        _marked([drawn.lines[0]], i)
    axes.set_yticks(range(len(plot.rows)), [str(r[0]) for r in plot.rows])
    axes.set_xscale("log")
    axes.set_xlabel("ms (point: median; whisker: quartiles)")
    axes.invert_yaxis()


def _draw_grouped(axes, plot: Plot) -> None:
    runs = list(dict.fromkeys(r[0] for r in plot.rows))
    counters = list(dict.fromkeys(r[1] for r in plot.rows))
    width = 0.8 / len(counters)
    values = {(r[0], r[1]): r[2] for r in plot.rows}
    marks = 0
    for j, counter in enumerate(counters):
        xs = [i + j * width for i in range(len(runs))]
        bars = axes.bar(xs, [max(values[(run, counter)], 0) for run in runs], width, label=counter)
        _marked(bars, marks)
        marks += len(bars)
    axes.set_xticks([i + width * (len(counters) - 1) / 2 for i in range(len(runs))], runs)
    if len(counters) > 1:
        axes.legend(fontsize=9, frameon=False)
    positive = [v for v in values.values() if v > 0]
    if positive and max(positive) > 100 * min(positive):
        axes.set_yscale("log")


def _draw_bytes(axes, plot: Plot) -> None:
    names = [str(r[0]).removesuffix("_bytes").replace("_", " ") for r in plot.rows]
    _marked(axes.bar(names, [r[1] for r in plot.rows], color="#55a868"))
    axes.set_ylabel("bytes")


def _draw_sweep(axes, plot: Plot) -> None:
    series = list(dict.fromkeys(r[0] for r in plot.rows))
    marks = 0
    for name in series:
        points = [(str(r[1]), r[2]) for r in plot.rows if r[0] == name]
        (line,) = axes.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=str(name))
        _marked([line], marks)
        marks += 1
    axes.legend(fontsize=9, frameon=False)
    if max(r[2] for r in plot.rows) > 20 * max(min(r[2] for r in plot.rows), 1e-12):
        axes.set_yscale("log")


def _draw_histogram(axes, plot: Plot) -> None:
    _marked(axes.bar([str(r[0]) for r in plot.rows], [r[1] for r in plot.rows], color="#c44e52"))
    axes.set_ylabel("elements")
    axes.tick_params(axis="x", labelrotation=60, labelsize=9)


DRAW = {
    "timing": _draw_timing,
    "counters": _draw_grouped,
    "bytes": _draw_bytes,
    "sweep": _draw_sweep,
    "histogram": _draw_histogram,
}
