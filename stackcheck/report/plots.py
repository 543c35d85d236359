"""A test's evidence drawn as plots for the HTML report. Evidence is free-form (the ``evidence``
fixture records keyword arguments), so plots come from its shapes, not from claim ids:

- timings: ``{name: {"median_ms", "iqr_ms", ...}}`` (timing.Measurement) -> medians as points on a log
  axis, whiskers from the first to the third quartile (from the fastest to the slowest trial where
  there are fewer than 5; none for a record made before quartiles were kept);
- hardware counters: ``{name: [kernel rows with dram_read, gmma, ...]}`` -> grouped bars, per counter;
- byte counts: two or more ``*_bytes`` numbers -> bars;
- sweeps: ``{series: {x: number}}`` (e.g. tile medians per shape) -> a line per series;
- histograms: ``{"bins": [...], "counts": [...]}`` (numerics.difference_histogram) -> bars;
- judgments: ``{"judged": [evidence.judged.line(...)]}`` -> each judged number as a point beside the
  line it was judged against, the passing side shaded; a judged ratio of two timings of the record
  also draws its line on their timing plot (at the line times the denominator's median).

Each plot keeps its numbers as rows, for the table under the picture (its text alternative). The
pictures are matplotlib's SVG, inlined: no script, no font files, text kept as text. Without
matplotlib a plot is its table alone.
"""

from __future__ import annotations

import concurrent.futures
import importlib.util
import io
import multiprocessing
import os
import re
import textwrap
from dataclasses import dataclass, field

COUNTERS = ("dram_read", "dram_write", "gmma", "hmma", "ffma", "alu", "l1_hit", "l1_miss")
MISSING = "matplotlib is not installed (pip install matplotlib): plots are shown as tables"


@dataclass
class Plot:
    kind: str  # "timing", "counters", "bytes", "sweep", "histogram", "verdict"
    title: str
    columns: tuple[str, ...]
    rows: list[tuple] = field(default_factory=list)
    svg: str = ""
    lines: list[tuple] = field(default_factory=list)  # judged lines: (row, x, "above" or "below", label)
    drawn: bool = True  # False: numbers a picture would mislead about, shown as their table alone
    about: str = ""  # the test's parameters (a dtype, a device): the picture's title says them

    def heading(self) -> str:
        return f"{self.title} [{self.about}]" if self.about else self.title


def number(value) -> bool:
    """A plain number (a bool is not one)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _timings(evidence: dict) -> list[Plot]:
    found = {k: v for k, v in evidence.items() if isinstance(v, dict) and {"median_ms", "iqr_ms"} <= v.keys()}
    if not found:
        return []
    rows = [(name, m["median_ms"], *_whisker(m), m.get("trials", ""), m.get("regime", "")) for name, m in found.items()]
    # single calls timed beside them (a first call, the claim's point where it is about one): a point each
    singles = {k: v for k, v in evidence.items() if _one_call(k, v)}
    rows += [(k, v, v, v, 1, "one call") for k, v in singles.items()]
    medians = {**{k: m["median_ms"] for k, m in found.items()}, **singles}
    columns = ("what", "median ms", "low ms", "high ms", "trials", "regime")
    lines = []
    for j in judgments(evidence):
        if len(j.get("of", ())) == 2 and all(name in medians for name in j["of"]):
            top, bottom = j["of"]
            x = j["line"] * medians[bottom]
            lines.append((top, x, j["passes"], f"{top} {_bound(j)}× {bottom}"))
    title = "time per call: median, quartiles (extremes under 5 trials)"
    return [Plot("timing", title, columns, rows, lines=lines)]


def _one_call(key: str, value) -> bool:
    return key.endswith("_ms") and number(value) and value > 0


def judgments(evidence: dict) -> list[dict]:
    """The lines a test recorded judging its numbers by (evidence.judged.line), well formed only."""
    found = evidence.get("judged")
    keys = {"name", "measured", "line", "passes"}
    return [j for j in found if isinstance(j, dict) and keys <= j.keys()] if isinstance(found, list) else []


def scattered(evidence: dict) -> list[str]:
    """A sentence for each judged ratio of two timings whose trials scattered (third quartile over
    first) more than the ratio's margin, how far it landed past its line: a verdict the noise alone
    could have moved."""
    out = []
    for j in judgments(evidence):
        timings = [evidence.get(name) for name in j.get("of", ())]
        if len(timings) != 2 or not all(isinstance(t, dict) and t.get("q1_ms", 0) > 0 for t in timings):
            continue
        measured, line = j["measured"], j["line"]
        if min(measured, line) <= 0:
            continue
        margin = measured / line if j["passes"] == "above" else line / measured
        worst, name = max((t["q3_ms"] / t["q1_ms"], n) for t, n in zip(timings, j["of"]))
        if worst > margin:
            out.append(
                f"{j['name']} {_number_text(measured)} against its line {_number_text(line)}: a margin of "
                f"{margin:.3g}x, and the trials of {name} scattered {worst:.3g}x (third quartile over first): "
                "noise alone could move this verdict; rerun on a quiet machine before trusting it"
            )
    return out


def _number_text(value: float) -> str:
    return f"{value:.3g}"


def _bound(judgment: dict) -> str:
    """A judgment's passing side and line as a label: "≥ 20", "≤ 0.2"."""
    return f"{'≥' if judgment['passes'] == 'above' else '≤'} {_number_text(judgment['line'])}"


