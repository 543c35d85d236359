"""Homework mode (stackcheck.homework, .homework_hooks, .scoring, .checkpoints, .cli): the starter, strict
grading, one-line feedback for bad homework, the score, and batch grading."""

import ast
import csv
import dataclasses
import inspect
import json
import re
import shutil
import subprocess
import sys
import time
import tomllib
import types
from pathlib import Path

import numpy as np
import pytest

from stackcheck import cli
from stackcheck.claims.results import Report
from stackcheck.grading import grader
from stackcheck.homework import assignment, checkpoints, gradescope, scoring
from stackcheck.impl import contract, reference
from stackcheck.impl.loader import Impl
from stackcheck.paths import data

pytestmark = pytest.mark.meta
ROOT = Path(__file__).resolve().parent.parent


def right_answers() -> dict:
    """Every checkpoint answered right: the key's answers read from the key at run time, never written in a
    shipped file (a students' copy keeps this one, without the key)."""
    return checkpoints.expected_answers()


def solution(folder: Path, parts=("math",)) -> Path:
    """A homework folder whose functions are the course's solutions written out as the student's
    own (importing them would be borrowing), and the right answers."""
    folder.mkdir(parents=True, exist_ok=True)
    source = Path(reference.__file__).read_text() + f"\n\nASSIGNED = {tuple(parts)!r}\n"
    (folder / "homework.py").write_text(source)
    (folder / "answers.toml").write_text(checkpoints.answers_file(right_answers()))
    return folder


def test_the_starter_states_every_contract_and_answers_nothing(tmp_path):
    assert cli.main(["homework", "init", str(tmp_path / "hw"), "--part", "math", "--part", "runtime"]) == 0
    source = (tmp_path / "hw" / "homework.py").read_text()
    functions = {n.name: n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}
    assert set(functions) == assignment.assigned(["math", "runtime"])
    for name, node in functions.items():
        doc = ast.get_docstring(node)
        assert doc and doc.startswith("§") or doc.startswith("MC"), f"{name}'s stub must cite its course section"
        raised = node.body[-1]
        assert isinstance(raised, ast.Raise) and "NotImplementedError" in ast.unparse(raised), name
    assert "check_operands" in ast.get_docstring(functions["numpy_steps"]), "the validation rule is in the contract"
    answers = tomllib.loads((tmp_path / "hw" / "answers.toml").read_text())
    assert sorted(answers) == ["Q1", "Q2", "Q3", "Q4", "Q5"] and all(
        v == "" for q in answers.values() for v in q.values()
    )
    assert "--homework=" in (tmp_path / "hw" / "README.md").read_text()
    assert cli.main(["homework", "init", str(tmp_path / "hw")]) == 2, "an existing homework is not overwritten"


def test_assigned_names_never_fall_back_and_fallbacks_call_the_students_functions():
    student = types.ModuleType("student")
    student.__dict__.update(numpy_steps=lambda x, w, b: (x @ w, x @ w + b, np.abs(x @ w + b)))  # ReLU as abs
    student.numpy_steps.__module__ = "student"
    x, w, b = np.array([[-1.0, 0.0]]), np.eye(2), np.array([0.0, -1.0])
    loose = Impl(student)
    assert loose.numpy_forward(x, w, b).tolist() == [[1.0, 1.0]], "the reference numpy_forward runs their numpy_steps"
    strict = Impl(student, assigned=assignment.assigned(["math"]))
    with pytest.raises(contract.NotAttempted, match="§2.2: numpy_forward is not written"):
        strict.numpy_forward(x, w, b)
    rebound = strict.timed_call.__wrapped__  # under the mark of the implementation's clock
    assert rebound is not reference.timed_call and inspect.unwrap(rebound) is reference.timed_call, (
        "an unassigned name is the reference's, rebound to call the student's functions"
    )


def test_a_return_of_the_wrong_kind_names_the_function_and_what_it_must_return():
    student = types.ModuleType("student")
    student.numpy_steps = lambda x, w, b: None
    student.numpy_steps.__module__ = "student"
    with pytest.raises(
        contract.ReturnError,
        match=r"numpy_steps returned None; it must return \(A, Z, Y\): "
        r"a tuple of 3 numpy.ndarray \(course §2.2\)",
    ):
        Impl(student).numpy_steps(np.ones((1, 1)), np.ones((1, 1)), np.ones(1))


