"""The curriculum report as one self-contained HTML page: no script, no external file, so it works
offline and in viewers that strip scripts. The header holds the run's environment (§14.4) and the
claims by course chapter; each claim has its tests, its first failure and its evidence drawn as
plots (stackcheck.report.plots), each plot with its numbers in a table beneath it. Homework runs
show the score, points per claim and each failing function's message. Status is always a word and
a symbol as well as a colour."""

from __future__ import annotations

import html
import re
import shlex

from stackcheck.claims import catalogue, drift
from stackcheck.claims.results import ClaimResult, ClaimScore, Outcome, Report, Score, Status, TestResult, lacks
from stackcheck.homework import scoring
from stackcheck.report import plots as plotting

SYMBOLS = {
    "verified": "✓",
    "partly": "◐",
    "failed": "✗",
    "interrupted": "!",
    "skipped": "–",
    "untested": "·",
    "passed": "✓",
    "xfailed": "✓",
    "error": "✗",
    "xpassed": "✗",
    "not attempted": "…",
}
STYLE = """
:root { --ok: #1a7f37; --bad: #c62828; --skip: #8a6d00; --none: #666; --line: #ddd; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, "Noto Sans CJK KR", "Noto Sans KR", "Malgun Gothic", sans-serif;
       margin: 0 auto; max-width: 1100px; padding: 12px; color: #111; background: #fff; }
h1 { font-size: 1.5em; margin: .2em 0; } h2 { font-size: 1.25em; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.1em; margin-top: 1.5em; } h4 { margin: .2em 0; font-size: 1em; }
table { border-collapse: collapse; font-size: .9em; } td, th { border: 1px solid var(--line); padding: 2px 6px;
       text-align: left; vertical-align: top; }
.scroll { overflow-x: auto; max-width: 100%; }
code, pre, .nodeid { font-family: ui-monospace, monospace; font-size: .85em; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; background: #f6f6f6; padding: 6px; }
.status { font-weight: 600; white-space: nowrap; }
.verified, .passed, .xfailed { color: var(--ok); } .failed, .error, .xpassed, .interrupted { color: var(--bad); }
.skipped, .partly { color: var(--skip); } .untested, .not-attempted { color: var(--none); }
article.claim { border: 1px solid var(--line); border-left: 5px solid var(--none); padding: 6px 10px; margin: 8px 0; }
article.claim[data-status=verified] { border-left-color: var(--ok); }
article.claim[data-status=failed], article.claim[data-status=interrupted] { border-left-color: var(--bad); }
article.claim[data-status=skipped] { border-left-color: var(--skip); }
.ko { margin: .2em 0; } .meta { color: #555; font-size: .85em; }
figure { margin: 8px 0; max-width: 520px; } figure svg { width: 100%; height: auto; }
figcaption { font-size: .85em; color: #333; }
dl.env { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; font-size: .9em; }
dl.env dt { font-weight: 600; } dl.env dd { margin: 0; overflow-wrap: anywhere; }
.disagree { background: #ffd8b0; } tr.disagree th { border-left: 5px solid #a34700; }
.differ { background: #e3ecfa; } tr.differ th { border-left: 5px solid #2f5fa8; }
@media (max-width: 600px) { body { font-size: 14px; padding: 6px; } dl.env { grid-template-columns: 1fr; } }
"""


def esc(value) -> str:
    return html.escape(str(value), quote=True)


def status(word: str) -> str:
    """A status as symbol, word and colour (the colour is never alone)."""
    css = word.replace(" ", "-")
    return f'<span class="status {css}">{SYMBOLS.get(word, "?")} {esc(word)}</span>'


def chapter(section: str) -> str:
    """The course chapter a claim's section belongs to: "2.1, 13 (A)" -> "2"."""
    found = re.match(r"\s*(\d+)", section or "")
    return found.group(1) if found else "other"