def _part(evidence: dict, name: str):
    """A ratio's part as the record holds it: a number, or a timing's median."""
    value = evidence.get(name)
    if isinstance(value, dict):
        value = value.get("median_ms")
    return value if number(value) else None


def ratio_of_nonzero(evidence: dict, judgment: dict) -> bool:
    """Whether a judged number is a ratio of two non-zero values the record holds (its ``of``): only
    such a number is drawn against its line; a count, a difference or a ratio over zero is a table."""
    parts = [_part(evidence, name) for name in judgment.get("of", ())]
    return len(parts) == 2 and all(p is not None and p != 0 for p in parts) and judgment["measured"] > 0


def _verdicts(evidence: dict) -> list[Plot]:
    columns = ("judged", "measured", "line", "passes")
    ratios, others = [], []
    for j in judgments(evidence):
        (ratios if ratio_of_nonzero(evidence, j) else others).append(j)
    plots = []
    if ratios:
        lines = [(j["name"], j["line"], j["passes"], _bound(j)) for j in ratios]
        plots.append(Plot("verdict", "what the test judged, against its line", columns, _rows(ratios), lines=lines))
    if others:
        title = "what the test judged, against its line (not a ratio of two non-zero values: numbers only)"
        plots.append(Plot("judged", title, columns, _rows(others), drawn=False))
    return plots


def _rows(found: list[dict]) -> list[tuple]:
    return [(j["name"], j["measured"], j["line"], j["passes"]) for j in found]


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
        "L1 sectors": [c for c in present if c.startswith("l1")],
        "instructions": [c for c in present if not c.startswith(("dram", "l1"))],
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
        plots.append(Plot("counters", f"hardware counters: {unit}", ("run", "counter", unit, "kernels"), rows))
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


def plots(evidence: dict, draw: bool = True, about: str = "") -> list[Plot]:
    """The plots one evidence record holds (its ``repro`` fingerprint aside), drawn when ``draw``
    and matplotlib is installed; ``about``: the test's parameters, which each title names."""
    evidence = {k: v for k, v in evidence.items() if k != "repro"}
    shapes = {k: v for k, v in evidence.items() if k != "judged"}
    found = _timings(evidence) + _counters(shapes) + _bytes(shapes) + _sweeps(shapes) + _histograms(shapes)
    found += _verdicts(evidence)
    for plot in found:
        plot.about = about
    return draw_all(found) if draw else found


def parameters(nodeid: str) -> str:
    """A test id's parameters ("bfloat16-True" of "test_x[bfloat16-True]"), or none."""
    name = nodeid.rsplit("::", 1)[-1]
    return name[name.index("[") + 1 : -1] if name.endswith("]") and "[" in name else ""


PER_PROCESS = 8  # plots a drawing process must have to pay for its start (matplotlib's import, ~1 s)


