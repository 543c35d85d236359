"""Every command-line option and ini key of stackcheck, and when a run is a stackcheck run.

The package ``stackcheck`` is the pytest11 entry point (so ``-p no:stackcheck`` switches it off);
it registers these options in every pytest run in the environment, and nothing else: the plugin
proper (``stackcheck.plugin.hooks``) is registered only for a stackcheck run (``activates``). This module
imports nothing but the standard library and pytest, so a project that does not use stackcheck
pays nothing for it being installed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The suite's own test packages: naming one (a path in it, or --pyargs) makes a stackcheck run.
TEST_PACKAGES = (
    "tests_math",
    "tests_ir",
    "tests_runtime",
    "tests_kernels",
    "tests_hardware",
    "tests_course",
    "tests_plugin",
    "tests_meta",
)
# Options whose use makes a stackcheck run (dest names).
STACKCHECK_OPTIONS = (
    "require",
    "impl",
    "curriculum_report",
    "mojo_prebuilt",
    "require_claims",
    "homework",
    "strict_impl",
    "homework_part",
    "course",
    "baseline",
    "gpu_table",
    "max_compiles",
    "grading_trial",
)
# Options whose value is a path (--impl: a dotted name or a .py path). Given after a space, the value
# is one of pytest's test paths when it picks its root folder, before these options are known:
# write them with '=' (stackcheck.plugin.hooks refuses a run where that moved the root).
PATH_OPTIONS = (
    "--impl",
    "--curriculum-report",
    "--mojo-prebuilt",
    "--homework",
    "--homework-worker",
    "--homework-ungradable",
    "--homework-answers",
    "--course",
    "--baseline",
    "--gpu-table",
)
ENV_OPT_IN = "STACKCHECK"  # STACKCHECK=1 in the environment: a stackcheck run


# the plugin proper's modules, registered by stackcheck.plugin.hooks (its pytest_plugins)
PLUGIN_MODULES = (
    "stackcheck.plugin.hooks",
    "stackcheck.plugin.fixtures",
    "stackcheck.plugin.homework",
    "stackcheck.plugin.course",
    "stackcheck.plugin.baseline",
    "stackcheck.plugin.gpu_gates",
    "stackcheck.plugin.worker_end",
)


def add(parser: pytest.Parser) -> None:
    group = parser.getgroup("stackcheck", "stackcheck: the AI execution stack course as tests")
    group.addoption(
        "--require",
        action="append",
        default=[],
        metavar="DEVICE_OR_STACK",
        help="fail, instead of skip, what needs DEVICE_OR_STACK (a device, a stack or a tool such as ncu; "
        "a name it does not know is refused with the list) "
        "when it is missing; also fail the run when no test of a required device passed "
        "(repeatable)",
    )
    group.addoption(
        "--impl",
        default=None,
        metavar="MODULE",
        help="module (dotted name or .py path) whose functions replace the reference "
        "implementations in stackcheck.impl.reference; missing names fall back, and call the "
        "module's versions of the others (--strict-impl: no fallback, a score)",
    )
    group.addoption(
        "--curriculum-report",
        default=None,
        metavar="PATH",
        help="write the claim-by-claim report as JSON and Markdown (PATH may end in .json or .md; "
        "the other file goes beside it)",
    )
    group.addoption(
        "--mojo-prebuilt",
        default=None,
        metavar="DIR",
        help="run the Mojo GPU programs from DIR (made elsewhere by `python -m stackcheck.mojo_build "
        "DIR`, with their runtime libraries) when this machine has no Mojo toolchain",
    )
    group.addoption(
        "--require-claims", action="store_true", help="fail the run when any claim of the course is not verified"
    )
    group.addoption(
        "--claims",
        choices=("selected", "all"),
        default="selected",
        help="the claims the summary's table lists: those the run selected (default), or all of the course's (as -v)",
    )
    group.addoption(
        "--homework",
        default=None,
        metavar="DIR",
        help="grade the homework in DIR (homework.py and answers.toml, from `stackcheck homework "
        "init DIR`): only its parts run, nothing assigned falls back, a score closes the run",
    )
    group.addoption(
        "--strict-impl",
        action="store_true",
        help="with --impl FILE: homework mode for FILE (its ASSIGNED parts, else all)",
    )
    group.addoption(
        "--homework-part",
        action="append",
        default=[],
        metavar="PART",
        help="the part(s) to grade, overriding the file's ASSIGNED: math, ir, runtime, kernels or all "
        "(repeatable; an instructor's choice)",
    )
    group.addoption(
        "--homework-graded",
        action="store_true",
        help="stackcheck grade's own: the feedback is for the student to read in their own folder (rerun "
        "lines run from there)",
    )
    group.addoption(
        "--homework-ungradable",
        default=None,
        metavar="JSON",
        help="stackcheck grade's own, with --homework-graded: {test id: why} of the tests the course's own solution "
        "fails when graded without its code in the judge; they are skipped, counting neither way",
    )
    group.addoption(
        "--homework-answers",
        default=None,
        metavar="TOML",
        help="stackcheck grade's own, with --homework-graded: the answers as the grader read them from the "
        "handed-in folder before any of the submission's code ran (never the worker's writable copy)",
    )
    group.addoption(
        "--homework-shard",
        default=None,
        metavar="K/N",
        help="stackcheck grade's own, for its warm-up: run every N-th of the selected tests from the K-th "
        "(1 to N), so N judges compile the caches at once",
    )
    group.addoption(
        "--homework-worker",
        default=None,
        metavar="JSON",
        help="stackcheck grade's own, with --homework-graded: how to start the submission's worker (its jail "
        "and limits); the worker is the only process that imports the submission",
    )
    group.addoption(
        "--course",
        nargs="?",
        const="shipped",
        default=None,
        metavar="PATH",
        help="also run the course's code listings: a Markdown file or a folder of them "
        "(no PATH: the shipped week 02); failing listings are reported as errata",
    )
    group.addoption(
        "--baseline",
        default=None,
        metavar="OLD.json|FOLDER",
        help="a previous --curriculum-report JSON: report what changed (claims, listings, versions) "
        "and fail when a verified claim or a working listing now fails; a FOLDER of them: the one "
        "recorded on this machine's GPUs (none there: no comparison, and the report says so)",
    )
    group.addoption(
        "--gpu-table",
        nargs="?",
        const="-",
        default=None,
        metavar="PATH",
        help="run no test: judge the selected cuda tests against each recorded GPU profile (T4, L4, A100, "
        "RTX 4090, an 8 GB laptop GPU, H200) and this machine's, and print which claims each verifies, "
        "skips and why, or has no line for (PATH: also write that table as Markdown)",
    )
    group.addoption(
        "--grading-trial",
        action="store_true",
        help="also run the grading trials: folders of submissions that attack the grader, each graded twice at "
        "--jobs 2 (minutes on 2 cores; CI's second step runs them)",
    )
    group.addoption(
        "--max-compiles",
        action="store_true",
        help="also run the self-tests that exist to compile MAX graphs: every MAX GPU graph for each GPU a "
        "learner may have (sm_75 to sm_90, in MAX's virtual device mode) and the MAX and Mojo variants; "
        "minutes of cold compiles on 2 cores (CI's second step runs them)",
    )
    parser.addini(
        "stackcheck",
        type="bool",
        default=False,
        help="run this project's tests as a stackcheck run (the plugin is otherwise silent)",
    )


def activates(config: pytest.Config) -> str | None:
    """Why this run is a stackcheck run, or None: an ini key, the environment, ``-p stackcheck``,
    one of stackcheck's options, or a path or ``--pyargs`` name of the suite's test packages."""
    if config.getini("stackcheck"):
        return "the ini key stackcheck = true"
    if os.environ.get(ENV_OPT_IN, "") not in ("", "0"):
        return f"{ENV_OPT_IN}={os.environ[ENV_OPT_IN]}"
    args = [str(a) for a in config.invocation_params.args]
    if any(a == "-pstackcheck" or (a == "stackcheck" and i and args[i - 1] == "-p") for i, a in enumerate(args)):
        return "-p stackcheck"
    for name in STACKCHECK_OPTIONS:
        if config.getoption(name, None):
            return f"--{name.replace('_', '-')}"
    for arg in config.args:
        first = Path(str(arg).split("::", 1)[0])
        parts = [p for p in first.parts if p not in ("/", ".")] if not first.is_absolute() else list(first.parts)
        if any(p in TEST_PACKAGES for p in parts) or str(arg).split(".", 1)[0] in TEST_PACKAGES:
            return f"the suite's test package {arg}"
    return None
