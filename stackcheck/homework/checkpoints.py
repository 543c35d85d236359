"""The course's checkpoints Q1-Q5 as homework answers (fixtures/checkpoints.toml): the answers.toml
a student fills in, and its grading against what this machine measures, where it can."""

from __future__ import annotations

import functools
import json
import re
import time
import tomllib
import unicodedata

from stackcheck.claims.results import CheckpointScore
from stackcheck.paths import data
from stackcheck.stacks import available

COURSE_TENSOR_MB = 16  # checkpoint 3: A, Z and Y are 16 MB each
# checkpoint 2: the asynchronous work the student's timer must see, one length a trial: no constant
# answer agrees with all three within 2x
ASYNC_WORK_S = (0.02, 0.1, 0.05)


@functools.cache
def questions() -> list[dict]:
    with open(data.path("fixtures", "checkpoints.toml"), "rb") as f:
        return tomllib.load(f)["checkpoint"]


def template() -> str:
    """answers.toml for the student: each question in Korean and English, each field's format."""
    lines = [
        "# Week 02 checkpoints Q1-Q5. Fill in each answer; `pytest --homework=DIR` grades them.",
        "# How an answer is read (case, spaces and punctuation never matter):",
        '#   true/false: true or false, bare or quoted; "yes"/"no" and "예"/"아니오" too',
        '#   a number: bare or quoted, with or without its unit: 0, "0", "0 MB"',
        "#   a choice: one of the listed choices, in English or in Korean, quoted",
        "",
    ]
    for q in questions():
        lines += [
            f"# ---- {q['id']} (course checkpoint, {q['section']}) ----",
            f"# {q['ko']}",
            f"# {q['en']}",
            f"[{q['id']}]",
        ]
        for field in q["field"]:
            if field.get("optional"):
                lines.append(f"# {field['name']}: {field['format']}")
                continue
            lines.append(f"# {field['name']}: {field['format']}")
            for choice, ko in zip(field.get("choices", []), field.get("choices_ko", field.get("choices", []))):
                lines.append(f"#   - {json.dumps(choice, ensure_ascii=False)} / {json.dumps(ko, ensure_ascii=False)}")
            lines.append(f'{field["name"]} = ""')
        lines.append("")
    return "\n".join(lines)


def intermediate_traffic_mb(tensor_mb: float, fused: bool) -> float:
    """Checkpoint 3, analytically: eager writes A and Z once and reads each back once; epilogue
    fusion keeps both in registers, so they cause no HBM traffic."""
    return 0.0 if fused else 4 * tensor_mb


def eager_intermediates() -> tuple[int, str]:
    """Checkpoint 1, measured: the tensors torch eager allocates for ReLU(X @ W + b), besides Y."""
    if available.stack_missing("torch"):
        return 2, "analytic (torch is not installed): A and Z"
    import torch

    from stackcheck.toolchains.inductor import eager_ops

    _, ops = eager_ops(lambda x, w, b: torch.relu(x @ w + b), torch.ones(4, 3), torch.ones(3, 2), torch.ones(2))
    return len(ops) - 1, f"measured with torch {torch.__version__} eager: ops {[o['op'] for o in ops]}"


