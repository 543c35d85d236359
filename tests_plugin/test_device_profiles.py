"""The device profile (stackcheck.evidence.device_profile) against the six recorded GPUs: what each
one gates, the sizes and workers it gets, its lines, its Mojo target, and the claim x GPU table that
docs/gpu.md publishes (`pytest -m cuda --gpu-table`). No kernel runs: the T4, L4, A100, RTX 4090
and laptop GPU are judged from their profiles, never run here."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.claims import mutation
from stackcheck.evidence import device_profile, per_gpu

pytestmark = pytest.mark.meta

ROOT = Path(__file__).resolve().parent.parent
PROFILES = device_profile.recorded()
# What a test may never do on any of them: judge bf16 on a card without bf16 tensor cores, and so on.
EXPECTED_GATES = {
    "t4": {"bf16-tensor-cores", "tf32", "flash-attention", "gemm-templates", "triton-bf16"},
    "l4": {"gemm-templates"},  # 58 SMs: Inductor keeps its GEMM templates for 68 and more
    "a100": set(),
    "rtx4090": set(),
    "laptop8gb": {"gemm-templates"},
    "h200": set(),
}


@pytest.fixture(scope="module")
def gpu_table(tmp_path_factory) -> list[str]:
    """`pytest -m cuda --gpu-table` of this checkout, on a machine without a GPU (no column of its own)."""
    target = tmp_path_factory.mktemp("table") / "gpu-table.md"
    # a fresh run, not one of this run's xdist workers (which would pin the child to its GPU)
    environ = {k: v for k, v in os.environ.items() if k not in mutation.PRIVATE}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "cuda", f"--gpu-table={target}", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**environ, "CUDA_VISIBLE_DEVICES": "", device_profile.ENV: ""},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return target.read_text(encoding="utf-8").splitlines()


def test_the_six_profiles_are_recorded_with_their_architectures():
    assert set(PROFILES) == set(EXPECTED_GATES)
    assert {key: p.sm for key, p in PROFILES.items()} == {
        "t4": "sm_75",
        "l4": "sm_89",
        "a100": "sm_80",
        "rtx4090": "sm_89",
        "laptop8gb": "sm_89",
        "h200": "sm_90",
    }
    assert PROFILES["rtx4090"].geforce and not PROFILES["l4"].geforce
    assert PROFILES["h200"].arch.memory.startswith("HBM") and PROFILES["t4"].arch.memory.startswith("GDDR")


@pytest.mark.parametrize("key", list(EXPECTED_GATES))
def test_each_profile_gates_what_its_gpu_cannot_show(key):
    profile = PROFILES[key]
    gated = {need for need in device_profile.NEEDS if profile.lacks(need)}
    assert gated == EXPECTED_GATES[key]
    if gated:
        assert profile.lacks(*gated).endswith(f"this is {profile.sm} ({profile.name})")


@pytest.mark.parametrize("key", list(EXPECTED_GATES))
def test_each_profile_gets_workloads_that_fit_its_memory_and_l2(key):
    """Workers from memory (an 8 GB card runs one); every sized workload inside one worker's share."""
    profile = PROFILES[key]
    assert 1 <= profile.workers <= 4 and profile.workers * profile.budget_bytes <= profile.memory_bytes
    assert (key == "laptop8gb") == (profile.workers == 1 and profile.memory_bytes < 10 * 2**30)
    length = per_gpu.flash_length(profile, heads=8)
    assert per_gpu.FLASH_PEAK_OVER_SCORES * 8 * length**2 * 2 <= profile.budget_bytes or length == 1024
    n = per_gpu.q3_outer(profile)
    assert 2 * n * per_gpu.q3_inner(profile) * 4 <= profile.l2_bytes // 2  # X and W stay in L2
    assert n * n * 4 >= 4 * profile.l2_bytes and 3 * n * n * 4 <= profile.budget_bytes  # A and Z do not
    assert 8 * per_gpu.chain_values(profile) * 4 <= profile.budget_bytes
    assert 128 * per_gpu.split_k(profile, 64, 64) * 12 <= profile.budget_bytes // 2
    assert per_gpu.split_k(profile, 64, 64) >= 2**18, "K stays thousands of times the output's side"


def sizes(profile):
    return (
        per_gpu.flash_length(profile, heads=8),
        per_gpu.q3_outer(profile),
        per_gpu.q3_inner(profile),
        per_gpu.chain_values(profile),
        per_gpu.split_k(profile, 64, 64),
    )


def test_the_h200_and_a_machine_without_a_gpu_keep_the_sizes_the_lines_were_recorded_at():
    assert sizes(PROFILES["h200"]) == sizes(None) == (16384, 8192, 256, 2**28, 2**22)
    assert PROFILES["h200"].workers == 4