@pytest.mark.parametrize(
    "source, options, expected",
    [
        (
            "def numpy_step(x, w, b):\n    pass\n",
            ["--strict-impl"],
            "*not surface name(s): numpy_step (did you mean numpy_steps?)*",
        ),
        ("X = 1\n", ["--strict-impl"], "*defines none of the names its homework assigns: *numpy_steps*"),
        (
            "def numpy_steps(x, w, b):\n    pass\ndef relu(z):\n    pass\n",
            ["--strict-impl"],
            "*not surface name(s): relu; name helpers with a leading _ (e.g. _relu)",
        ),
        ("X = 1\n", [], "*defines none of the surface names: *"),
        (
            "ASSIGNED = ('maths',)\ndef numpy_steps(x, w, b):\n    pass\n",
            ["--strict-impl"],
            "*unknown part(s) ?'maths'?*",
        ),
    ],
)
def test_a_file_that_grades_nothing_is_one_clear_error(pytester, suite_file, source, options, expected):
    (pytester.path / "homework.py").write_text(source)
    result = pytester.runpytest_inprocess(
        suite_file("tests_math/test_s2_2_hand.py"), "--impl", "homework.py", *options, "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {expected}"])


BAD = """
import numpy as np
ASSIGNED = ("math",)

def numpy_steps(x, w, b):
    {body}
"""


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "raise NotImplementedError('§2.2: write numpy_steps')",
            "not attempted: numpy_steps (course §2.2) still raises NotImplementedError",
        ),
        (
            "return None",
            "numpy_steps returned None; it must return (A, Z, Y): a tuple of 3 numpy.ndarray (course §2.2)*",
        ),
        ("while True:\n        pass", "timed out after 2 s: numpy_steps (homework.py:*) did not return*"),
        ("print('x\\n' * 5000)\n    return x @ w, x @ w + b, np.abs(x @ w + b)", "*"),
    ],
)
def test_bad_homework_gets_one_line_of_feedback(pytester, suite_file, body, expected):
    folder = pytester.path / "hw"
    folder.mkdir()
    (folder / "homework.py").write_text(BAD.format(body=body))
    result = pytester.runpytest_inprocess(
        suite_file("tests_math/test_s2_2_hand.py"),
        f"--homework={folder}",
        "-k",
        "numpy-cpu",
        "-p",
        "no:cacheprovider",
        "--timeout=2",
    )
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output
    block = output[output.index("_ test_hand_example") : output.index("short test summary")]
    if "print" in body:
        captured = block[block.index("Captured stdout call") :]
        assert "lines of output cut" in captured and captured.count("\nx") <= 40, "captured output is capped"
        assert "Y of the §2.2 example" in block
    else:
        assert block.splitlines()[1].strip() != "", block
        result.stdout.fnmatch_lines([f"*{expected}"])
        assert "본문: 수학적으로 기대되는 값은" in block, "the failure quotes the course's own words"
        assert "def test_hand_example" not in block, "the feedback replaces the test's traceback"


def test_homework_runs_only_its_parts_and_the_stacks_it_touches(tmp_path):
    """A fresh interpreter: which stacks a homework run imports is what is judged, and this process holds them
    all."""
    hw = solution(tmp_path / "hw")
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", f"--homework={hw}", "--co", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout.splitlines()
    ids = [line for line in collected if "::" in line]
    assert ids and all(i.startswith("tests_math/") for i in ids), ids[:5]
    assert not [i for i in ids if any(f"{s}-" in i or f"[{s}]" in i for s in ("max", "mojo", "triton"))], (
        "MAX, Mojo and Triton grade nothing of part math: their tests are deselected"
    )


