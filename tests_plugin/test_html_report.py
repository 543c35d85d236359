"""The HTML report (stackcheck.report.html) and the machine matrix (stackcheck.report.merge): one
self-contained page per run, drawn from recorded reports; the browser half is test_html_browser.py."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from stackcheck import cli
from stackcheck.claims import catalogue
from stackcheck.claims.results import Report
from stackcheck.report import html, merge, plots

pytestmark = [pytest.mark.meta, pytest.mark.xdist_group("html-pages")]  # with test_html_browser: pages drawn once

ROOT = Path(__file__).resolve().parent.parent
RECORDED = {
    "cpu": ROOT / "baselines" / "cpu.json",
    "h200": ROOT / "baselines" / "h200.json",
    "homework": ROOT / "fixtures" / "homework-report.json",
}
LIMIT_BYTES = 2 * 1024 * 1024


class Page(HTMLParser):
    """What the checks need of a page: tags met (with attributes), and text by element."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def count(self, tag: str, **attrs) -> int:
        return sum(t == tag and all(a.get(k) == v for k, v in attrs.items()) for t, a in self.tags)


def load(name: str) -> dict:
    return json.loads(RECORDED[name].read_text(encoding="utf-8"))


@pytest.fixture
def pages(draw_page) -> dict[str, str]:
    return {name: draw_page(path) for name, path in RECORDED.items()}


def need_matplotlib():
    if not plots.available():
        pytest.skip(plots.MISSING)


@pytest.mark.parametrize("name", list(RECORDED))
def test_every_claim_has_a_section_with_its_status_in_words(pages, name):
    report, text = load(name), pages[name]
    parsed = Page(text)
    touched = [c for c in report["claims"] if c["tests"]]
    assert parsed.count("article") == len(touched)  # untested claims: named in one line, not drawn
    for claim in touched:
        article = re.search(
            rf'<article class="claim" id="claim-[^"]*" data-status="{claim["status"]}">.*?</article>', text, re.S
        )
        assert article and f"{html.SYMBOLS[claim['status']]} {claim['status']}</span>" in article.group(0), claim["id"]


@pytest.mark.parametrize("name", list(RECORDED))
def test_the_page_is_self_contained_and_small(pages, name):
    text = pages[name]
    assert "<script" not in text and "<link" not in text and "@import" not in text
    assert not re.search(r'(?:src|href)="(?:https?:)?//', text), "the page must not reach the network"
    assert len(text.encode()) <= LIMIT_BYTES, f"{name}: {len(text.encode())} bytes"


def test_header_holds_the_environment_and_claims_by_chapter(pages):
    report, text = load("h200"), pages["h200"]
    header = text.split('<section id="claims">')[0]
    for key in ("accelerator", "versions", "code_revision", "precision"):
        assert f"<dt>{key}</dt>" in header
    chapters = {html.chapter(c["section"]) for c in report["claims"] if c["tests"]}
    assert all(f'href="#chapter-{ch}"' in header and f'id="chapter-{ch}"' in text for ch in chapters)
    assert '<p class="ko" lang="ko">' in text


def test_the_page_opens_with_the_verdict_failures_first(pages):
    """Issue 37: before the environment, the totals, each failed claim with its first failure and a
    rerun line, and the skipped claims grouped by their reason."""
    report = load("cpu")
    broken = next(c for c in report["claims"] if c["status"] == "verified")
    broken["status"] = "failed"
    details = "AssertionError: Y differs at [0, 1]\nGreatest absolute difference: 1 (got 7, expected 6)"
    rerun = "python -m pytest --impl=mine.py -m cpu 'tests_math/test_x.py::test_y[numpy-cpu]'"
    broken["tests"][0].update(
        outcome="failed",
        message="AssertionError: Y differs at [0, 1]",
        details=details,
        rerun=rerun,
        revisit={"id": "S2.2-hand", "why": "the bias add is missing"},
    )
    text = html.page(Report.from_json(report))
    verdict = text.split('<section id="verdict">', 1)[1].split("</section>", 1)[0]
    assert text.index('id="verdict"') < text.index('id="environment"')
    assert "1 failed" in verdict and f"<code>{broken['id']}</code>" in verdict
    assert html.esc(details) in verdict and html.esc(rerun) in verdict, "the whole message, and the run's rerun line"
    assert "Revisit first, course §2.2 [S2.2-hand]: the bias add is missing" in verdict
    skipped = [c for c in report["claims"] if c["status"] == "skipped"]
    listed = re.findall(r"<li>(\d+): ", verdict.split("Skipped here", 1)[1]) if skipped else []
    assert sum(map(int, listed)) == len(skipped), (listed, len(skipped))
    assert not any(c["status"] == "failed" for c in load("h200")["claims"])
    assert "Failed: what to fix first" not in pages["h200"], "nothing failed there: no failures list"