def page(
    report: Report, sections: list[tuple[str, list[str]]] = (), title: str = "stackcheck curriculum report"
) -> str:
    """The page for ``report``; ``sections`` (the report-sections hook's) adds what the report's own
    fields do not hold. A recorded report alone gives the whole page."""
    known = catalogue.catalogue()
    body = [f"<header><h1>{esc(title)}</h1>", f'<p class="meta">{esc(_machine(report.environment))}</p></header>']
    homework = report.homework is not None
    if homework:  # the student's page opens with the score and the first thing to fix
        body += _homework(report.homework)
    body += _verdict(report, known, failures=not homework)
    body += _environment(report.environment)
    body += _summary(report)
    body += _claims(report, known, _figures(report))
    if report.listings or report.errata:
        body += _listings(report)
    body += _slowest(report)
    if report.drift is not None:
        body += [
            '<section id="drift"><h2>Drift since the baseline</h2>',
            f"<pre>{esc(chr(10).join(drift.lines(report.drift)))}</pre></section>",
        ]
    shown = {"course claims", "course listings", "homework", "drift since the baseline"}
    for name, lines in sections:
        if name not in shown:
            body += [
                f'<section id="{esc(slug(name))}"><h2>{esc(name[:1].upper() + name[1:])}</h2>',
                f"<pre>{esc(chr(10).join(lines))}</pre></section>",
            ]
    return document(title, body)


def document(title: str, body: list[str]) -> str:
    """A whole page: ``body``'s lines under the report's head and style (nothing fetched, no script)."""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _machine(env: dict) -> str:
    fields = (env.get("accelerator", "?"), env.get("cpu", "?"), f"Python {env.get('python', '?')}", env.get("date", ""))
    return " · ".join(fields)


def _environment(env: dict) -> list[str]:
    rows = []
    for key, value in env.items():
        if key == "workers":
            value = "; ".join(f"{w.get('worker')}: CUDA_VISIBLE_DEVICES={w.get('cuda_visible_devices')}" for w in value)
        elif isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items()) or "n/a"
        rows.append(f"<dt>{esc(key)}</dt><dd>{esc(value)}</dd>")
    return ['<section id="environment"><h2>Environment (course §14.4)</h2><dl class="env">', *rows, "</dl></section>"]


def _summary(report: Report) -> list[str]:
    titles = catalogue.chapters()
    chapters: dict[str, dict[Status, int]] = {}
    for c in report.claims:
        counts = chapters.setdefault(chapter(c.section), dict.fromkeys(Status, 0))
        counts[c.status] += 1
    head = "".join(f"<th>{status(s)}</th>" for s in Status)
    drawn = {chapter(c.section) for c in report.claims if c.tests}  # the chapters _claims draws

    def name(ch: str) -> str:
        shown = f"§{esc(ch)}"
        return f'<a href="#chapter-{esc(ch)}" title="{esc(titles.get(ch, ""))}">{shown}</a>' if ch in drawn else shown

    rows = [
        f'<tr><th scope="row">{name(ch)}</th>' + "".join(f"<td>{n}</td>" for n in counts.values()) + "</tr>"
        for ch, counts in sorted(chapters.items(), key=lambda kv: _chapter_order(kv[0]))
    ]
    totals = "".join(f"<td><strong>{n}</strong></td>" for n in report.counts().values())
    return [
        '<section id="summary"><h2>Claims by course chapter</h2><div class="scroll"><table>',
        f"<thead><tr><th>chapter</th>{head}</tr></thead><tbody>",
        *rows,
        f"<tr><th>all</th>{totals}</tr></tbody></table></div></section>",
    ]


def _verdict(report: Report, known: dict, failures: bool = True) -> list[str]:
    """The answer first: the claims' totals, each failed claim with the course's sentence, its first
    failure and the command that reruns it (``failures``; a homework page says them once, in its
    score's section), and the skipped claims grouped by why they could not run here (the reason
    carries the hint: the install line, the device to run them on)."""
    claims = report.claims
    totals = ", ".join(f"{n} {s}" for s, n in report.counts().items())
    out = ['<section id="verdict"><h2>Verdict</h2>', f"<p><strong>{esc(totals)}</strong> of {len(claims)} claims</p>"]
    failed = [c for c in claims if c.status.failing]
    if failed and failures:
        out.append("<h3>Failed: what to fix first</h3><ul>")
        for c in failed:
            test = next((t for t in c.tests if t.outcome in (Outcome.FAILED, Outcome.INTERRUPTED)), None)
            out.append(
                f'<li>{status(c.status)} <a href="#claim-{esc(slug(c.id))}"><code>{esc(c.id)}</code></a> '
                f"§{esc(c.section)} {esc(c.title)}"
                + f'<p class="ko" lang="ko">{esc(known.get(c.id, {}).get("ko", ""))}</p>'
                + ("".join(_failure(test)) if test else "")
                + "</li>"
            )
        out.append("</ul>")
    why: dict[str, list[str]] = {}
    for c in claims:
        if c.status is Status.SKIPPED:
            reason = next((t.reason for t in c.tests if t.reason), "skipped")
            why.setdefault(reason, []).append(c.id)
    partly = [c for c in claims if c.status is Status.PARTLY]
    if partly:
        out.append("<h3>Partly shown here: only an instrument or a precondition passed</h3><ul>")
        for c in partly:
            out.append(f"<li>{esc(c.id)}: what shows it {esc(lacks(c.counted()))}</li>")
        out.append("</ul>")
    if why:
        out.append("<h3>Skipped here, and why</h3><ul>")
        for reason, ids in sorted(why.items(), key=lambda kv: -len(kv[1])):
            out.append(f"<li>{len(ids)}: {esc(reason)} <small>({esc(', '.join(ids))})</small></li>")
        out.append("</ul>")
    out.append("</section>")
    return out


