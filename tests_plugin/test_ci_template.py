"""examples/ci/course-gate.yml works on a fresh GitHub repository as written (issue 25): one placeholder,
named at the top; the CPU job installs as the README does, pinned by constraints/ci.txt (else a hosted
runner pulls torch's multi-GB CUDA build); its pytest command uses the README's options, each one this
plugin or pytest knows, and runs without a baseline the first time; the GPU job sets Python up and
runs the suite's own GPU job."""

import re
import shlex
from pathlib import Path

import pytest

pytestmark = pytest.mark.meta
yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "examples" / "ci" / "course-gate.yml"
PYTEST_OWN = {"-p", "--pyargs", "-n", "-m", "--junitxml"}


def workflow() -> dict:
    return yaml.safe_load(TEMPLATE.read_text())


def commands(job: str) -> list[str]:
    return [step["run"] for step in workflow()["jobs"][job]["steps"] if "run" in step]


def readme_commands() -> list[str]:
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def flags(command: str) -> set[str]:
    words = shlex.split(command.replace("\\\n", " "))
    return {w.split("=", 1)[0] for w in words if w.startswith("-")}


def test_one_placeholder_named_at_the_top():
    text = TEMPLATE.read_text()
    code = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    assert sum(line.count("OWNER") for line in code) == 1, "OWNER appears once, in env.STACKCHECK"
    assert workflow()["env"]["STACKCHECK"] == "OWNER/stackcheck"
    header = "\n".join(line for line in text.splitlines()[:5] if line.startswith("#"))
    assert "placeholder" in header and "STACKCHECK" in header


def test_the_cpu_job_installs_as_the_readme_does_pinned():
    install = next(c for c in commands("cpu") if "pip install" in c)
    readme_install = next(c for c in readme_commands() if "pip install" in c)
    assert "[all]" in install and "[all]" in readme_install
    assert re.search(r"-c \"[^\"]*/constraints/ci\.txt\"", install) and "-c constraints/ci.txt" in readme_install
    assert any(step.get("uses", "").startswith("actions/setup-python") for step in workflow()["jobs"]["cpu"]["steps"])


def test_the_cpu_jobs_pytest_uses_the_readmes_options_and_known_ones_only():
    run = next(c for c in commands("cpu") if "pytest" in c)
    readme_run = next(c for c in readme_commands() if "pytest" in c)
    options = (ROOT / "stackcheck" / "plugin" / "options.py").read_text()  # read, not imported: a self-test
    known = PYTEST_OWN | set(re.findall(r'"(--[a-z-]+)"', options))
    used = flags(run.split("python -m pytest", 1)[1])
    assert used <= known | {"--baseline"}, f"options neither pytest nor stackcheck has: {used - known}"
    assert flags(readme_run.split("pytest", 1)[1]) - {"--baseline"} <= used, "the README's options, all of them"
    assert "--baseline" in run and "[ -f baselines/cpu.json ]" in run, "a first run has no baseline yet"


def test_the_gpu_job_sets_python_up_and_runs_the_suites_gpu_job():
    steps = workflow()["jobs"]["gpu"]["steps"]
    assert any("set-up" in step.get("name", "") and "torch.cuda.is_available()" in step["run"] for step in steps)
    assert any(".ci/gpu" in step.get("run", "") for step in steps) and (ROOT / ".ci" / "gpu").exists()
