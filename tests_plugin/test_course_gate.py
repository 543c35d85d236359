"""The course gate: --course runs the course's listings (verbatim) with the claim tests' markers,
reports failing ones as errata, keeps known errata as strict xfails; --baseline reports drift."""

import json
import os
import re
from pathlib import Path

import pytest

from stackcheck.paths import tools

pytestmark = pytest.mark.meta
sybil = pytest.importorskip("sybil", reason="the course gate needs Sybil (pip install sybil)")

COURSE_TEXT = Path(
    os.environ.get(
        "STACKCHECK_COURSE_TEXT",
        Path(__file__).resolve().parents[2] / "shared" / "curriculum" / "week02-ai-execution-stack.ko.txt",
    )
)
DOC = """# a course
<!-- stackcheck
[errata."1.3-numpy"]
reason = "known: divides by zero"
working_form = "fixed.py"
[errata."1.4-numpy"]
reason = "was broken, fixed since"
-->

```python {section=1.1 stack=numpy device=cpu}
import numpy as np
y = np.maximum(np.array([-1.0, 2.0]), 0)
```

```python {section=1.2 stack=numpy device=cpu}
assert y.tolist() == [0.0, 3.0], "wrong"
```

```python {section=1.3 stack=numpy device=cpu}
1 / 0
```

```python {section=1.4 stack=numpy device=cpu}
z = y + 1
```

```python {section=1.5 stack=numpy device=tpu}
z = y * 2
```
"""


def test_the_shipped_listings_are_the_courses_lines_with_indentation_restored():
    """Every line of every listing, stripped, is the course's line, in order (the course text lost
    its indentation and glues each listing's last line to the output that follows it)."""
    if not COURSE_TEXT.is_file():
        pytest.skip(f"the course text is not at {COURSE_TEXT} (set STACKCHECK_COURSE_TEXT)")
    from stackcheck.course import listings

    text = [line.strip() for line in COURSE_TEXT.read_text(encoding="utf-8").splitlines()]
    document = listings.sybil().parse(listings.shipped())
    listings = listings.listings_of(document)
    assert len(listings) >= 12
    for listing in listings:
        lines = [line.strip() for line in listing.source.splitlines()]
        starts = [
            i for i, line in enumerate(text) if line == lines[0] or (len(lines) == 1 and line.startswith(lines[0]))
        ]
        assert any(
            text[i : i + len(lines) - 1] == lines[:-1] and text[i + len(lines) - 1].startswith(lines[-1])
            for i in starts
        ), f"listing §{listing.section} ({listing.stack}) is not the course's text"


def test_the_shown_outputs_are_the_courses_lines():
    """Every output fence of the shipped document is the course's text, line by line (stripped; the
    first line may be glued to the listing's last, the last to the prose after it)."""
    if not COURSE_TEXT.is_file():
        pytest.skip(f"the course text is not at {COURSE_TEXT} (set STACKCHECK_COURSE_TEXT)")
    from stackcheck.course import listings

    course = "\n".join(line.strip() for line in COURSE_TEXT.read_text(encoding="utf-8").splitlines())
    shown = [ls for ls in listings.listings_of(listings.sybil().parse(listings.shipped())) if ls.shown]
    assert len(shown) >= 7, "the course shows the output of §2.2, 8.2, 8.3, 8.4, 9.3, 9.5 and 9.6"
    for listing in shown:
        text = "\n".join(line.strip() for line in listing.shown.splitlines())
        assert text in course, f"§{listing.section}'s shown output is not the course's text"


OUTPUT_DOC = """# printing
```python {section=1.1 stack=numpy device=cpu}
import numpy as np
print("Y =", np.array([0.0, 6.0], dtype=np.float32))
print("numpy", np.__version__)
```

```text {output vary="numpy"}
Y = [0.0, 6.0]
numpy 0.0.1
```

```python {section=1.2 stack=numpy device=cpu}
print("loss:", 9.5)
```

```text {output}
loss: 9.5625
```

```python {section=1.3 stack=numpy device=cpu}
print("graph(): %relu")
```

```text {output}
graph(): %clamp
```
"""