def _failure(test: TestResult) -> list[str]:
    """A failed test as the learner acts on it: its whole message (got, expected, where), the numbers
    it recorded, what to revisit first, where it was raised and the command that reruns it."""
    out = [f'<p>first failure: <span class="nodeid">{esc(test.nodeid)}</span></p>']
    out.append(f"<pre>{esc(test.details or test.message or test.outcome)}</pre>")
    numbers = " · ".join(n for n in (_numbers(r) for r in test.evidence if isinstance(r, dict)) if n)
    out += [f'<p class="numbers">{esc(numbers)}</p>'] if numbers else []
    if test.revisit:
        try:
            pointer = catalogue.pointer(test.revisit["id"], test.revisit["why"])
        except (KeyError, TypeError):  # a report from another catalogue
            pointer = f"[{test.revisit.get('id')}]: {test.revisit.get('why')}"
        out.append(f'<p class="revisit">Revisit first, course {esc(pointer)}</p>')
    out += [f"<p>at <code>{esc(test.location)}</code></p>"] if test.location else []
    rerun = test.rerun or f"python -m pytest {shlex.quote(test.nodeid)}"
    out.append(f"<p>rerun: <code>{esc(rerun)}</code></p>")
    return out


def _slowest(report: Report, count: int = 10) -> list[str]:
    """The ``count`` slowest tests of the run (set-up, call and teardown), with the run's total."""
    tests = {t.nodeid: t for _, t in report.tests()}
    timed = sorted((t for t in tests.values() if t.seconds), key=lambda t: -t.seconds)
    if not timed:
        return []
    total = sum(t.seconds for t in timed)
    rows = "".join(
        f'<tr><td class="nodeid">{esc(t.nodeid)}</td><td>{status(t.outcome)}</td><td>{t.seconds:.2f}</td></tr>'
        for t in timed[:count]
    )
    return [
        f'<section id="durations"><h2>The slowest {min(count, len(timed))} tests</h2>',
        f"<p>{len(timed)} tests took {total:.1f} s together (worker time, set-up and teardown included).</p>",
        '<div class="scroll"><table><thead><tr><th>test</th><th>outcome</th><th>s</th></tr></thead>',
        f"<tbody>{rows}</tbody></table></div></section>",
    ]


def _chapter_order(ch: str) -> tuple[bool, int]:
    return (not ch.isdigit(), int(ch) if ch.isdigit() else 0)


def _homework(result: Score) -> list[str]:
    if result.no_score is not None:
        return [
            '<section id="homework"><h2>Homework</h2>',
            f"<p>{status('failed')} {esc(result.no_score)}</p>",
            "</section>",
        ]
    failed = [i for i in result.claims if i.status == "failed"]
    untried = [i for i in result.claims if i.status == "not attempted"]
    out = [
        '<section id="homework"><h2>Homework</h2>',
        f'<p class="score"><strong>score: {result.percent:g} %</strong> '
        f"({result.earned:g} of {result.points:g} points)"
        + (f" · checkpoints passport {esc(result.passport)}" if result.passport else "")
        + "</p>",
    ]
    if failed:  # each failing claim once: the first thing to fix, then the others, then what is not written
        out += ["<h3>What to fix first</h3>", *_to_fix(failed[0], result)]
    if failed[1:]:
        out.append("<h3>Then</h3><ul>")
        out += [f"<li>{''.join(_to_fix(item, result))}</li>" for item in failed[1:]]
        out.append("</ul>")
    if untried:
        names = sorted({n for item in untried for n in item.not_attempted})
        out.append(
            f"<h3>Not attempted yet</h3><p>{status('not attempted')} {len(untried)} claims wait for "
            f"<code>{esc(', '.join(names))}</code>: {esc(', '.join(i.id for i in untried))}</p>"
        )
    out.append(
        '<div class="scroll"><table><thead><tr><th>claim</th><th>status</th><th>points</th><th>tests</th>'
        "<th>functions</th></tr></thead><tbody>"
    )
    for item in result.claims:
        out.append(
            f'<tr><td><a href="#claim-{esc(slug(item.id))}">{esc(item.id)}</a> §{esc(item.section)}</td>'
            f"<td>{status(item.status)}</td><td>{item.earned:g} / {item.points:g}</td>"
            f"<td>{item.passed}/{item.graded}</td><td><code>{esc(', '.join(item.functions))}</code></td></tr>"
        )
    out.append("</tbody></table></div>")
    for q in result.checkpoints:
        word = "passed" if q.passed else ("not attempted" if not q.attempted else "failed")
        out.append(f"<p>{status(word)} checkpoint {esc(q.id)} {q.earned:g}/{q.points:g}</p>")
    out.append("</section>")
    return out