@pytest.mark.parametrize("key", list(EXPECTED_GATES))
def test_each_profile_builds_mojo_for_its_own_gpu(key, monkeypatch):
    from stackcheck.toolchains import mojo_build

    monkeypatch.setenv(device_profile.ENV, key)
    assert mojo_build.local_target() == f"nvidia:{PROFILES[key].sm.removeprefix('sm_')}"
    assert mojo_build.local_target() in mojo_build.TARGETS


def test_bf16_lines_exist_where_published_figures_set_them():
    lines = {key: per_gpu.bf16_line(p) for key, p in PROFILES.items()}
    assert lines == {"t4": 2.0, "l4": 1.5, "a100": 3.0, "rtx4090": None, "laptop8gb": None, "h200": 3.0}


def test_a_gpu_without_a_line_reports_its_measurement_and_is_not_verified():
    with pytest.raises(pytest.skip.Exception, match=r"measured, no line for sm_89-geforce .*'bf16_speedup': 2.1"):
        device_profile.no_line(PROFILES["rtx4090"], {"bf16_speedup": 2.1})


def test_an_unknown_profile_or_need_is_refused(monkeypatch):
    monkeypatch.setenv(device_profile.ENV, "v100")
    with pytest.raises(ValueError, match="no such recorded profile; known: t4, l4"):
        device_profile.current()
    with pytest.raises(ValueError, match="unknown GPU need"):
        PROFILES["t4"].lacks("fp64-tensor-cores")


def test_each_profile_reports_the_shared_memory_its_generation_allows():
    """The driver's shared memory per block, recorded in each profile, is per_gpu's row for its
    compute capability (the table S12.5 and the cross-compile self-test judge tiles by)."""
    for profile in PROFILES.values():
        cc = profile.capability[0] * 10 + profile.capability[1]
        assert profile.shared_per_block_optin == per_gpu.SHARED_PER_BLOCK[cc], profile


def test_a_newer_gpu_keeps_what_its_predecessors_had():
    b200 = device_profile.Profile("NVIDIA B300", (10, 3), 148, 2**27, 232448, 288 * 2**30)
    assert b200.arch.family == "Blackwell" and not b200.lacks("flash-attention", "bf16-tensor-cores")


@pytest.mark.parametrize("key", list(EXPECTED_GATES))
def test_docs_publish_the_claim_by_gpu_table(gpu_table, key):
    """docs/gpu.md holds `pytest -m cuda --gpu-table` as it is now, this GPU's column included."""
    page = (ROOT / "docs" / "gpu.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- gpu-table -->\n(.*?)<!-- /gpu-table -->", page, re.S)
    assert block, "docs/gpu.md has no <!-- gpu-table --> block"
    stale = "docs/gpu.md's claim x GPU table is stale: run pytest -m cuda --gpu-table=PATH and paste PATH"
    assert block.group(1).strip().splitlines() == gpu_table, stale
    head = [cell.strip() for cell in gpu_table[0].strip("|").split("|")]
    column = next(i for i, cell in enumerate(head) if cell.startswith(PROFILES[key].name + " ("))
    label = "" if key == "h200" else "from the profile, not run"
    assert label in head[column]


def test_the_table_names_what_each_gpu_cannot_show(gpu_table):
    row = {line.split("|")[1].strip(): line for line in gpu_table[2:]}
    assert "skipped: needs flash attention" in row["S3.1-flash"].split("|")[2], "the T4 has no flash attention"
    assert "no line for sm_89-geforce" in row["S12.5-perf-portability"], "a GeForce card's bf16 has no line"


@pytest.mark.parametrize("key", list(EXPECTED_GATES))
def test_a_stack_is_held_to_tf32_only_on_a_gpu_with_tf32(key, monkeypatch):
    """MAX's float32 matmuls on a GPU are held to the tfloat32 row where TF32 tensor cores exist
    (measured on the H200); a T4 has none, and its results are held to float32's own row."""
    from stackcheck.stacks.params import tolerance_row

    monkeypatch.setenv(device_profile.ENV, key)
    want = "float32" if PROFILES[key].lacks("tf32") else "tfloat32"
    assert {stack: tolerance_row(stack, "cuda", "float32") for stack in ("max", "mojo")} == {"max": want, "mojo": want}
    assert tolerance_row("max", "cpu", "float32") == "float32"
    assert tolerance_row("torch", "cuda", "float32") == "float32"


def test_the_bf16_runs_of_triton_and_inductor_on_a_gpu_are_gated():
    """X-numerics' Triton and torch.compile bf16 runs on cuda carry the triton-bf16 gate from the
    stack records (older Triton fails `cvt.bf16.f32 requires sm_80` on a T4); the other runs do not."""
    from stackcheck.stacks.params import stack_params

    def needs(param):
        return {n for mark in param.marks if mark.name == "gpu_needs" for n in mark.args}

    gated = {p.id for p in stack_params(dtypes=True) if needs(p)}
    assert gated == {"triton-cuda-bfloat16", "torch_compile-cuda-bfloat16"}
    assert all(needs(p) == {"triton-bf16"} for p in stack_params(dtypes=True) if p.id in gated)
