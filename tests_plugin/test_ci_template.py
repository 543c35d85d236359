"""examples/ci/course-gate.yml works on a fresh GitHub repository as written (issue 25): one placeholder,
named at the top; the CPU job installs as the README does, pinned by constraints/ci.txt (else a hosted
runner pulls torch's multi-GB CUDA build); its pytest command uses the README's options, each one this
plugin or pytest knows, and runs without a baseline the first time; the GPU job sets Python up and
runs the suite's own GPU job."""

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.meta
yaml = pytest.importorskip("yaml", reason="the CI template is YAML: pip install pyyaml")

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


def gpu_step() -> str:
    return next(c for c in commands("gpu") if ".ci/gpu" in c)


def test_the_gpu_job_runs_the_instructors_course_with_their_own_baseline():
    """Issue 35: the job ran the shipped week 02 against stackcheck's H200 baseline, whatever the
    repository held. It checks out this repository (course/, baselines/) with stackcheck beside it,
    and hands .ci/gpu the course folder and baselines/<gpu>.json, none on a first run."""
    steps = workflow()["jobs"]["gpu"]["steps"]
    checkouts = [step for step in steps if step.get("uses", "").startswith("actions/checkout")]
    assert len(checkouts) == 2 and "with" not in checkouts[0] and checkouts[1]["with"]["path"] == "stackcheck"
    run = gpu_step()
    assert "STACKCHECK_COURSE=$course" in run and "[ -d course ] && echo course/" in run
    assert "STACKCHECK_BASELINE=$baseline" in run and "baselines/$gpu.json" in run
    script = (ROOT / ".ci" / "gpu").read_text()
    assert '--course="$course"' in script and '${baseline:+--baseline="$baseline"}' in script


BROKEN = """# {title}

```python {{section=1.1 stack={stack} device={device}}}
{setup}
```

```python {{section=1.2 stack={stack} device={device}}}
y = {wrong}
assert float(y.sum()) == 0.0, "the listing's own check"
```
"""


def broken_course(folder: Path, device: str) -> tuple[Path, int]:
    """A course folder with one document whose second listing fails; (the folder, the failing line)."""
    stack, setup, wrong = {
        "cpu": ("numpy", "import numpy as np", "np.maximum(np.ones(3), 0)"),
        "cuda": ("torch", "import torch", "torch.relu(torch.ones(3, device='cuda'))"),
    }[device]
    text = BROKEN.format(title=f"a broken {device} listing", stack=stack, device=device, setup=setup, wrong=wrong)
    (folder / "course").mkdir()
    (folder / "course" / "selftest_broken.md").write_text(text, encoding="utf-8")
    return folder / "course", text.splitlines().index('assert float(y.sum()) == 0.0, "the listing\'s own check"') + 1


def run_gpu_job(command: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=900)


def test_the_gpu_jobs_script_fails_at_a_broken_listings_line(tmp_path):
    """.ci/gpu, as the template calls it (STACKCHECK_COURSE, no baseline), on a course folder whose
    listing fails: the run fails at that listing's line. Here on the CPU: the course's one CPU
    listing selected (``-m cpu`` after the job's ``-m cuda``); the cuda test below runs the job's step."""
    course, line = broken_course(tmp_path, "cpu")
    done = run_gpu_job(
        ["bash", str(ROOT / ".ci" / "gpu"), "-m", "cpu", "-k", "selftest_broken", "-n", "0"],
        tmp_path,
        {"STACKCHECK_COURSE": "course", "STACKCHECK_BASELINE": "", "GPU_LOG": "reports"},
    )
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    assert f"selftest_broken.md:{line}: listing §1.2 (numpy) fails" in out, out[-3000:]
    assert "--baseline" not in (tmp_path / "reports" / "pytest.txt").read_text().split("\n", 1)[0]


@pytest.mark.cuda
def test_the_gpu_jobs_step_fails_at_a_broken_cuda_listings_line(tmp_path):
    """The template's gpu step, as written, in an instructor's workspace (course/ with one broken
    CUDA listing, no baseline, stackcheck checked out beside it), narrowed to that listing."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the gpu job's step runs on a GPU runner")
    pytest.importorskip("sybil", reason="the gpu job's step runs the course gate: it needs Sybil (pip install sybil)")
    course, line = broken_course(tmp_path, "cuda")
    (tmp_path / "stackcheck").symlink_to(ROOT)
    step = gpu_step().replace("bash stackcheck/.ci/gpu", "bash stackcheck/.ci/gpu -k selftest_broken -n 0")
    done = run_gpu_job(["bash", "-eo", "pipefail", "-c", step], tmp_path, {})
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "baseline: none yet" in out, out[-3000:]
    assert f"selftest_broken.md:{line}: listing §1.2 (torch) fails" in out, out[-3000:]