def _to_fix(item: ClaimScore, result: Score) -> list[str]:
    """A failing claim of the score as the student acts on it: the course's sentence, the first
    failure's message, what to revisit and the line that reruns it."""
    rerun = scoring.rerun_line(item, result)
    return [
        f'<div class="fix" id="fix-{esc(slug(item.id))}">{status(item.status)} '
        f"<strong>{esc(item.id)}</strong> §{esc(item.section)} {esc(item.title)}",
        f'<p class="ko" lang="ko">{esc(item.ko)}</p>',
        f"<pre>{esc(item.feedback or '')}</pre>",
        *([f'<p class="revisit">revisit first: {esc(item.revisit)}</p>'] if item.revisit else []),
        *([f"<p>rerun: <code>{esc(rerun)}</code></p>"] if rerun else []),
        "</div>",
    ]


def _figures(report: Report) -> dict[int, list]:
    """The plots of each evidence record of the report's tests, by the record's id: drawn at once,
    so that a page's many pictures can share the machine's cores (plots.draw_all)."""
    found = {
        id(record): plotting.plots(record, draw=False, about=plotting.parameters(t.nodeid))
        for c in report.claims
        for t in c.tests
        for record in t.evidence
        if isinstance(record, dict)
    }
    plotting.draw_all([p for plots in found.values() for p in plots])
    return found


def _claims(report: Report, known: dict, figures: dict[int, list]) -> list[str]:
    """Every claim the run selected under its course chapter: each chapter once, in the course's order
    (the claims of a chapter in the catalogue's order); the others named in one line. On a homework
    page a failure is said once, in the score's section: its claim links there."""
    out = ['<section id="claims"><h2>Claims</h2>']
    by_chapter: dict[str, list[ClaimResult]] = {}
    untouched = [c.id for c in report.claims if not c.tests]
    if untouched:  # what the run did not select: named once, not drawn (the JSON keeps every claim)
        out.append(
            f'<p class="untested">{len(untouched)} of {len(report.claims)} claims were not selected by this run: '
            f"<small>{esc(', '.join(untouched))}</small></p>"
        )
    for c in report.claims:
        if c.tests:
            by_chapter.setdefault(chapter(c.section), []).append(c)
    homework = report.homework
    fixes = None if homework is None else {i.id for i in homework.claims if i.status == "failed"}
    titles = catalogue.chapters()
    for ch in sorted(by_chapter, key=_chapter_order):
        title = f' <span lang="ko">{esc(titles[ch])}</span>' if ch in titles else ""
        out.append(f'<h3 id="chapter-{esc(ch)}">§{esc(ch)}{title}</h3>')
        for c in by_chapter[ch]:
            out += _claim(c, known.get(c.id, {}), figures, fixes)
    out.append("</section>")
    return out