def test_a_listing_must_print_what_the_course_shows(pytester):
    """Issue 25: words equal after whitespace, numbers within the tolerance policy, vary lines by their
    prefix; a difference fails the listing at the output's line, with the difference shown."""
    pytester.makefile(".md", course=OUTPUT_DOC)
    result = pytester.runpytest_inprocess("--course", "course.md", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    lines = OUTPUT_DOC.splitlines()
    result.stdout.fnmatch_lines(
        [
            f"*course.md:{lines.index('loss: 9.5625') + 1}: listing §1.2 (numpy) prints other than the course shows:*",
            "*the printed numbers differ from the course's*",
            "*got 9.5, expected 9.5625*",
            f"*course.md:{lines.index('graph(): %clamp') + 1}: listing §1.3 (numpy) prints other than*",
            "*-graph(): %clamp*",
            "*+graph(): %relu*",
        ]
    )


SHELL_DOC = """# shell lines
```python {section=3.1 stack=numpy device=cpu file=hello.py}
print("hello from", __name__)
```

```shell {section=3.1 stack=numpy device=cpu}
python hello.py
```

```text {output}
hello from __main__
```

```shell {section=3.2 stack=numpy device=cpu}
python missing.py
```

```shell {section=3.3 stack=numpy device=cpu}
pixi run python hello.py
```
"""


def test_a_shell_line_runs_as_the_course_writes_it(pytester):
    """Issue 35: a ```shell fence runs with this run's python in the folder its chapter's file
    examples were written to, its output compared like a listing's; a failing line names its document
    line, and a command other than python or mojo is refused in one line."""
    pytester.makefile(".md", course=SHELL_DOC)
    result = pytester.runpytest_inprocess("--course", "course.md", "-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=2, failed=2)
    lines = SHELL_DOC.splitlines()
    result.stdout.fnmatch_lines(
        [
            f"*course.md:{lines.index('python missing.py') + 1}: listing §3.2 (shell) `python missing.py` fails: *",
            "*listing §3.3 (shell): one command line starting with python or mojo, got 'pixi run python hello.py'*",
        ]
    )
    assert "INTERNALERROR" not in result.stdout.str()


def known_part_doc() -> str:
    """Three listings whose errata are known from "=== compiled ===" on: one that differs only after it,
    one with a new difference before it (Y), one whose erratum is fixed (it prints what the course shows)."""
    shown = "Y = [0.0, 6.0]\n=== compiled ===\nHloModule colab, fingerprint=d128"
    printed = {"1.1": ("[0. 6.]", "HloModule here"), "1.2": ("[0. 7.]", "HloModule here")}
    printed["1.3"] = ("[0. 6.]", "HloModule colab, fingerprint=d128")
    errata = "".join(
        f'[errata."{s}-numpy"]\nreason = "the author\'s machine"\ndiffers_from = "=== compiled ==="\n' for s in printed
    )
    listings = "".join(
        f'\n```python {{section={s} stack=numpy device=cpu}}\nprint("Y = {y}")\nprint("=== compiled ===")\n'
        f'print("{hlo}")\n```\n\n```text {{output}}\n{shown}\n```\n'
        for s, (y, hlo) in printed.items()
    )
    return f"# errata known from a line on\n<!-- stackcheck\n{errata}-->\n{listings}"


def test_an_erratum_known_from_a_line_on_checks_every_line_before_it(pytester):
    """Issue 35: §9.3's erratum was a strict xfail that any failure satisfied. An erratum known from a
    line on (``differs_from``) compares the output up to that line (a new difference there fails, as a
    failure, not an expected one), and from there it must still differ (a fixed course says so)."""
    pytester.makefile(".md", course=known_part_doc())
    result = pytester.runpytest_inprocess("--course", "course.md", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*listing §1.2 (numpy) prints other than the course shows*",
            "*the printed numbers differ from the course's*",
            "*listing §1.3 (numpy): the known erratum from '=== compiled ===' on is gone*",
            "*§1.1*numpy*cpu*passed: compared up to '=== compiled ==='*",
        ],
    )


FRAGMENT_DOC = """# a fragment
<!-- stackcheck
[given."1.1-numpy"]
code = "import numpy as np\\nx = np.ones(3)"
-->

```python {section=1.1 stack=numpy device=cpu}
y = x * 2
```

```python {section=1.2 stack=numpy device=cpu}
z = q + 1
```
"""


def test_a_fragment_runs_after_the_documents_preamble_and_says_so(pytester):
    """§6.5's snippet leaves fn and x to the reader: the document's [given] supplies them, the listing
    stays verbatim, and the report says how it ran; a fragment without one fails on the missing name."""
    pytester.makefile(".md", course=FRAGMENT_DOC)
    result = pytester.runpytest_inprocess("--course", "course.md", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*§1.1*numpy*cpu*passed: ran after the gate's preamble*", "*listing §1.2 (numpy) fails: NameError*"]
    )


CHECKED_DOC = """# a fragment and the gate's check on what it measured
<!-- stackcheck
[given."1.1-numpy"]
code = '''
import time
def fn(x):
    time.sleep(0.05)
    return x
'''
check = '''
start = time.perf_counter()
fn(1)
assert elapsed >= 0.5 * (time.perf_counter() - start), 'the clock stopped early'
'''
[given."1.2-numpy"]
code = '''
import threading, time
def fn(x):
    done = threading.Thread(target=time.sleep, args=(0.2,))
    done.start()
    return done
'''
check = '''
start = time.perf_counter()
fn(1).join()
assert elapsed >= 0.5 * (time.perf_counter() - start), 'the clock stopped early'
'''
-->

```python {section=1.1 stack=numpy device=cpu}
start = time.perf_counter()
y = fn(1)
elapsed = time.perf_counter() - start
```

```python {section=1.2 stack=numpy device=cpu}
start = time.perf_counter()
y = fn(2)
elapsed = time.perf_counter() - start
```
"""


def test_the_documents_check_judges_what_a_fragment_measured(pytester):
    """§6.5's fragment prints nothing: the document's [given] check judges its ``elapsed``. The same
    fragment around a function that returns at once and works on (1.2) fails at its line."""
    pytester.makefile(".md", course=CHECKED_DOC)
    result = pytester.runpytest_inprocess("--course", "course.md", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    failing = CHECKED_DOC.splitlines().index("```python {section=1.2 stack=numpy device=cpu}") + 2
    result.stdout.fnmatch_lines(
        [
            f"*course.md:{failing}: listing §1.2 (numpy): the gate's check after it fails: the clock stopped early*",
            "*§1.1*numpy*cpu*passed: ran after the gate's preamble*; what it measured checked after it*",
        ]
    )


def test_listings_run_in_order_and_errata_are_reported(pytester):
    pytester.makefile(".md", course=DOC)
    result = pytester.runpytest_inprocess(
        "--course", "course.md", "-p", "no:cacheprovider", "--curriculum-report", "report.json"
    )
    result.assert_outcomes(passed=1, failed=2, xfailed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*stackcheck: course listings*",
            "*§1.1*numpy*cpu*passed*",
            "*ERRATUM listing §1.2 (numpy *), line 16: listing §1.2 (numpy) fails: AssertionError: wrong*",
            "*known erratum listing §1.3 *ZeroDivisionError*; working form: fixed.py*",
            "*XPASS(strict)*was broken, fixed since*",
        ]
    )
    report = json.loads((pytester.path / "report.json").read_text())
    assert [r["outcome"] for r in report["listings"]] == ["passed", "failed", "xfailed", "failed", "skipped"]
    assert [e["listing"] for e in report["errata"]] == ["1.2-numpy", "1.3-numpy", "1.4-numpy"]
    assert report["errata"][0]["versions"]["numpy"] and report["errata"][1]["known"]
    document = DOC.splitlines()
    failing = document.index('assert y.tolist() == [0.0, 3.0], "wrong"') + 1  # 1-based
    assert report["errata"][0]["failing_line"] == failing, "the erratum names the line that failed"
    assert report["errata"][0]["working_form"] == "none yet" and report["errata"][1]["working_form"] == "fixed.py"
    result.stdout.fnmatch_lines([f"*course.md:{failing}: listing §1.2 (numpy) fails: AssertionError: wrong*"])
    assert "Traceback" not in result.stdout.str() and "sybil" not in result.stdout.str().lower().split("plugins:")[-1]


def test_a_python_listing_beside_a_broken_mojo_listing_runs_against_the_working_form_and_says_so(pytester):
    pytest.importorskip("max", reason="the working form is a Mojo package for MAX")
    if tools.mojo_executable() is None:
        pytest.skip("no mojo command to build the listing with")
    pytester.makefile(
        ".md",
        course="""<!-- stackcheck
[errata."2.1-mojo"]
reason = "not Mojo at all"
-->

```mojo {section=2.1 stack=mojo device=cpu file=kernels/__init__.mojo}
this is not mojo
```

```python {section=2.1 stack=numpy device=cpu file=run.py}
from pathlib import Path
assert (Path(__file__).parent / "kernels" / "__init__.mojo").read_text().startswith("")
```
""",
    )
    result = pytester.runpytest_inprocess("--course", "course.md", "-p", "no:cacheprovider", "-m", "not mojo")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*§2.1*numpy*passed: ran against the working form mojo/study_relu*"])


def test_a_later_listing_runs_its_chapter_first_when_selected_alone(pytester):
    pytester.makefile(".md", course=DOC)
    result = pytester.runpytest_inprocess("--course", "course.md", "-p", "no:cacheprovider", "-k", "1.2-numpy")
    result.assert_outcomes(failed=1)  # §1.2 alone: §1.1 ran first, so y exists and the assert speaks
    result.stdout.fnmatch_lines(["*AssertionError: wrong*", "*FAILED course.md::§1.2-numpy:L15*"])


def test_each_listing_runs_once_in_the_documents_order(pytester):
    """The MAX tests go last in a run; a MAX listing still runs where the document puts it, and once."""
    pytest.importorskip("max", reason="a listing of stack max runs where MAX is installed")
    pytester.makefile(
        ".md",
        course="""```python {section=3.1 stack=max device=cpu}
assert "ran" not in globals(), "§3.1 ran twice"
ran = ["§3.1"]
```

```python {section=3.2 stack=numpy device=cpu}
ran.append("§3.2")
```
""",
    )
    result = pytester.runpytest_inprocess("--course", "course.md", "-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*§3.1-max*PASSED*", "*§3.2-numpy*PASSED*"])