@pytest.mark.parametrize("name", list(RECORDED))
def test_each_chapter_appears_once_in_course_order_with_its_claims(pages, name):
    """Issue 37: a chapter heading per chapter (unique ids, the summary's links land on all of its
    claims), in the course's order, whatever order the catalogue lists the claims in."""
    report, text = load(name), pages[name]
    claims = text.split('<section id="claims">', 1)[1]
    headings = re.findall(r'<h3 id="chapter-([^"]+)">', claims)
    assert len(headings) == len(set(headings)), headings
    assert headings == sorted(headings, key=lambda ch: (not ch.isdigit(), int(ch) if ch.isdigit() else 0))
    for part in re.split(r'<h3 id="chapter-', claims)[1:]:
        ch = part.split('"', 1)[0]
        shown = re.findall(r'<article class="claim" id="claim-([^"]+)"', part)
        want = [
            html.slug(c["id"])
            for c in report["claims"]
            if html.chapter(c["section"]) == ch and c["tests"]  # claims the run did not select: named, not drawn
        ]
        assert sorted(shown) == sorted(want), (ch, shown, want)


def test_plots_have_marks_and_their_numbers_beneath(pages):
    need_matplotlib()
    text = pages["h200"]
    figures = re.findall(r'<figure class="plot" data-kind="(\w+)">(.*?)</figure>', text, re.S)
    kinds = {kind for kind, _ in figures}
    assert {"timing", "counters", "bytes", "sweep"} <= kinds, kinds
    for kind, figure in figures:
        if kind == "judged":  # numbers that are no ratio of non-zero values: a table, no picture
            assert "<svg" not in figure and "<tr><td>" in figure
            continue
        marks = len(re.findall(r'id="mark-\d+"', figure))
        rows = len(re.findall(r"<tr><td>", figure))
        assert marks >= 1 and rows >= 1, kind
        assert 'role="img" aria-label=' in figure and "<details><summary>numbers</summary>" in figure


def test_a_timing_is_a_point_at_its_median_with_its_quartiles_as_whiskers():
    """Issue 37: points on a log axis, not bars from an arbitrary edge; whiskers as far on each side as
    the quartiles lie (the extremes under 5 trials); a record from before quartiles were kept: a point."""
    need_matplotlib()
    skewed = {"median_ms": 0.2, "iqr_ms": 54.0, "spread": 300.0, "trials": 7, "q1_ms": 0.19, "q3_ms": 54.19}
    skewed |= {"min_ms": 0.18, "max_ms": 60.0}
    few = {"median_ms": 2.0, "iqr_ms": 1.0, "spread": 3.0, "trials": 3, "q1_ms": 1.5, "q3_ms": 2.5}
    few |= {"min_ms": 1.0, "max_ms": 3.0}
    old = {"median_ms": 5.0, "iqr_ms": 1.0, "spread": 1.2, "trials": 9}
    (plot,) = plots.plots({"later": skewed, "few": few, "old": old})
    assert (
        plot.rows[0][1:4] == (0.2, 0.19, 54.19) and plot.rows[1][2:4] == (1.0, 3.0) and plot.rows[2][2:4] == (5.0, 5.0)
    )
    assert len(re.findall(r'id="mark-\d+"', plot.svg)) == 3 and "<path" in plot.svg
    from matplotlib.figure import Figure

    axes = Figure().add_subplot()
    plots.DRAW["timing"](axes, plot)
    assert not axes.patches and axes.get_xscale() == "log", "points on a log axis, no bars"


def test_every_number_a_test_recorded_is_on_the_page(pages):
    """Issue 37: the numbers the tests judge (values_over_shape, bf16 speedups ...) appear in the HTML."""
    for c in load("h200")["claims"]:
        for t in c["tests"]:
            for record in t.get("evidence", []):
                for key, value in record.items():
                    if plots.number(value):
                        assert f"{key.replace('_', ' ')} {html._fmt(value)}" in pages["h200"], (c["id"], key)