def fixed_timer_agrees(timed_call) -> tuple[bool, str]:
    """Checkpoint 2, measured: the student's timed_call, given a sync, must agree (within 2x) with
    the suite's own synced clock on work that runs asynchronously, as a GPU's does: a thread that
    waits, submitted at once, its ticket (an int, which crosses to a graded run's worker and back)
    synced by waiting for it. Each trial's work is another length; each timed call must submit it
    once and return only once it has finished (a timer that never waits fails, whatever number it
    returns: the lengths are public). No framework starts, so this also runs in an xdist
    controller. A failure names the error's type, never its message: the student's code has seen
    the hidden tests' inputs by now."""
    from concurrent.futures import ThreadPoolExecutor

    from stackcheck.evidence import timing

    futures = []

    def sync(ticket):
        futures[ticket].result()

    with ThreadPoolExecutor(max_workers=1) as pool:

        def submitting(seconds: float):
            def submit() -> int:
                futures.append(pool.submit(time.sleep, seconds))
                return len(futures) - 1

            return submit

        theirs, ours = [], []
        for seconds in ASYNC_WORK_S:
            before = len(futures)
            try:
                theirs.append(float(timed_call(submitting(seconds), sync)))
            except Exception as error:  # the student's code: a stub or any error is judged, never the run's crash
                # the suite's own "not written yet" is quoted; what the student's code said is not
                said = str(error).strip().splitlines()[0] if type(error).__name__ == "NotAttempted" else ""
                return False, f"your timed_call raised {type(error).__name__}: {said or 'your own run prints why'}"
            if len(futures) != before + 1:
                return False, f"your timed_call ran the work it times {len(futures) - before} times, not once"
            if not futures[before].done():  # a timer that returned a number while the work still ran
                return False, "your timed_call returned before the work it timed had finished: it never waited for it"
            for future in futures:  # what the student's timer left running ends before the suite's clock starts
                future.result()
            ours.append(timing.host_timer(submitting(seconds), sync)())
    ratios = [float(t / max(o, 1e-12)) for t, o in zip(theirs, ours)]
    shown = ", ".join(f"{t * 1e3:.1f} vs {o * 1e3:.1f} ms" for t, o in zip(theirs, ours))
    return all(0.5 <= r <= 2.0 for r in ratios), (
        f"your timed_call against the synced clock on asynchronous work: {shown} (each within 0.5-2x agrees)"
    )


KEY_FILE = ("fixtures", "checkpoint_key.toml")  # the "key" fields' answers: the instructor's alone
MARKS = {True: "ok ", False: "NO ", None: ".. "}  # a field's judgment in the feedback lines
UNKEYED = "answered; your instructor's copy grades it (this copy has no key)"


