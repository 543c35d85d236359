"""``stackcheck report FILE [--html OUT] [--md OUT]`` (issue 52): a saved curriculum report rendered as
its run rendered it (the summary's sections, the page, the Markdown); a file that is no report is
one line and exit 2, whatever is wrong with it."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck import cli
from stackcheck.report import render

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent
HOMEWORK = ROOT / "fixtures" / "homework-report.json"


def small_report() -> dict:
    """The recorded homework report cut to a few claims (those its homework score names among them)."""
    report = json.loads(HOMEWORK.read_text(encoding="utf-8"))
    report["claims"] = [c for c in report["claims"] if c["tests"]][:3] + report["claims"][-1:]
    report["other_tests"] = report.get("other_tests", [])[:2]
    return report


def test_a_saved_report_renders_as_its_run_rendered_it(pytester, suite_file, tmp_path, capsys):
    result = pytester.runpytest_inprocess(
        suite_file("tests_math/test_s2_2_hand.py"),
        "-m",
        "numpy or tpu",
        "-p",
        "no:cacheprovider",
        f"--curriculum-report={tmp_path / 'run.json'}",
    )
    outcomes = result.parseoutcomes()  # a test that ran and one skipped (where no TPU is): each rendered
    assert outcomes.get("passed", 0) + outcomes.get("skipped", 0) == 2 and outcomes["deselected"] == 12, outcomes
    assert (
        cli.main(
            [
                "report",
                str(tmp_path / "run.json"),
                "--html",
                str(tmp_path / "again" / "page.html"),
                "--md",
                str(tmp_path / "again" / "page.md"),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out.splitlines()
    for suffix in ("html", "md"):
        assert (tmp_path / "again" / f"page.{suffix}").read_text(encoding="utf-8") == (
            tmp_path / f"run.{suffix}"
        ).read_text(encoding="utf-8"), f"the {suffix} rendered from the file is the run's own"
    run = result.stdout.lines
    claims = [line for line in run[run.index(next(r for r in run if "stackcheck: course claims" in r)) + 1 :]]
    table = [line for line in claims if line.strip().startswith(("math ", "claims:"))]
    assert table and all(line in printed for line in table), (table, printed)
    assert any("stackcheck: course claims" in line for line in printed)
    assert printed[-1] == f"wrote {tmp_path / 'again' / 'page.html'}, {tmp_path / 'again' / 'page.md'}"


def test_a_homework_report_prints_its_score(tmp_path, capsys):
    assert cli.main(["report", str(HOMEWORK)]) == 0
    printed = capsys.readouterr().out
    assert " stackcheck: homework " in printed and "score: " in printed and "wrote" not in printed


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "missing.json: not a readable curriculum report: [Errno 2]"),
        ("[tool.pytest]\n", "bad.json: not a readable curriculum report: Expecting value"),
        ('{"claims": []}', "bad.json: not a curriculum report (no 'claims' and 'environment')"),
        ('{"claims": {}, "environment": {}}', "bad.json: claims is not a list"),
        ("\udcff", "bad.json: not a readable curriculum report"),
    ],
    ids=["missing", "not-json", "no-environment", "claims-not-a-list", "not-utf8"],
)
def test_a_file_that_is_no_report_is_one_line_and_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / ("missing.json" if content is None else "bad.json")
    if content is not None:
        path.write_bytes(content.encode("utf-8", "surrogateescape"))
    assert cli.main(["report", str(path), "--html", str(tmp_path / "page.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("stackcheck: ") and message in err, err
    assert not (tmp_path / "page.html").exists()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-1e3, 1e3) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


def places(value, path=()):
    """Every path into ``value`` (a JSON tree): keys and indexes."""
    yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        yield from places(inner, (*path, key))


def changed(report: dict, path: tuple, by) -> dict:
    """``report`` with the value at ``path`` replaced by ``by`` (removed where ``by`` is the string DEL)."""
    report = json.loads(json.dumps(report))
    if not path:
        return by
    *to, last = path
    parent = report
    for key in to:
        parent = parent[key]
    if by == "DEL":
        del parent[last]
    else:
        parent[last] = by
    return report


SMALL = small_report()
PLACES = list(places(SMALL))


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(where=st.sampled_from(PLACES), by=JSON | st.just("DEL"))
def test_a_damaged_report_renders_or_is_one_line_never_a_traceback(tmp_path, capsys, where, by):
    """Any one value of a real report replaced by any JSON value (or removed): rendered, or refused in
    one line with exit 2; the class of "a file that is not quite a report", not a list of examples."""
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(changed(SMALL, where, by)), encoding="utf-8")
    code = cli.main(["report", str(path), "--html", str(tmp_path / "p.html"), "--md", str(tmp_path / "p.md")])
    err = capsys.readouterr().err.strip()
    assert code == 0 and not err or code == 2 and len(err.splitlines()) == 1 and "damaged.json" in err, (code, err)


@given(st.lists(st.text(alphabet=st.sampled_from("`~ <>/ab\n#*!-[]()"), max_size=40), min_size=1, max_size=6))
@settings(max_examples=200, deadline=None)
def test_what_a_submission_printed_stays_inside_its_code_block(lines):
    """Issue 74: a failure message quotes what the student's code printed; a closing fence, a heading
    or HTML in it never leaves its code block in the Markdown feedback (a CommonMark parser's view)."""
    markdown_it = pytest.importorskip("markdown_it", reason="the check parses with markdown-it-py")
    text = [line for chunk in lines for line in chunk.split("\n")]
    tokens = markdown_it.MarkdownIt("commonmark").parse("\n".join(["# page", "", *render.fenced(text), "", "after"]))
    kinds = [t.type for t in tokens]
    assert kinds.count("fence") == 1 and "html_block" not in kinds, kinds
    fence = next(t for t in tokens if t.type == "fence")
    assert fence.content.rstrip("\n") == "\n".join(text).rstrip("\n") or not "".join(text).strip(), fence.content
    span = markdown_it.MarkdownIt("commonmark").parseInline(render.spanned(" ".join(text)))[0].children
    assert [t.type for t in span] == ["code_inline"], [t.type for t in span]


@given(st.text(alphabet=st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010), min_size=1, max_size=12))
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_message_utf8_cannot_hold_is_written_and_read_back_as_it_was(tmp_path, text):
    """From a determined student's attack: a lone surrogate in a failure message (any text JSON's
    escapes can carry) crashed the judge writing its report, and the work earned 0. The report, its
    Markdown and its page are written whole, and the JSON reads back the message as it was (a high
    and a low surrogate in a row as the one character they spell)."""
    from stackcheck.claims.results import Report

    data = small_report()
    failing = next(t for c in data["claims"] for t in c["tests"])
    failing.update(outcome="failed", message=f"printed {text}")
    written = render.write(Report.from_json(data), str(tmp_path / "run.json"), [("homework", [text])])
    again = Report.load(written[0])
    paired = f"printed {text}".encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")  # as JSON reads
    assert any(t.message == paired for _, t in again.tests())
    assert all(p.read_bytes() for p in written)