def test_differences_are_drawn_as_a_histogram():
    need_matplotlib()
    found = plots.plots(
        {
            "tf32_vs_fp32": {"of": "relative difference", "bins": ["equal", "1e-4..1e-3"], "counts": [3, 5]},
            "elements": 8,
        }
    )
    assert [p.kind for p in found] == ["histogram"] and found[0].rows == [("equal", 3), ("1e-4..1e-3", 5)]
    assert len(re.findall(r'id="mark-\d+"', found[0].svg)) == 2


def test_without_matplotlib_a_plot_is_its_table(monkeypatch):
    monkeypatch.setattr(plots, "available", lambda: False)
    text = html.page(Report.load(RECORDED["h200"]))
    assert plots.MISSING in text and "<svg" not in text and "<summary>numbers</summary>" in text


def test_homework_shows_score_points_and_each_failing_function(pages):
    report, text = load("homework"), pages["homework"]
    result = report["homework"]
    section = text.split('<section id="homework">')[1].split("</section>")[0]
    assert f"score: {result['percent']:g} %" in section
    for item in result["claims"]:
        assert f"{item['earned']:g} / {item['points']:g}" in section
    failing = [i for i in result["claims"] if i["status"] == "failed"]
    assert failing, "the recorded homework report should hold a failing function"
    for item in failing:
        assert html.esc(item["feedback"]) in section


def test_curriculum_report_writes_the_html_beside_the_json(pytester):
    pytester.makepyfile(
        "import pytest\n@pytest.mark.claim('S2.2-hand')\ndef test_hand(evidence):\n"
        "    evidence(run={'median_ms': 1.0, 'iqr_ms': 0.1, 'trials': 5})\n"
    )
    opt_in = ("-p", "stackcheck")  # where stackcheck runs from PYTHONPATH, without its entry point
    result = pytester.runpytest_inprocess(*opt_in, "-p", "no:cacheprovider", "--curriculum-report=out/run.json")
    result.assert_outcomes(passed=1)
    page = (pytester.path / "out" / "run.html").read_text(encoding="utf-8")
    report = json.loads((pytester.path / "out" / "run.json").read_text(encoding="utf-8"))
    (claim,) = [c for c in report["claims"] if c["id"] == "S2.2-hand"]
    article = page.split('id="claim-s2-2-hand"')[1].split("</article>")[0]
    assert f'data-status="{claim["status"]}"' in article and '<figure class="plot" data-kind="timing">' in article
    result.stdout.fnmatch_lines(["*report: out/run.json, out/run.md, out/run.html*"])


def test_a_failure_shows_where_it_was_raised_and_the_slowest_tests_are_listed(pytester):
    """Issue 37: the verdict gives a failure's file:line beside its message and rerun line; each test's
    time is recorded, and the page lists the slowest; chapter headings carry the course's titles."""
    pytester.makepyfile(
        "import time, pytest\n"
        "@pytest.mark.claim('S2.2-hand')\ndef test_slow(impl):\n    time.sleep(0.3)\n"
        "@pytest.mark.claim('S2.3-broadcast')\ndef test_wrong(impl):\n    assert 1 == 2, 'b was copied'\n"
    )
    result = pytester.runpytest_inprocess("-p", "stackcheck", "-p", "no:cacheprovider", "--curriculum-report=r.json")
    result.assert_outcomes(passed=1, failed=1)
    report = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    tests = {t["nodeid"].rpartition("::")[2]: t for c in report["claims"] for t in c["tests"]}
    assert tests["test_slow"]["seconds"] >= 0.3 and tests["test_wrong"]["location"].endswith(".py:7")
    page = (pytester.path / "r.html").read_text(encoding="utf-8")
    verdict = page.split('<section id="verdict">')[1].split("</section>")[0]
    assert f"at <code>{tests['test_wrong']['location']}</code>" in verdict and "b was copied" in verdict
    slowest = page.split('<section id="durations">')[1].split("</section>")[0]
    assert slowest.index("test_slow") < slowest.index("test_wrong")
    assert '<h3 id="chapter-2">§2 <span lang="ko">공통 예제의 수학과 텐서</span></h3>' in page