def _claim(c: ClaimResult, entry: dict, figures: dict[int, list], fixes: set | None = None) -> list[str]:
    """One claim's article; ``fixes``: on a homework page, the claims its score section says how to fix."""
    tests = c.tests
    tally: dict[str, int] = {}
    for t in tests:
        tally[t.outcome] = tally.get(t.outcome, 0) + 1
    out = [
        f'<article class="claim" id="claim-{esc(slug(c.id))}" data-status="{esc(c.status)}">',
        f"<h4>{status(c.status)} <code>{esc(c.id)}</code> {esc(c.title)}</h4>",
        f'<p class="meta">§{esc(c.section)} · {esc(c.area)}'
        + (f" · stack fact: {esc(entry.get('kind_reason', ''))}" if c.kind == "stack-fact" else "")
        + "</p>",
    ]
    if entry.get("ko"):
        out.append(f'<p class="ko" lang="ko">{esc(entry["ko"])}</p>')
    failure = next((t for t in tests if t.outcome == Outcome.FAILED and t.message), None)
    if failure and fixes is not None and c.id in fixes:
        out.append(f'<p><a href="#fix-{esc(slug(c.id))}">what to fix, above</a></p>')
    elif failure:
        out += _failure(failure)
    if tests:
        summary = ", ".join(f"{n} {o}" for o, n in sorted(tally.items()))
        out.append(f"<details><summary>{len(tests)} tests: {esc(summary)}</summary>")
        out.append(
            '<div class="scroll"><table><thead><tr><th>test</th><th>device</th><th>outcome</th><th>s</th></tr>'
            "</thead><tbody>"
        )
        for t in tests:
            note = f" ({esc(t.reason)})" if t.reason and t.outcome == Outcome.SKIPPED else ""
            seconds = f"{t.seconds:.2f}" if t.seconds else ""
            out.append(
                f'<tr><td class="nodeid">{esc(t.nodeid)}</td><td>{esc(t.device)}</td>'
                f"<td>{status(t.outcome)}{note}</td><td>{seconds}</td></tr>"
            )
        out.append("</tbody></table></div></details>")
    for t in tests:
        for record in t.evidence:
            if isinstance(record, dict):
                numbers = _numbers(record)
                if numbers:
                    out.append(f'<p class="numbers"><span class="nodeid">{esc(t.nodeid)}</span>: {esc(numbers)}</p>')
                out += [f'<p class="scattered">⚠ {esc(note)}</p>' for note in plotting.scattered(record)]
                out += [_figure(p, t) for p in figures[id(record)]]
    out.append("</article>")
    return out


def _numbers(record: dict) -> str:
    """The single numbers a test recorded as its evidence (the ratios and counts it judged), as text."""
    found = {k: v for k, v in record.items() if plotting.number(v)}
    return " · ".join(f"{k.replace('_', ' ')} {_fmt(v)}" for k, v in found.items())


def _figure(plot: plotting.Plot, test: TestResult) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in plot.columns)
    rows = "".join("<tr>" + "".join(f"<td>{esc(_fmt(v))}</td>" for v in row) + "</tr>" for row in plot.rows)
    table = f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'
    caption = f'<figcaption>{esc(plot.title)} · <span class="nodeid">{esc(test.nodeid)}</span></figcaption>'
    if not plot.drawn:  # numbers a picture would mislead about: the table is the figure
        return f'<figure class="plot" data-kind="{esc(plot.kind)}">{table}{caption}</figure>'
    picture = plot.svg or f'<p class="meta">{esc(plotting.MISSING)}</p>'
    return (
        f'<figure class="plot" data-kind="{esc(plot.kind)}">{picture}{caption}'
        f"<details><summary>numbers</summary>{table}</details></figure>"
    )


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10_000:
        return f"{value:,}"
    return str(value)


def _listings(report: Report) -> list[str]:
    out = [
        '<section id="listings"><h2>Course listings</h2><div class="scroll"><table>',
        "<thead><tr><th>§</th><th>stack</th><th>device</th><th>outcome</th><th>note</th></tr></thead><tbody>",
    ]
    for r in report.listings or ():
        note = r.get("note") or (r.get("reason") if r["outcome"] == "skipped" else "") or ""
        out.append(
            f"<tr><td>{esc(r['section'])}</td><td>{esc(r['stack'])}</td><td>{esc(r['device'])}</td>"
            f"<td>{status(r['outcome'])}</td><td>{esc(note)}</td></tr>"
        )
    out.append("</tbody></table></div>")
    for e in report.errata or ():
        versions = ", ".join(f"{d} {v}" for d, v in e["versions"].items())
        out.append(
            f"<p>{status('skipped' if e['known'] else 'failed')} {'known erratum' if e['known'] else 'ERRATUM'} "
            f"§{esc(e['section'])} ({esc(versions)}), line {esc(e.get('failing_line', '?'))}: "
            f"<code>{esc(e['first_error'])}</code>"
            + (f"; working form: {esc(e['working_form'])}" if e.get("working_form") else "")
            + "</p>"
        )
    out.append("</section>")
    return out