def test_a_mojo_program_builds_without_its_chapters_python(pytester):
    """§10.5's program is built on its own: a failing Python listing before it is not its concern."""
    if tools.mojo_executable() is None:
        pytest.skip("no mojo command to build the listing with")
    pytester.makefile(
        ".md",
        course="""```python {section=4.1 stack=numpy device=cpu}
raise RuntimeError("not this one's concern")
```

```mojo {section=4.2 stack=mojo device=cpu file=program.mojo}
def main():
    print("built")
```
""",
    )
    result = pytester.runpytest_inprocess("--course", "course.md", "-p", "no:cacheprovider", "-k", "4.2")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    "info, said",
    [
        ("section=1.1 stack=numpy", "missing ['device']"),
        ("section=1.1 stack=numpy device=gpu", "device='gpu'"),
        ("section=1.1 stack=numpy device=cpu colour=red", "unknown ['colour']"),
    ],
)
def test_bad_fence_info_is_one_usage_error(pytester, info, said):
    pytester.makefile(".md", course=f"```python {{{info}}}\nx = 1\n```\n")
    result = pytester.runpytest_inprocess("--course", "course.md", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said in result.stderr.str() and "INTERNALERROR" not in result.stderr.str() + result.stdout.str()


def test_a_course_path_that_is_not_markdown_is_a_usage_error(pytester):
    result = pytester.runpytest_inprocess("--course", "nowhere", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--course nowhere: not a Markdown file" in result.stderr.str()


def test_drift_names_what_changed_and_fails_on_a_regression(pytester):
    pytester.makefile(".md", course=DOC)
    old = {
        "environment": {"versions": {"numpy": "1.0"}},
        "claims": [],
        "listings": [{"id": "1.2-numpy", "outcome": "passed"}, {"id": "1.4-numpy", "outcome": "failed"}],
    }
    pytester.makefile(".json", old=json.dumps(old))
    result = pytester.runpytest_inprocess(
        "--course", "course.md", "-p", "no:cacheprovider", "--baseline", "old.json", "--curriculum-report", "new.json"
    )
    result.stdout.fnmatch_lines(
        [
            "*drift since the baseline*",
            "*versions: numpy 1.0 -> *",
            "*listing 1.2-numpy: passed -> failed*",
            "*FAIL --baseline: listing 1.2-numpy passed, now failed*",
        ]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert json.loads((pytester.path / "new.json").read_text())["drift"]["regressions"]


@pytest.mark.parametrize("mine", [True, False])
def test_a_baseline_folder_compares_with_the_report_of_this_machines_gpus(pytester, mine):
    """Issue 75: ``--baseline FOLDER`` (the GPU job's ``baselines/``) holds each GPU to its own record: the
    report whose accelerator is this machine's, another GPU's never; none there runs without a baseline,
    said in one line that names what the folder holds."""
    from stackcheck.stacks.fingerprint import accelerator

    pytester.makefile(".md", course=DOC)
    here = accelerator()
    listings = [{"id": "1.2-numpy", "outcome": "passed"}]
    other = {"environment": {"accelerator": here + " (another card)"}, "claims": [], "listings": listings}
    (pytester.path / "runs").mkdir()
    (pytester.path / "runs" / "other.json").write_text(json.dumps(other))
    if mine:
        own = {"environment": {"accelerator": here, "versions": {"numpy": "0.1"}}, "claims": [], "listings": []}
        (pytester.path / "runs" / "mine.json").write_text(json.dumps(own))
    result = pytester.runpytest_inprocess(
        "--course", "course.md", "-p", "no:cacheprovider", "--baseline", "runs", "--curriculum-report", "new.json"
    )
    drift = json.loads((pytester.path / "new.json").read_text()).get("drift")
    if mine:
        assert [v["was"] for v in drift["versions"] if v["package"] == "numpy"] == ["0.1"], drift
    else:
        assert drift is None
        result.stdout.fnmatch_lines(
            [f"*--baseline: no baseline in runs was recorded on {here} (other.json: *): this run is its first*"]
        )
    assert not any(c["id"] == "1.2-numpy" for c in (drift or {}).get("listings", [])), "another GPU's record"


def test_a_baseline_that_is_not_a_report_is_a_usage_error(pytester):
    pytester.makefile(".json", old="[1, 2]")
    result = pytester.runpytest_inprocess("--baseline", "old.json", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert re.search(r"--baseline old.json: not a curriculum report", result.stderr.str())


def test_drift_compares_only_the_claims_whose_tests_ran():
    from stackcheck.claims import drift
    from stackcheck.claims.results import Report

    def report(*claims: dict) -> Report:
        return Report.from_json(
            {"environment": {}, "claims": [{"section": "x", "title": "x", "area": "x", **c} for c in claims]}
        )

    old = report({"id": "S2.2-hand", "status": "verified"}, {"id": "S6.3-shape", "status": "verified"})
    new = report(
        {"id": "S2.2-hand", "status": "untested", "tests": []},  # not selected this time (-k)
        {"id": "S6.3-shape", "status": "failed", "tests": [{"nodeid": "t", "outcome": "failed", "device": "cpu"}]},
    )
    found = drift.compare(old, new)
    assert [c["id"] for c in found["claims"]] == ["S6.3-shape"]
    assert found["regressions"] == ["claim S6.3-shape was verified, now failed"]


def test_a_mojo_listing_that_does_not_build_names_its_document_line(pytester):
    """The compiler's line in the listing's file is a line of the document: the erratum names it."""
    if tools.mojo_executable() is None:
        pytest.skip("no mojo command to build the listing with")
    source = "fn ok():\n    pass\n\nthis is not mojo\n"
    pytester.makefile(
        ".md", course=f"```mojo {{section=3.1 stack=mojo device=cpu file=kernels/__init__.mojo}}\n{source}```\n"
    )
    result = pytester.runpytest_inprocess(
        "--course", "course.md", "-p", "no:cacheprovider", "--curriculum-report=r.json"
    )
    result.assert_outcomes(failed=1)
    erratum = json.loads((pytester.path / "r.json").read_text())["errata"][0]
    assert erratum["failing_line"] == 5, erratum  # the fence is line 1, "this is not mojo" line 5
    result.stdout.fnmatch_lines(["*course.md:5: listing §3.1 fails on*", "*this is not mojo*"])