def test_fresh_stubs_score_zero_and_the_solutions_score_100_percent(tmp_path, bubblewrap):
    """Through `stackcheck grade`, each submission in its own sandboxed process, an instructor's hidden
    test included; the wall time of one part-math grading is printed (issue: at most 60 s on 2 cores)."""
    submissions = tmp_path / "submissions"
    solution(submissions / "ana")
    cli.main(["homework", "init", str(submissions / "ben"), "--part", "math"])
    hidden = tmp_path / "hidden" / "test_instructor.py"
    hidden.parent.mkdir()
    hidden.write_text(
        "import numpy as np\nimport pytest\n\n@pytest.mark.claim('S2.2-hand')\n"
        "def test_instructor_only(impl):\n"
        "    y = impl.numpy_forward(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32),"
        " np.full(2, -4, np.float32))\n"
        "    assert y.tolist() == [[0, 0], [0, 0]]\n"
    )
    start = time.perf_counter()
    grades = ["grade", str(submissions), "--out", str(tmp_path / "grades.csv"), "--tests", str(hidden), "--jobs", "2"]
    assert cli.main([*grades, "--visibility", "after_due_date"]) == 0
    print(f"graded 2 part-math submissions in {time.perf_counter() - start:.1f} s")
    rows = {r["student"]: r for r in csv.DictReader(open(tmp_path / "grades.csv"))}
    assert float(rows["ana"]["percent"]) == 100.0 and float(rows["ben"]["percent"]) == 0.0, rows
    assert "S2.2-hand 2/2" in rows["ana"]["claims"].split("; "), rows["ana"]["claims"]
    assert set(rows["ana"]) == set(grader.COLUMNS) | {c for c in rows["ana"] if c.startswith("Q")}, "fixed columns"
    feedback = (tmp_path / "grades-feedback" / "ben.md").read_text()
    assert "not attempted yet" in feedback and "checkpoints passport: 0/5" in feedback
    report = (tmp_path / "grades-feedback" / "ana.json").read_text()
    kept = (tmp_path / "grades-feedback" / "ana.instructor-only.json").read_text()
    assert "test_instructor_only" in kept, "the instructor's hidden test ran and counted"
    assert "test_instructor_only" not in report and "instructor test (hidden)" in report, "the student's copy hides it"
    results = json.loads((tmp_path / "grades-feedback" / "ana.results.json").read_text())
    assert results["score"] == float(rows["ana"]["earned"]) and results["max_score"] == float(rows["ana"]["points"])
    assert all({"name", "score", "max_score", "visibility", "output"} <= set(t) for t in results["tests"])
    hidden_entries = [t for t in results["tests"] if "instructor test" in t["name"]]
    assert hidden_entries and all(t["visibility"] == "after_due_date" for t in hidden_entries)
    assert "test_instructor_only" not in json.dumps(results), "the student's Gradescope file names no hidden test"
    assert "graded (sandbox bubblewrap; network isolated" in rows["ana"]["status"], rows["ana"]["status"]
    assert "(key " in rows["ana"]["Q3 mb_after_fusion"]


def test_score_gives_partial_credit_and_keeps_what_could_not_run_apart():
    def test(outcome, device="cpu", **extra):
        return {
            "nodeid": f"tests_math/t.py::t{id(extra)}{outcome}{device}",
            "outcome": outcome,
            "device": device,
            "student": ["numpy_steps"],
            **extra,
        }

    report = {
        "claims": [
            {
                "id": "S2.2-hand",
                "section": "2.2",
                "title": "t",
                "tests": [test("passed"), test("failed", message="wrong")],
            },
            {
                "id": "S2.1-shapes",
                "section": "2.1",
                "title": "t",
                "tests": [test("failed", not_attempted=["numpy_steps"])],
            },
            {
                "id": "MC10",
                "section": "14.1",
                "title": "t",
                "tests": [{"nodeid": "g", "outcome": "skipped", "device": "cuda", "reason": "no CUDA"}],
            },
        ]
    }
    result = scoring.score(report_of(report["claims"]), [])
    by_id = {c.id: c for c in result.claims}
    assert by_id["S2.2-hand"].earned == 1.0 and by_id["S2.2-hand"].feedback == "wrong"
    assert by_id["S2.1-shapes"].status == "not attempted" and by_id["S2.1-shapes"].earned == 0
    assert [u.id for u in result.ungradable] == ["MC10"] and result.skipped_here == {"cuda": 1}
    assert result.percent == round(100 * 1.0 / 5, 1), "MC10 could not run: it is not in the denominator"