def draw_all(found: list[Plot]) -> list[Plot]:
    """``found``, each plot given its picture where matplotlib is installed. A page's plots (58 in an
    H200 run's report, half a second each on one core) are drawn by up to eight processes where the
    machine has the cores and there are plots enough; here where it has not, or processes cannot
    start. The pictures are the same either way (matplotlib's SVG is deterministic here)."""
    todo = [p for p in found if p.drawn]
    if not todo or not available():
        return found
    workers = min(8, os.cpu_count() or 1, len(todo) // PER_PROCESS)
    pictures = None
    if workers >= 2:
        try:
            context = multiprocessing.get_context("spawn")  # no fork of a process that runs threads
            with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
                pictures = list(pool.map(_svg, todo, chunksize=-(-len(todo) // workers)))
        except (OSError, concurrent.futures.process.BrokenProcessPool):  # no processes here: draw them here
            pass
    for plot, svg in zip(todo, pictures or map(_svg, todo)):
        plot.svg = svg
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
        height = max(2.4, 1.2 + 0.55 * len(plot.rows)) if plot.kind == "verdict" else 2.4
        figure = Figure(figsize=(4.6, height), layout="constrained")
        axes = figure.add_subplot()
        DRAW[plot.kind](axes, plot)
        _plain_log_ticks(axes)
        axes.set_title(textwrap.fill(plot.heading(), 70, break_on_hyphens=False), loc="left", fontsize=9)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML prolog and doctype: the page is HTML
    svg = re.sub(r'\s(width|height)="[\d.]+pt"', "", svg, count=2)  # the page's CSS sizes it
    label = f"{plot.heading()}: " + "; ".join(", ".join(str(c) for c in row) for row in plot.rows[:12])
    return svg.replace("<svg", f'<svg role="img" aria-label="{_attr(label)}"', 1)


def _plain_log_ticks(axes) -> None:
    """Log axes labelled 0.01, 100, 1e+04: matplotlib's 10^x draws its exponent at 70 % of the font
    (6 px on a phone); minor ticks unlabelled."""
    from matplotlib.ticker import EngFormatter, FuncFormatter, NullFormatter

    for axis in (axes.xaxis, axes.yaxis):
        if axis.get_scale() == "log" and not isinstance(axis.get_major_formatter(), EngFormatter):
            axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            axis.set_minor_formatter(NullFormatter())


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
    rows = {str(r[0]): i for i, r in enumerate(plot.rows)}
    xs = [v for r in plot.rows for v in r[1:4] if number(v) and v > 0] + [x for _, x, *_ in plot.lines if x > 0]
    if plot.lines and xs:
        _draw_lines(
            axes, [(rows[str(row)], x, side, label) for row, x, side, label in plot.lines], min(xs) / 3, max(xs) * 3
        )
    axes.invert_yaxis()


def _draw_lines(axes, lines: list[tuple], low: float, high: float) -> None:
    """Each judged line as a dashed rule across its row, labelled, the passing side shaded green;
    ``low`` and ``high`` bound the axis (the shading runs to its edge)."""
    for k, (i, x, side, label) in enumerate(lines):
        start, stop = (x, high) if side == "above" else (low, x)
        axes.fill_betweenx([i - 0.4, i + 0.4], start, stop, color="#1a7f37", alpha=0.15, linewidth=0)
        axes.vlines(x, i - 0.45, i + 0.45, colors="#c62828", linestyles="--", linewidth=1.5, gid=f"judged-line-{k}")
        axes.annotate(
            label, (x, i - 0.45), xytext=(2, 0), textcoords="offset points", fontsize=9, color="#c62828", va="bottom"
        )
    axes.set_xlim(low, high)


def _draw_verdict(axes, plot: Plot) -> None:
    """Each judged number as a point on its own row, its line across the row, the passing side shaded."""
    for i, (_, measured, *_) in enumerate(plot.rows):
        (point,) = axes.plot([measured], [i], "o", color="#4c72b0")
        _marked([point], i)
    values = [v for r in plot.rows for v in r[1:3]]
    logarithmic = all(v > 0 for v in values) and max(values) > 20 * min(values)
    if logarithmic:
        axes.set_xscale("log")
        low, high = min(values) / 3, max(values) * 3
    else:
        pad = (max(values) - min(values)) * 0.3 or abs(max(values)) * 0.3 or 1.0
        low, high = min(values) - pad, max(values) + pad
    _draw_lines(axes, [(i, x, side, label) for i, (_, x, side, label) in enumerate(plot.lines)], low, high)
    names = [textwrap.fill(str(r[0]).replace("_", " "), 24) for r in plot.rows]
    axes.set_yticks(range(len(plot.rows)), names)
    axes.set_ylim(len(plot.rows) - 0.5, -0.7)
    axes.set_xlabel("ratio (×); green side passes")


def _draw_grouped(axes, plot: Plot) -> None:
    runs = list(dict.fromkeys(r[0] for r in plot.rows))
    counters = list(dict.fromkeys(r[1] for r in plot.rows))
    width = 0.8 / len(counters)
    values = {(r[0], r[1]): r[2] for r in plot.rows}
    marks, zeros = 0, []
    for j, counter in enumerate(counters):
        xs = [i + j * width for i in range(len(runs))]
        bars = axes.bar(xs, [max(values[(run, counter)], 0) for run in runs], width, label=counter)
        _marked(bars, marks)
        marks += len(bars)
        zeros += [x for x, run in zip(xs, runs) if values[(run, counter)] <= 0]
    axes.set_xticks([i + width * (len(counters) - 1) / 2 for i in range(len(runs))], runs)
    if len(counters) > 1:  # beside the axes, never over the bars
        axes.legend(fontsize=9, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    positive = [v for v in values.values() if v > 0]
    if positive and max(positive) > 100 * min(positive):
        axes.set_yscale("log")
        axes.set_ylim(bottom=min(positive) / 10)
    axes.set_ylabel(plot.columns[2])  # the counters' unit
    if plot.columns[2] == "bytes":
        _byte_ticks(axes.yaxis)
    for x in zeros:  # a zero is a reading, not blank space (a log axis has no bar for it)
        axes.annotate(
            "0", (x, 0 if axes.get_yscale() == "linear" else min(positive) / 10), ha="center", va="bottom", fontsize=9
        )


def _draw_bytes(axes, plot: Plot) -> None:
    names = [textwrap.fill(str(r[0]).removesuffix("_bytes").replace("_", " "), 14) for r in plot.rows]
    _marked(axes.bar(names, [r[1] for r in plot.rows], color="#55a868"))
    axes.set_ylabel("bytes")
    _byte_ticks(axes.yaxis)


def _byte_ticks(axis) -> None:
    """Bytes labelled as bytes (64 MB, 1.5 GB), never as a number under a "1e8" multiplier."""
    from matplotlib.ticker import EngFormatter

    axis.set_major_formatter(EngFormatter(unit="B"))


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
    axes.set_ylabel(UNITS.get(plot.title.rsplit(" ", 1)[-1], "as recorded (see the numbers)"))
    axes.set_xlabel("the test's parameter (see the numbers)")
    axes.tick_params(axis="x", labelrotation=90)


UNITS = {"ms": "ms", "us": "µs", "s": "s", "bytes": "bytes", "by": "× (ratio)"}  # a sweep's key's last word


def _draw_histogram(axes, plot: Plot) -> None:
    _marked(axes.bar([str(r[0]) for r in plot.rows], [r[1] for r in plot.rows], color="#c44e52"))
    axes.set_ylabel("elements")
    axes.set_xlabel("difference, up to (bin)")
    positive = [r[1] for r in plot.rows if r[1] > 0]
    if positive and max(positive) > 100 * min(positive):  # a few large differences stay visible
        axes.set_yscale("log")
    axes.tick_params(axis="x", labelrotation=90, labelsize=9)  # upright boxes that never meet


DRAW = {
    "timing": _draw_timing,
    "counters": _draw_grouped,
    "bytes": _draw_bytes,
    "sweep": _draw_sweep,
    "histogram": _draw_histogram,
    "verdict": _draw_verdict,
}