def key() -> dict[str, dict[str, object]]:
    """The answers to the "key" fields, or {} where this copy has none (a student's checkout after
    ``stackcheck homework strip --checkout``, or a graded run's sandbox, where the file reads empty)."""
    try:
        with open(data.path(*KEY_FILE), "rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def grade(answers: dict, timed_call=None, expected: dict | None = None) -> list[CheckpointScore]:
    """One entry per checkpoint: points earned, one feedback line per field, and each field's
    judgment in ``fields`` (True, False, or None: not judged here, for want of the key).
    ``expected``: each field's expected value (``expected_answers``), else found on this machine."""
    keys = key() if expected is None else {}
    graded = []
    for q in questions():
        given = answers.get(q["id"], {})
        fields = {}
        for field in q["field"]:
            name = field["name"]
            if name == "fixed_timer_agrees":
                if timed_call is not None:
                    fields[name] = fixed_timer_agrees(timed_call)
                continue
            value = given.get(name, "")
            if value == "" or value is None:
                fields[name] = (False, "not answered")
                continue
            # measured only for an answer (eager_intermediates starts torch's compiler stack)
            want = _expected(q, field, keys)[0] if expected is None else expected.get(q["id"], {}).get(name)
            if want is None:
                fields[name] = (None, f"you wrote {value!r}; {UNKEYED}")
            else:  # the expected value is the instructor's, never in the student's feedback
                ok = same(value, want, field)
                wrong = "" if ok else f"; not right: reread the course, {q['section']}"
                fields[name] = (ok, f"you wrote {value!r}{wrong}")
        attempted = any(given.get(f["name"], "") not in ("", None) for f in q["field"])
        graded.append(_entry(q, fields, attempted))
    return graded


def settle(graded: list[CheckpointScore], answers: dict, expected: dict) -> list[CheckpointScore]:
    """The grader's judgment, outside the sandbox: every field judged again from ``answers`` (the
    handed-in answers.toml) and ``expected`` (with the key), keeping what only the run could measure
    (the student's timer)."""
    again = {q.id: q for q in grade(answers, None, expected)}
    settled = []
    for question in questions():
        fields = {k: tuple(v) for k, v in again[question["id"]].fields.items()}
        ran = next(entry for entry in graded if entry.id == question["id"]).fields
        if "fixed_timer_agrees" in ran:
            fields["fixed_timer_agrees"] = tuple(ran["fixed_timer_agrees"])
        settled.append(_entry(question, fields, again[question["id"]].attempted))
    return settled


def _entry(q: dict, fields: dict[str, tuple[bool | None, str]], attempted: bool) -> CheckpointScore:
    right = sum(ok is True for ok, _ in fields.values())
    return CheckpointScore(
        id=q["id"],
        points=q["points"],
        earned=q["points"] * right / max(len(fields), 1),
        passed=right == len(fields),
        attempted=attempted,
        feedback=tuple(f"{MARKS[ok]} {name}: {how}" for name, (ok, how) in fields.items()),
        fields={name: [ok, how] for name, (ok, how) in fields.items()},
        ko=q["ko"],
        en=q["en"],
    )


def _expected(q: dict, field: dict, keys: dict):
    """(the expected value, how it was found); None as the value where this copy has no key."""
    if field["grade"] == "key":
        return keys.get(q["id"], {}).get(field["name"]), "the course's answer"
    if field["name"] == "eager_intermediates":
        return eager_intermediates()
    if field["name"] == "mb_after_fusion":
        return intermediate_traffic_mb(
            COURSE_TENSOR_MB, fused=True
        ), f"analytic: {intermediate_traffic_mb(COURSE_TENSOR_MB, fused=False):g} MB eager, none fused"
    raise KeyError(f"no grader for checkpoint field {field['name']!r}")


YES = {"true", "yes", "y", "o", "예", "네", "참", "그렇다", "맞다"}
NO = {"false", "no", "n", "x", "아니오", "아니요", "거짓", "아니다", "틀리다"}


ANSWER_CHARS = 200  # an answer compared as a number: what is longer is no number the key holds


def normal(text) -> str:
    """An answer as compared: Unicode-normalised, lower case, punctuation dropped, spaces single."""
    text = unicodedata.normalize("NFKC", str(text)).lower()
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


def same(given, expected, field: dict) -> bool:
    """Whether answer ``given`` is ``expected`` in the field's kind (bool, number with an optional
    unit, or a choice in English or Korean)."""
    if isinstance(expected, bool):
        if isinstance(given, bool):
            return given is expected
        return normal(given) in (YES if expected else NO)
    if isinstance(expected, (int, float)):
        if isinstance(given, bool):
            return False
        # the unit starts with a letter: a digit there would give the number's digits two places to go,
        # a match in quadratic time over a long answer (65 KB of digits: 71 s)
        found = re.fullmatch(r"\s*([-+]?\d+(?:\.\d+)?)\s*([^\W\d]\w*)?\s*", str(given)[:ANSWER_CHARS])
        if not found or (found.group(2) and normal(found.group(2)) != normal(field.get("unit", ""))):
            return False
        return abs(float(found.group(1)) - float(expected)) <= 1e-6 + 0.01 * abs(float(expected))
    choices = field.get("choices", [])
    if expected in choices and field.get("choices_ko"):
        return normal(given) in {normal(expected), normal(field["choices_ko"][choices.index(expected)])}
    return normal(given) == normal(expected)


def expected_answers() -> dict[str, dict[str, object]]:
    """Every answerable field's expected value on this machine (the key's where this copy has it)."""
    keys = key()
    return {
        q["id"]: {f["name"]: _expected(q, f, keys)[0] for f in q["field"] if f["name"] != "fixed_timer_agrees"}
        for q in questions()
    }


def answers_file(answers: dict[str, dict[str, object]]) -> str:
    """answers.toml holding ``answers`` ({question: {field: value}}), as a student fills it in."""
    lines = []
    for qid, fields in answers.items():
        lines += [f"[{qid}]", *(f"{name} = {json.dumps(value, ensure_ascii=False)}" for name, value in fields.items())]
    return "\n".join(lines) + "\n"


def load_answers(path) -> tuple[dict, str | None]:
    """answers.toml's tables, or {} and one line saying what is wrong with the file."""
    try:
        with open(path, "rb") as f:
            return tomllib.load(f), None
    except FileNotFoundError:
        return {}, f"{path}: no answers file (checkpoints count 0)"
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as error:
        return {}, f"{path}: not valid TOML: {error} (checkpoints count 0)"
    except OSError as error:
        return {}, f"{path}: unreadable: {error.strerror} (checkpoints count 0)"