def test_an_instructors_hidden_test_is_never_quoted_where_the_student_sees_it():
    """Issue 38: a hidden test's failure stays in its own entry (with the instructor's visibility),
    carrying its share of the claim's points; no entry and no feedback quotes it (issue 74: its
    message names its inputs); graded feedback reruns from the student's own folder."""
    suite = {"nodeid": "tests_math/test_s2_2_hand.py::test_a", "outcome": "failed", "message": "wrong bias"}
    hidden = {"nodeid": "../hidden/test_x.py::test_secret", "outcome": "failed", "message": "hidden case gave -1"}
    passed = {"nodeid": "tests_math/test_s2_2_hand.py::test_b", "outcome": "passed"}
    tests = [{**t, "device": "cpu", "student": ["numpy_steps"]} for t in (hidden, suite, passed)]
    report = report_of([{"id": "S2.2-hand", "section": "2.2", "title": "t", "tests": tests}])
    report = report.with_(homework=scoring.score(report, []).with_(graded=True, rerun=scoring.GRADED_RERUN))
    item = report.homework.claims[0]
    assert item.feedback == "wrong bias" and item.first_failure == suite["nodeid"]
    report, withheld = scoring.withhold_instructor_tests(report)
    assert [t["nodeid"] for t in withheld] == [hidden["nodeid"]] and "secret" not in report.dumps()
    entries = gradescope.results(report, withheld, "after_due_date")["tests"]
    assert sum(e["max_score"] for e in entries) == pytest.approx(item.points)
    assert sum(e["score"] for e in entries) == pytest.approx(item.earned, abs=0.01)  # earned has 2 decimals
    visible = [e for e in entries if e["visibility"] == "visible"]
    assert visible and not any("secret" in e["output"] or "hidden case" in e["output"] for e in visible), visible
    assert not any("hidden case" in e["output"] for e in entries), "its message (its inputs) is the instructor's alone"
    assert not any("test_secret" in json.dumps(e) or "test_x" in json.dumps(e) for e in entries), "nor its name"
    assert [e["visibility"] for e in entries if "instructor test" in e["name"]] == ["after_due_date"]
    text = "\n".join(scoring.lines(report.homework))
    assert "secret" not in text and "hidden case" not in text and "rerun: python -m pytest --homework=. " in text
    only_hidden = report_of([{"id": "S2.2-hand", "section": "2.2", "title": "t", "tests": [tests[0], tests[2]]}])
    alone = scoring.score(only_hidden, []).claims[0]
    assert alone.feedback == scoring.HIDDEN_FAILED and alone.first_failure is None


def test_checkpoints_are_graded_against_keys_analytics_and_measurements():
    right = checkpoints.grade(right_answers(), reference.timed_call)
    assert all(q.passed for q in right), [q.feedback for q in right if not q.passed]
    wrong = {**right_answers(), "Q3": {"mb_after_fusion": 64}}
    q3 = next(q for q in checkpoints.grade(wrong) if q.id == "Q3")
    assert not q3.passed and "not right" in q3.feedback[0] and "0.0" not in q3.feedback[0], "no key shown"
    unsynced = next(
        q for q in checkpoints.grade(right_answers(), lambda fn, sync=None: reference.timed_call(fn)) if q.id == "Q2"
    )
    said = " ".join(unsynced.feedback)
    assert not unsynced.passed and "NO  fixed_timer_agrees" in said and "never waited" in said, said
    measured = next(q for q in right if q.id == "Q2").fields["fixed_timer_agrees"][1]
    synced = [float(ms) for ms in re.findall(r"vs (\d+\.\d) ms", measured)]
    assert len(synced) == len(checkpoints.ASYNC_WORK_S), measured
    assert all(ms >= 1e3 * seconds for ms, seconds in zip(synced, checkpoints.ASYNC_WORK_S)), measured
    assert tomllib.loads(checkpoints.template())["Q1"] == {"always_stored": "", "eager_intermediates": ""}


def test_a_timer_that_never_waits_fails_checkpoint_2_whatever_numbers_it_returns():
    """A determined student's find: a timer that never syncs and plays back the work's lengths, which
    are public (checkpoints.ASYNC_WORK_S), agreed with the synced clock; now a timer must return only
    once the work it timed has finished, so no number it knows in advance helps it."""
    lengths = iter(checkpoints.ASYNC_WORK_S)

    def playback(fn, sync=None):
        fn()
        return next(lengths)

    agrees, said = checkpoints.fixed_timer_agrees(playback)
    assert not agrees and "never waited" in said, said
    assert checkpoints.fixed_timer_agrees(reference.timed_call)[0]


@pytest.mark.parametrize(
    "qid, field, answer",
    [
        ("Q2", "fix", "Synchronize before stopping the clock."),
        ("Q2", "fix", "시계를 멈추기 전에 동기화한다"),
        ("Q2", "measured", "The submission of the work (launch) - not the work!"),
        ("Q3", "mb_after_fusion", "0 MB"),
        ("Q3", "mb_after_fusion", "0"),
        ("Q3", "mb_after_fusion", 0.0),
        ("Q1", "always_stored", "false"),
        ("Q1", "always_stored", "아니오"),
        ("Q1", "eager_intermediates", "2"),
        ("Q4", "PJRT", "디바이스 런타임"),
    ],
)
def test_a_right_answer_in_any_stated_form_is_accepted(qid, field, answer):
    answers = right_answers()
    answers[qid][field] = answer
    graded = next(q for q in checkpoints.grade(answers) if q.id == qid)
    assert graded.passed, graded.feedback


