"""The device profile (stackcheck.evidence.device_profile) against the eight recorded GPUs: what each
one gates, the sizes and workers it gets, its lines, its Mojo target, and the claim x GPU table that
docs/gpu.md publishes (`pytest -m cuda --gpu-table`). No kernel runs: the T4, L4, A100, RTX 4090,
the two laptop GPUs and the H100 PCIe are judged from their profiles, never run here."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.claims import mutation
from stackcheck.evidence import device_profile, per_gpu

pytestmark = pytest.mark.meta


@pytest.fixture(autouse=True)
def one_process(monkeypatch):
    """The budgets judged here are a run's of one process: this run's own xdist workers (CI's -n 2 on a
    GPU host) would otherwise share the profiles' GPU in ``budget_bytes``."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)


ROOT = Path(__file__).resolve().parent.parent
PROFILES = device_profile.recorded()
# What a test may never do on any of them: judge bf16 on a card without bf16 tensor cores, and so on.
EXPECTED_GATES = {
    "t4": {"bf16-tensor-cores", "tf32", "flash-attention", "gemm-templates", "triton-bf16"},
    "l4": {"gemm-templates"},  # 58 SMs: Inductor keeps its GEMM templates for 68 and more
    "a100": {"memory-without-hbm"},  # HBM2: S7.2-memory-kind shows on GDDR and LPDDR cards
    "rtx4090": set(),
    "rtx4060laptop": {"gemm-templates"},
    "rtx3070laptop": {"gemm-templates"},  # 40 SMs
    "h100pcie": {"memory-without-hbm"},
    "h200": {"memory-without-hbm"},
}
# The published FP32 peaks (TFLOPS) of the data sheets each profile cites: its SMs, lanes and clock must give them.
DATASHEET_FP32_TFLOPS = {
    "t4": 8.1,
    "l4": 30.3,
    "a100": 19.5,
    "rtx4090": 82.6,
    "rtx4060laptop": 14.6,
    "rtx3070laptop": 16.6,
    "h100pcie": 51.2,
    "h200": 66.9,
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


def test_the_eight_profiles_are_recorded_with_their_architectures():
    assert set(PROFILES) == set(EXPECTED_GATES)
    assert {key: p.sm for key, p in PROFILES.items()} == {
        "t4": "sm_75",
        "l4": "sm_89",
        "a100": "sm_80",
        "rtx4090": "sm_89",
        "rtx4060laptop": "sm_89",
        "rtx3070laptop": "sm_86",
        "h100pcie": "sm_90",
        "h200": "sm_90",
    }
    assert PROFILES["rtx4090"].geforce and not PROFILES["l4"].geforce
    assert PROFILES["h200"].arch.memory.startswith("HBM") and PROFILES["t4"].arch.memory.startswith("GDDR")
    laptop = PROFILES["rtx3070laptop"]
    assert (laptop.memory_bytes // 2**30, laptop.l2_bytes) == (7, 4 * 2**20), "an 8 GB card with 4 MB of L2"


@pytest.mark.parametrize("key", list(EXPECTED_GATES))
def test_each_profile_gives_its_data_sheets_fp32_peak(key):
    assert PROFILES[key].fp32_flops / 1e12 == pytest.approx(DATASHEET_FP32_TFLOPS[key], abs=0.1)


def test_only_a_gpu_that_ran_ncu_here_counts_its_counters_as_permitted():
    """Colab refuses ncu's counters (ERR_NVGPUCTRPERM), and the driver's default refuses them to all
    but an administrator; only the H200 ran with --require ncu."""
    permitted = {key for key, p in PROFILES.items() if not p.counters_refused}
    assert permitted == {"h200"} and PROFILES["h200"].source.startswith("run")
    assert all("Colab" in PROFILES[key].counters for key in ("t4", "l4", "a100"))


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
    assert key.endswith("laptop") == (profile.workers == 1 and profile.memory_bytes < 10 * 2**30)
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
    assert lines == {
        "t4": 2.0,
        "l4": 1.5,
        "a100": 3.0,
        "rtx4090": None,
        "rtx4060laptop": None,
        "rtx3070laptop": None,
        "h100pcie": 3.0,
        "h200": 3.0,
    }


def test_a_line_from_the_statement_judges_every_gpu_one_from_a_card_that_card_alone():
    """Issue 75: S6.4-sync-idle's, S6.5's many requests', S7.2-shared's and S5.2-too-big's lines follow
    from the statement (a count, a ratio against the same run's control, a step sized from the device
    profile): every GPU has them. S10.5-block's and S12.5's tile margin were recorded on the H200 and
    depend on the card: an H100 PCIe (the same sm_90, fewer SMs, HBM2e) or a GDDR card has none."""
    every = (per_gpu.sync_idle_lines, per_gpu.many_requests_line, per_gpu.tile_reads_window, per_gpu.fusion_loses_line)
    for line in every:
        assert all(line(p) is not None for p in PROFILES.values()), line.__name__
    for line in (per_gpu.block_line, per_gpu.tile_margin):
        assert {key for key, p in PROFILES.items() if line(p) is not None} == {"h200"}, line.__name__


def test_the_sync_mutants_step_takes_on_each_gpu_what_it_took_on_the_h200():
    """S6.4-sync-idle's step (claim test and meta-test) from the GPU's FP32 rate: 2048 on the H200 and
    without a GPU, smaller on a slower GPU so a host sync is as large a share of it."""
    steps = {key: per_gpu.sync_step(p) for key, p in PROFILES.items()}
    assert steps["h200"] == per_gpu.sync_step(None) == 2048 and steps["t4"] == 1024
    for key, profile in PROFILES.items():
        seconds = 2 * steps[key] ** 3 / profile.fp32_flops
        assert seconds == pytest.approx(2 * 2048**3 / PROFILES["h200"].fp32_flops, rel=0.35), key


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
    b200 = device_profile.Profile("NVIDIA B300", (10, 3), 148, 2**27, 232448, 288 * 2**30, 2032000)
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
    t4 = {claim: line.split("|")[2] for claim, line in row.items()}
    assert "needs TF32 tensor cores" in t4["S10.3-gpu"], "a T4 cannot show MAX's TF32"
    assert "needs bf16 in Triton kernels" in t4["X-numerics"], "nor run Triton's bf16"
    assert "the rest: ncu's counters refused (Colab" in t4["Q3"], "Colab refuses ncu's counters"
    shown = re.match(r"verified \((\d+) of (\d+)", t4["Q3"].strip())
    assert shown and 0 < int(shown[1]) < int(shown[2]), "and shows Q3's numbers without them (issue 53)"
    h100 = head_index(gpu_table, PROFILES["h100pcie"].name)
    assert row["S10.5-block"].split("|")[h100].strip() == "no line here", "the H200's line is not an H100 PCIe's"


def head_index(table: list[str], name: str) -> int:
    """The column of GPU ``name`` in the table's rows, split on "|"."""
    head = table[0].split("|")
    return next(i for i, cell in enumerate(head) if cell.strip().startswith(name + " ("))


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


@pytest.mark.parametrize("key", [k for k in EXPECTED_GATES if k.endswith("laptop")])
def test_the_budget_comes_from_free_memory_less_what_runs_beside(key):
    """Issue 53 item 5: an 8 GB laptop card whose display holds 1.5 GiB gives a test what is free,
    less its worker's contexts and the ncu child; the old 0.8 of the whole memory gave it more than
    was free. Every sized workload still fits."""
    import dataclasses

    whole = PROFILES[key]
    shown = dataclasses.replace(whole, free_bytes=whole.memory_bytes - 3 * 2**29)
    want = 0.9 * (shown.free_bytes - device_profile.CONTEXT_RESERVE - device_profile.NCU_RESERVE)
    assert shown.budget_bytes == int(want) < shown.free_bytes - 2 * 2**30
    assert shown.budget_bytes < whole.budget_bytes < 0.8 * whole.memory_bytes
    length = per_gpu.flash_length(shown, heads=8)
    assert per_gpu.FLASH_PEAK_OVER_SCORES * 8 * length**2 * 2 <= shown.budget_bytes or length == 1024
    assert 3 * per_gpu.q3_outer(shown) ** 2 * 4 <= shown.budget_bytes


def test_cuda_tests_start_with_torchs_cache_given_back(monkeypatch):
    """Issue 53 item 5: before each cuda test, torch's cached blocks are freed (the budget is sized
    from the memory free)."""
    import sys
    import types

    emptied = []
    cuda = types.SimpleNamespace(is_initialized=lambda: True, empty_cache=lambda: emptied.append(1))
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    device_profile.release_cached_memory()
    assert emptied == [1]


@pytest.mark.parametrize("key", list(EXPECTED_GATES))
def test_more_workers_on_a_gpu_than_auto_starts_shrink_each_ones_share(key, monkeypatch):
    """``-n 16`` on one GPU: each worker's workloads fit a sixteenth of it, not the share of the few
    workers ``-n auto`` would start there; two GPUs halve the workers on each."""
    from stackcheck.evidence.gpus import ENV_LIST

    profile = PROFILES[key]
    auto = profile.budget_bytes
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "16")
    monkeypatch.setenv(ENV_LIST, "0")
    assert 16 * profile.budget_bytes <= profile.memory_bytes and profile.budget_bytes < auto
    monkeypatch.setenv(ENV_LIST, "0,1")
    two_gpus = profile.budget_bytes
    monkeypatch.setenv(ENV_LIST, "0")
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "8")
    assert two_gpus == profile.budget_bytes
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "1")
    assert profile.budget_bytes == auto
