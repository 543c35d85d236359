"""How pytest was invoked, as the rerun of one test must repeat it (course-wide: every "Rerun:" line).

A test's verdict depends on more than its id: the implementation under test (``--impl``,
``--homework``, ``--strict-impl``), ``--require``, ``-m``, plugins (``-p``), ini overrides, seeds,
``--course``, the gates that turn a skip into a run. The rerun line repeats every option the run was
given except those that only select other tests, shape the output, run in parallel or write reports
(``LEFT_OUT``, by argparse dest): an option the suite or a plugin adds later is repeated by default.
"""

from __future__ import annotations

import shlex

import pytest

LEFT_OUT = frozenset(
    {
        # selection: the node id is the selection
        "keyword",
        "deselect",
        "ignore",
        "ignore_glob",
        "pyargs",
        "lf",
        "last_failed_no_failures",
        "failedfirst",
        "newfirst",
        "stepwise",
        "stepwise_skip",
        "stepwise_reset",
        "maxfail",
        "collectonly",
        # output, reports and parallel runs
        "verbose",
        "tbstyle",
        "reportchars",
        "showlocals",
        "capture",
        "color",
        "code_highlight",
        "durations",
        "durations_min",
        "xmlpath",
        "junitprefix",
        "no_header",
        "no_summary",
        "fulltrace",
        "numprocesses",
        "maxprocesses",
        "dist",
        "tx",
        "cacheclear",
        "basetemp",  # where tmp_path lives (watch's is a private folder gone when it ends), never a verdict
        "curriculum_report",
        "claims",
        "require_claims",
        "baseline",
        "gpu_table",
    }
)


def _actions(config: pytest.Config) -> dict | None:
    """argparse's actions by option string (pytest's parser, built for this run), None where unknown."""
    parser = getattr(config._parser, "optparser", None)
    return getattr(parser, "_option_string_actions", None)


def repeated_options(config: pytest.Config) -> list[str]:
    """The invocation's options a rerun repeats, as they were typed (positional arguments left out)."""
    args = [str(a) for a in config.invocation_params.args]
    actions = _actions(config)
    if actions is None:  # a pytest whose parser is not argparse's: repeat every option word as typed
        return [a for a in args if a.startswith("-") and a != "-"]
    kept: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            break
        if not word.startswith("-") or word == "-":
            continue  # a test path
        name = word.split("=", 1)[0] if word.startswith("--") else word[:2]
        action = actions.get(name)
        taken = [word]
        attached = "=" in word if word.startswith("--") else len(word) > 2
        if action is not None and action.nargs != 0 and not attached:
            if i < len(args) and (action.nargs is None or not args[i].startswith("-")):
                taken.append(args[i])
                i += 1
            elif action.nargs == "?" and action.const is not None:  # bare: the test id that follows is no value
                taken = [f"{name}={action.const}"]
        if action is None or action.dest not in LEFT_OUT:
            kept += taken
    return kept


def rerun_prefix(config: pytest.Config) -> str:
    """``python -m pytest`` and the options that make a rerun judge what this run judged."""
    return " ".join(["python -m pytest", *map(shlex.quote, repeated_options(config))])