@pytest.mark.parametrize(
    "qid, field, answer",
    [
        ("Q1", "always_stored", "true"),
        ("Q1", "always_stored", 0),
        ("Q3", "mb_after_fusion", "64 MB"),
        ("Q4", "PJRT", "컴파일러"),
        ("Q2", "fix", "synchronize"),
    ],
)
def test_a_wrong_answer_is_rejected_without_showing_the_key(qid, field, answer):
    answers = right_answers()
    answers[qid][field] = answer
    graded = next(q for q in checkpoints.grade(answers) if q.id == qid)
    assert not graded.passed
    key = str(checkpoints.expected_answers()[qid][field]).lower()
    said = [line.lower().replace(f"you wrote {answer!r}".lower(), "") for line in graded.feedback]
    assert all("expected" not in line and key not in line for line in said), said


def test_a_broken_answers_file_is_named_in_the_feedback(tmp_path):
    (tmp_path / "answers.toml").write_text("[Q1]\nalways_stored = \n")
    answers, problem = checkpoints.load_answers(tmp_path / "answers.toml")
    assert answers == {} and "not valid TOML" in problem
    result = scoring.score(report_of([]), checkpoints.grade(answers))
    result = result.with_(answers_problem=problem)
    assert any("not valid TOML" in line for line in scoring.lines(result)), scoring.lines(result)