def test_every_chapter_the_catalogue_names_has_the_courses_title():
    from stackcheck.claims import catalogue

    named = {html.chapter(c["section"]) for c in catalogue.catalogue().values()} - {"other"}
    assert named <= set(catalogue.chapters()), sorted(named - set(catalogue.chapters()))


def two_machines(tmp_path: Path) -> list[str]:
    """The two baselines, with one claim both verified made to fail on the CPU: (paths, that id). A
    disagreement the real runs already hold stays (baselines/h200.json's S3.2-variants)."""
    cpu, h200 = load("cpu"), load("h200")
    verified_on_cpu = {c["id"] for c in cpu["claims"] if c["status"] == "verified"}
    disputed = next(c for c in h200["claims"] if c["status"] == "verified" and c["id"] in verified_on_cpu)
    for claim in cpu["claims"]:
        if claim["id"] == disputed["id"]:
            claim["status"] = "failed"
    paths = [tmp_path / "cpu.json", tmp_path / "h200.json"]
    for path, report in zip(paths, (cpu, h200)):
        path.write_text(json.dumps(report), encoding="utf-8")
    return [str(p) for p in paths], disputed["id"]


def test_merge_marks_where_machines_disagree(tmp_path):
    paths, disputed = two_machines(tmp_path)
    found = merge.matrix(merge.load(paths))
    already = merge.matrix(merge.load([str(RECORDED[m]) for m in ("cpu", "h200")]))
    assert sorted(found["disagreements"]) == sorted(already["disagreements"] + [disputed])
    assert len(found["machines"]) == 2 and all(m["versions"] for m in found["machines"])
    verified_here_only = [r for r in found["claims"] if set(r["statuses"].values()) == {"verified", "untested"}]
    assert not any(r["disagree"] for r in verified_here_only), "not run is not a disagreement"


def test_stackcheck_merge_writes_html_markdown_and_json(tmp_path, capsys):
    paths, disputed = two_machines(tmp_path)
    assert cli.main(["merge", *paths, "--out", str(tmp_path / "matrix.html")]) == 0
    page = (tmp_path / "matrix.html").read_text(encoding="utf-8")
    assert f'<tr id="row-{disputed}" class="disagree">' in page and "✗ disagree" in page
    assert "<script" not in page
    assert f"`{disputed}`" in (tmp_path / "matrix.md").read_text(encoding="utf-8")
    assert disputed in json.loads((tmp_path / "matrix.json").read_text(encoding="utf-8"))["disagreements"]


def test_merge_of_the_shipped_baselines_sets_verified_on_one_machine_apart():
    """Issue 37: verified on one machine and skipped or not run on the other is a difference, listed
    apart from a disagreement (verified against failed), and the versions that differ are named."""
    cpu, h200 = ({c["id"]: c["status"] for c in load(m)["claims"]} for m in ("cpu", "h200"))
    expected = [
        cid
        for cid in dict.fromkeys([*cpu, *h200])
        if "verified" in {cpu.get(cid), h200.get(cid)}
        and cpu.get(cid) != h200.get(cid)
        and not {cpu.get(cid), h200.get(cid)} & {"failed", "interrupted"}
    ]
    found = merge.matrix(merge.load([str(RECORDED[m]) for m in ("cpu", "h200")]))
    assert sorted(found["differences"]) == sorted(expected) and len(expected) >= 10, found["differences"]
    assert not set(found["differences"]) & set(found["disagreements"])
    assert "torch" in found["versions_differ"] and "python" not in found["versions_differ"]
    page = merge.html(found)
    assert page.count('class="differ"') >= len(expected) + 1 and "torch <strong>(differs)</strong>" in page


def timing_report(name: str) -> dict:
    return json.loads((ROOT / "fixtures" / f"h200-{name}-timings.json").read_text(encoding="utf-8"))


def test_merge_flags_medians_that_moved_past_their_own_scatter(tmp_path):
    """Issue 37: a cold and a warm `.ci/gpu` on one H200 (their timing claims, recorded 2026-12-02):
    the medians that moved further apart than either run's trials scattered are flagged, the rest not;
    a report merged with itself flags nothing."""
    cold, warm = timing_report("cold"), timing_report("warm")
    paths = [tmp_path / "cold.json", tmp_path / "warm.json"]
    for path, report in zip(paths, (cold, warm)):
        path.write_text(json.dumps(report), encoding="utf-8")
    found = merge.matrix(merge.load([str(p) for p in paths]))
    assert {"MC09", "S6.3-shape", "S5.2-too-big"} <= set(found["moved"])
    for row in found["claims"]:
        for moved in row["moved"]:
            low, high = sorted(moved["medians_ms"].values())
            assert high / low > moved["spread"] - 0.01, moved
    same = merge.matrix([("once", Report.from_json(cold)), ("again", Report.from_json(cold))])
    assert same["moved"] == [] and same["differences"] == []
    page = merge.html(found)
    assert "timing moved:" in page and "ms (" in page