def test_stripped_reference_keeps_the_contracts_and_drops_the_solutions():
    text = assignment.stripped_reference(["math"])
    tree = {n.name: n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)}
    for name in assignment.assigned(["math"]) | {"_torch_plain", "_jax_steps_traced", "_jax_loss"}:
        body = [n for n in tree[name].body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
        assert len(body) == 1 and isinstance(body[0], ast.Raise), f"{name} keeps a solution"
    assert ast.get_docstring(tree["numpy_steps"]) == ast.get_docstring(
        {n.name: n for n in ast.parse(Path(reference.__file__).read_text()).body if isinstance(n, ast.FunctionDef)}[
            "numpy_steps"
        ]
    ), "the contract stays"
    assert "block_until_ready" in ast.unparse(tree["jax_sync"]), "unassigned parts keep their reference"


def test_a_checkout_stripped_for_students_has_no_key_and_its_runs_say_answered(tmp_path, monkeypatch):
    """Issue 38: `homework strip --checkout` stubs the part's solutions and removes the key and tests_meta; a run
    without the key says "answered" for the key's fields and earns them nothing; the grader's
    settle, with the key, judges them from the answers as handed in and keeps the run's timer check."""
    checkout = tmp_path / "student-copy"
    (checkout / "stackcheck" / "impl").mkdir(parents=True)
    (checkout / "stackcheck" / "impl" / "reference.py").write_text(Path(reference.__file__).read_text())
    (checkout / "fixtures").mkdir()
    (checkout / "fixtures" / "checkpoint_key.toml").write_text("[Q1]\nalways_stored = false\n")
    shutil.copytree(ROOT / "tests_meta", checkout / "tests_meta", ignore=shutil.ignore_patterns("__pycache__"))
    assert cli.main(["homework", "strip", "--part", "math", "--checkout", str(checkout)]) == 0
    assert not (checkout / "fixtures" / "checkpoint_key.toml").exists()
    assert not (checkout / "tests_meta").exists(), "the correct variants are every part's solution"
    assert "raise NotImplementedError" in (checkout / "stackcheck" / "impl" / "reference.py").read_text()
    assert cli.main(["homework", "strip", "--part", "math", "--checkout", str(tmp_path)]) == 2, "not a checkout"
    answers = right_answers()
    expected = checkpoints.expected_answers()
    monkeypatch.setattr(checkpoints, "key", dict)
    unkeyed = {q.id: q for q in checkpoints.grade(answers)}
    pending = [name for name, (ok, _) in unkeyed["Q4"].fields.items() if ok is None]
    assert pending == ["Dynamo", "StableHLO", "Inductor", "PJRT"] and unkeyed["Q4"].earned == 0
    assert all("answered; your instructor's copy grades it" in line for line in unkeyed["Q4"].feedback)
    assert unkeyed["Q3"].passed, "a field judged without the key is judged here"
    timer = {"fixed_timer_agrees": [False, "2.5x"]}  # measured in the run, for Q2 alone
    timed = [dataclasses.replace(q, fields={**q.fields, **(timer if q.id == "Q2" else {})}) for q in unkeyed.values()]
    settled = {q.id: q for q in checkpoints.settle(timed, answers, expected)}
    assert settled["Q4"].passed and all(ok is True for ok, _ in settled["Q4"].fields.values())
    assert not settled["Q2"].passed and settled["Q2"].fields["fixed_timer_agrees"] == [False, "2.5x"]


def test_a_failure_points_first_to_what_its_text_names_then_to_its_own_claims():
    from stackcheck.claims import catalogue

    broadcast = "ValueError: operands could not be broadcast together with shapes (2,4) (4,1)"
    assert [cid for cid, _ in catalogue.revisit(broadcast, ["S2.1-shapes"])] == ["S2.3-broadcast", "S2.1-shapes"]
    assert catalogue.revisit("159 canary cells around the output changed", ["MC10"])[0][0] == "S11.2-mask"
    assert [cid for cid, _ in catalogue.revisit(broadcast, ["S2.3-broadcast"])] == ["S2.3-broadcast"], "named once"
    assert catalogue.revisit("AssertionError: 3 != 4", ["S2.1-shapes"])[0][0] == "S2.1-shapes", "no pattern: its own"


def test_a_stack_fact_earns_no_points_even_where_its_test_ran_a_students_function():
    """Issue 24: a fact about the stacks (kind = "stack-fact") is not the student's work."""
    test = {"nodeid": "t", "outcome": "passed", "device": "cpu", "student": ["torch_forward"]}
    claims = [
        {"id": cid, "section": "x", "title": "x", "tests": [dict(test, nodeid=cid)]}
        for cid in ("S2.3-split", "S2.2-hand")
    ]
    result = scoring.score(report_of(claims), [])
    assert [c.id for c in result.claims] == ["S2.2-hand"]
    assert result.points == catalogue_entry("S2.2-hand")["points"]


def test_the_claims_table_shows_the_stack_facts_last_in_an_area_of_their_own():
    from stackcheck.claims.catalogue import build_report
    from stackcheck.report.render import terminal_table

    lines = terminal_table(build_report([], {}), every=True)[:-1]
    areas = [line.split()[0] for line in lines]
    assert "stacks" in areas and set(areas[areas.index("stacks") :]) == {"stacks"}, "the stack facts come last"
    assert [line.split()[3] for line in lines if "S2.3-split" in line] == ["S2.3-split"]
    assert next(line for line in lines if " S2.3-split " in line).startswith("   stacks  . untested ")
    assert next(line for line in lines if " S2.2-hand " in line).startswith("     math  . untested ")


def catalogue_entry(cid: str) -> dict:
    from stackcheck.claims import catalogue

    return catalogue.catalogue()[cid]


def report_of(claims: list[dict]) -> Report:
    """A curriculum report of ``claims`` (JSON as a run writes it, less what scoring does not read)."""
    filled = [
        {"area": "x", "status": "untested", **c, "tests": [{"device": "cpu", **t} for t in c["tests"]]} for c in claims
    ]
    return Report.from_json({"environment": {}, "claims": filled})


def test_no_file_a_students_copy_keeps_holds_the_keys_answers():
    """What `homework strip` removes is the key alone, so no other file of the checkout may hold its answers:
    every field of the key, each written as answers.toml or Python writes it (``Dynamo = "capture"``), found
    together in one file is the key again. (This file held them as its right answers until they were read
    from the key at run time.)"""
    key = checkpoints.key()
    if not key:
        pytest.skip("this copy has no key (a students' copy): nothing of it to find")
    pairs = [(name, value) for fields in key.values() for name, value in fields.items()]
    written = [
        re.compile(rf"\b{re.escape(name)}\b\s*[=:]\s*['\"]?{re.escape(str(value).lower())}", re.I)
        for name, value in pairs
    ]
    kept = data.checkout_files(ROOT)
    if kept is None:
        pytest.skip("not a git checkout: no list of the files a copy keeps")
    keyfile = ROOT.joinpath(*checkpoints.KEY_FILE)
    holding = {}
    for path in kept:
        if path == keyfile:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found = sum(bool(w.search(text)) for w in written)
        if found == len(written):
            holding[str(path.relative_to(ROOT))] = found
    assert not holding, f"files that hold every answer of the key ({len(pairs)} fields): {sorted(holding)}"