def test_merge_links_each_cell_to_that_machines_report(tmp_path):
    cold, warm = timing_report("cold"), timing_report("warm")
    for name, report in (("cold", cold), ("warm", warm)):
        (tmp_path / f"{name}.json").write_text(json.dumps(report), encoding="utf-8")
        (tmp_path / f"{name}.html").write_text(html.page(Report.from_json(report)), encoding="utf-8")
    written = merge.write([str(tmp_path / "cold.json"), str(tmp_path / "warm.json")], str(tmp_path / "out" / "m.html"))
    page = written[2].read_text(encoding="utf-8")
    claim = cold["claims"][0]["id"]
    for name in ("cold", "warm"):
        target = f'href="../{name}.html#claim-{html.slug(claim)}"'
        assert target in page, target
        assert f'id="claim-{html.slug(claim)}"' in (tmp_path / f"{name}.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args, message",
    [
        (["baselines/cpu.json"], "merge needs two reports or more"),
        (["baselines/cpu.json", "pyproject.toml"], "pyproject.toml: not a readable curriculum report"),
        (["baselines/cpu.json", "fixtures/missing.json"], "fixtures/missing.json: not a readable curriculum report"),
    ],
    ids=["one", "not-json", "missing"],
)
def test_merge_refuses_bad_input_in_one_line(monkeypatch, tmp_path, capsys, args, message):
    monkeypatch.chdir(ROOT)
    assert cli.main(["merge", *args, "--out", str(tmp_path / "m.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_merge_refuses_a_run_given_twice_in_one_line(monkeypatch, tmp_path, capsys):
    """Issue 52: one file twice (in any spelling of its path), or two copies of one run's report, is
    one line and exit 2, not a matrix of a machine beside itself."""
    monkeypatch.chdir(ROOT)
    (tmp_path / "copy.json").write_bytes(RECORDED["cpu"].read_bytes())
    for args, said in (
        (["baselines/cpu.json", "baselines/cpu.json"], "baselines/cpu.json is given twice"),
        (["baselines/cpu.json", "baselines/h200.json", "baselines/../baselines/cpu.json"], "is given twice"),
        (["baselines/cpu.json", str(tmp_path / "copy.json")], "are reports of one run (recorded 20"),
    ):
        assert cli.main(["merge", *args, "--out", str(tmp_path / "m.html")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and said in err and "give each run's report once" in err, err
    assert not (tmp_path / "m.html").exists()


def test_the_page_of_a_small_run_leads_with_its_failure_whole(pytester):
    """Issue 52 item 5: the page draws the claims the run selected (the rest named in one line), and
    leads with each failure: every line of its message, what to revisit and the very rerun line the
    terminal printed (the run's own options kept)."""
    pytester.makepyfile(
        "import pytest\n@pytest.mark.claim('S2.2-hand')\ndef test_hand(impl):\n"
        "    assert False, 'Y of the §2.2 example is wrong\\nat [0, 1]: got 7, expected 6'\n"
    )
    result = pytester.runpytest_inprocess(
        "-p", "stackcheck", "-p", "no:cacheprovider", "-m", "not tpu", "--curriculum-report=r.json"
    )
    result.assert_outcomes(failed=1)
    page = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert Page(page).count("article") == 1
    known = len(catalogue.catalogue())
    assert f"{known - 1} of {known} claims were not selected by this run" in page
    verdict = page.split('<section id="verdict">')[1].split("</section>")[0]
    assert "at [0, 1]: got 7, expected 6" in verdict, "the message's later lines are kept"
    assert "Revisit first, course §2.2 [S2.2-hand]: A and Z were right and Y = ReLU(Z) is not" in verdict
    printed = next(line for line in result.outlines if line.startswith("Rerun: ")).removeprefix("Rerun: ")
    assert "-m 'not tpu'" in printed and f"rerun: <code>{html.esc(printed)}</code>" in verdict
    markdown = (pytester.path / "r.md").read_text(encoding="utf-8")
    first = markdown.split("\n## ")[1]
    assert first.startswith("Failures: what to fix first") and "got 7, expected 6" in first and printed in first


def test_a_judged_number_is_drawn_only_as_a_ratio_of_two_nonzero_values():
    """Issue 52 item 7: a ratio over a zero (MC04's "tensor-pipe over FFMA" with FFMA = 0), a number
    that is no ratio (Q3's negative extra bytes) or a ratio whose parts the record lacks is a table;
    a ratio of two recorded non-zero values is drawn against its line, in ratio units."""
    need_matplotlib()
    fast = {"median_ms": 0.1, "iqr_ms": 0.01, "spread": 1.1, "trials": 9}
    record = {
        "ffma": 0,
        "tensor": 262144,
        "first_call_ms": 400.0,
        "eager": fast,
        "judged": [
            {
                "name": "tensor over ffma",
                "measured": 262144.0,
                "line": 0.001,
                "passes": "above",
                "of": ["tensor", "ffma"],
            },
            {"name": "fused extra bytes over 4NM4", "measured": -0.02, "line": 0.05, "passes": "below"},
            {
                "name": "first_call_over_eager",
                "measured": 4000.0,
                "line": 5.0,
                "passes": "above",
                "of": ["first_call_ms", "eager"],
            },
        ],
    }
    found = {p.kind: p for p in plots.plots(record)}
    assert [r[0] for r in found["judged"].rows] == ["tensor over ffma", "fused extra bytes over 4NM4"]
    assert not found["judged"].svg and not found["judged"].drawn
    assert [r[0] for r in found["verdict"].rows] == ["first_call_over_eager"] and "ratio (×)" in found["verdict"].svg
    timing = found["timing"]  # the first call is drawn where the claim is about it, its judged line across it
    assert [r[0] for r in timing.rows] == ["eager", "first_call_ms"] and timing.lines[0][0] == "first_call_ms"
    assert "ms (point: median" in timing.svg


@pytest.mark.parametrize("name", ["cpu", "h200"])
def test_every_drawn_plot_labels_its_value_axis_with_a_unit(name, monkeypatch):
    """Issue 52 item 7: units on every axis: each plot the recorded reports draw labels its value axis
    with a unit (ms, µs, bytes, elements, the counters' unit, a ratio), read from the drawn axes."""
    need_matplotlib()
    drawn = []
    monkeypatch.setattr(plots, "_plain_log_ticks", lambda axes: drawn.append((axes.get_xlabel(), axes.get_ylabel())))
    kinds = []
    for claim in load(name)["claims"]:
        for test in claim["tests"]:
            for record in test.get("evidence", []):
                kinds += [p.kind for p in plots.plots(record) if p.drawn] if isinstance(record, dict) else []
    assert len(drawn) == len(kinds) > 0
    units = ("ms", "µs", "bytes", "elements", "instructions", "sectors", "ratio", "as recorded")
    for kind, labels in zip(kinds, drawn):
        assert any(u in " ".join(labels) for u in units), (kind, labels)


@pytest.mark.parametrize("name", ["cpu", "h200"])
def test_every_picture_names_its_tests_parameters_and_labels_bytes_as_bytes(name):
    """Issue 76 item 6: a picture's title names its test's parameters (which dtype, which device),
    and a byte axis reads 64 MB, never a number under a "1e8" multiplier; read from the drawn SVG's
    text for every plot the recorded reports draw."""
    need_matplotlib()
    byte_axes = 0
    for claim in load(name)["claims"]:
        for test in claim["tests"]:
            about = plots.parameters(test["nodeid"])
            for record in (r for r in test.get("evidence", []) if isinstance(r, dict)):
                for plot in (p for p in plots.plots(record, about=about) if p.drawn):
                    texts = re.findall(r"<text[^>]*>([^<]*)</text>", plot.svg)
                    assert f"[{about}]" in " ".join(texts) or not about, (test["nodeid"], texts)
                    if "bytes" in texts:  # the value axis's label
                        byte_axes += 1
                        ticks = [t for t in texts if re.fullmatch(r"[\d.]+ [kMGT]?B", t)]
                        assert ticks and not any(re.search(r"1e[+\-−]?\d|×10", t) for t in texts), texts
    assert byte_axes > 0
