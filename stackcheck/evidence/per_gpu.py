"""What a GPU test sizes or judges by the GPU it runs on (stackcheck.evidence.device_profile): its
workload's size, from the GPU's memory, L2 and FP32 rate, and its line. A line that follows from the
statement itself (a count's, or a ratio against the same run's own control, with its workload sized
from the device profile) is keyed ANY_GPU and holds on every card; one that depends on the card is
keyed by the card it was recorded on ("NVIDIA H200": an H100 PCIe, the same sm_90, is another card)
or, where published figures set it, by its family ("sm_80", "sm_89-geforce"); a GPU without one
reports its measurement and is not counted (``device_profile.no_line``). ``None`` for a profile (no GPU here)
gives the sizes the H200's lines were recorded at. The tests read these;
tests_plugin/test_device_profiles.py checks them against every recorded GPU."""

from __future__ import annotations

from stackcheck.evidence.device_profile import ANY_GPU, Profile, recorded

# The most shared memory one block may use, by compute capability (CUDA C++ Programming Guide,
# "Technical Specifications per Compute Capability"): T4, A100, A10 / RTX 30x0, L4 / RTX 40x0,
# H100 / H200. S12.5 and the cross-compile self-test read it; a GPU checks its own row.
SHARED_PER_BLOCK = {75: 64 * 1024, 80: 163 * 1024, 86: 99 * 1024, 89: 99 * 1024, 90: 227 * 1024}
FLASH_PEAK_OVER_SCORES = 5  # S3.1: the math backend's peak over the bf16 scores (18 GiB for 4 GiB on the H200)


def flash_length(profile: Profile | None, heads: int) -> int:
    """S3.1: the longest power-of-two sequence up to 16k whose math-backend peak (``heads`` bf16
    [L, L] score matrices, five times over) fits one test's share of memory."""
    length = 16384
    while (
        profile is not None and length > 1024 and FLASH_PEAK_OVER_SCORES * heads * length**2 * 2 > profile.budget_bytes
    ):
        length //= 2
    return length


def q3_outer(profile: Profile | None) -> int:
    """Q3: N = M, each [N, M] float32 tensor (A, Z, Y) at least 4 times the L2, so none stays there
    between kernels: 8192 (256 MiB; the H200's L2 is 60 MiB), 16384 on an RTX 4090's 72 MiB."""
    n = 8192
    while profile is not None and n * n * 4 < 4 * profile.l2_bytes:
        n *= 2
    return n


def q3_inner(profile: Profile | None) -> int:
    """Q3: K. The compulsory bytes count X and W once, so both must stay in L2 while the GEMM reads
    them (at most half of it): 256 where that fits (16 MiB), less on a small L2 (a T4's 4 MiB: 32)."""
    n, k = q3_outer(profile), 256
    while profile is not None and k > 8 and 2 * n * k * 4 > profile.l2_bytes // 2:
        k //= 2
    return k


def chain_values(profile: Profile | None) -> int:
    """Q5: float32 values of the 8-op chain, 2^28 (1 GiB a tensor), less where eager's input, output
    and intermediates (8 tensors at most alive) do not fit one test's share of memory."""
    n = 2**28
    while profile is not None and n > 2**22 and 8 * n * 4 > profile.budget_bytes:
        n //= 2
    return n


def split_k(profile: Profile | None, n: int, m: int) -> int:
    """S2.3: K of [n, K] @ [K, m], 2^22, less where X and W in float32 and float64 (12 bytes a value)
    pass half one test's share of memory (an 8 GB card: 2^21); K stays thousands of times n and m."""
    k = 2**22
    while profile is not None and k > 2**18 and (n + m) * k * 12 > profile.budget_bytes // 2:
        k //= 2
    return k


# S12.5, bf16 over fp32 on one matmul. Recorded: the H200's tensor cores 9.3-13.0x over 7 series
# (median / line 3.4, spread squared 1.95). Other GPUs, from published peaks until a run there
# records them: the A100's bf16 tensor cores 312 over 19.5 TFLOP/s of fp32 (16x, as the H200's 990
# over 67), so the H200's line; an L4's or an A10's 4x (121 over 30, 125 over 31), half of it. A
# GeForce card's tensor cores accumulate fp32 at half rate, 2x its fp32 peak (an RTX 4090's 165
# over 83): no line, as for a GPU not listed.
BF16_OVER_FP32 = {"sm_90": 3.0, "sm_80": 3.0, "sm_89": 1.5, "sm_86": 1.5, "sm_89-geforce": None, "sm_86-geforce": None}
NO_BF16_UNITS_AT_MOST = 2.0  # without bf16 matrix units: half the bytes, at most 2x


def bf16_line(profile: Profile) -> float | None:
    """S12.5: this GPU's line for bf16 over fp32: the fast line where its tensor cores take bf16,
    the 2x of half the bytes where they do not (a T4), None where no line is set."""
    if profile.lacks("bf16-tensor-cores"):
        return NO_BF16_UNITS_AT_MOST
    return profile.line(BF16_OVER_FP32)


# S10.5, the course's bias_relu kernel: how much faster than its 256-thread blocks another block size
# runs it at some element count. Recorded on the H200 (6 runs): 512 threads 1.217-1.227x faster at 2^22
# elements (1.02-1.19x at 2^20; 256 wins from 2^24 on), the trials of 256 and 512 there within 1.03
# of each other; the line sits under the least reading by over twice that spread. The best block
# follows the SM count and the memory, so no other card (an H100 PCIe included) has a line.
BLOCK_256_BEATEN = {"NVIDIA H200": 1.08}


def block_line(profile: Profile) -> float | None:
    """S10.5: this GPU's line for the example's block size beaten by another, None where none is set."""
    return profile.line(BLOCK_256_BEATEN)


# S12.5, the best tile differs between a skinny and a square matmul by at least this factor (median /
# line). Recorded on the H200: the skinny shape's small tile 3.70-3.72x (6 series, idle GPU), the
# square one's large tile 5.5-7.4x (12 suite runs): 1.85 and 3.3 over the line, past the spreads
# squared (1.01 and 1.8). The skinny case is bandwidth-bound, so a GDDR card differs: no other line.
TILE_MARGIN = {"NVIDIA H200": 2.0}


def tile_margin(profile: Profile) -> float | None:
    """S12.5: how much the best tile must beat the other on each shape, None where no line is set."""
    return profile.line(TILE_MARGIN)


# S5.2-too-big, the fused two-layer program at hidden width 256 (spilling) over the unfused pair, 2^16 rows.
# Recorded on the H200 (Triton 3.6): 6.6, 7.7 and 7.6x alone, 5.8x under `-m cuda -n auto`; a line of 2.0
# is 3.5 under the median, past the spread squared (1.5). At width 64 (no spill) the same program took
# 0.82-1.14x its pair: recorded, not judged. On an H100 80GB: 8.66x. A spilling fusion goes through
# local memory on every card, far slower than its registers: the line is the statement's, on every GPU.
FUSION_LOSES = {ANY_GPU: 2.0}


def fusion_loses_line(profile: Profile) -> float | None:
    """S5.2-too-big: how many times the unfused pair's time the spilling fusion takes at least."""
    return profile.line(FUSION_LOSES)


# MC04, the case whose 1 x N product leaves the tensor pipe while its N^3 GEMM uses it. Recorded on the
# H200 (cuBLAS of CUDA 13): the TF32 GEMV is FFMA work (2112 stray HMMA against 4.2M FFMA: 5e-4 of the
# line's 1e-3), its GEMM 0.0625; the bf16 and fp16 GEMVs stay on the tensor pipe. Other cards report.
SHAPE_DECIDES = {"NVIDIA H200": "fp32-tf32"}


def shape_decides(profile: Profile) -> str | None:
    """MC04: the case (a test id of test_mc04_tensor_cores) where the shape decides on this card."""
    return profile.line(SHAPE_DECIDES)


# S7.2-hierarchy, the same bytes read from one SM's L1, a quarter of the L2 and 1 GiB of device memory
# (stackcheck.toolchains.levels): L2 over L1 and device memory over L2, in device time. Recorded on the
# H200 over 5 runs of the test (one under `-m cuda -n auto`): 2.07-2.44x and 1.91-2.05x (17-23, 8.4-9.3
# and 4.4-4.6 TB/s); median / line 1.49 and 1.39, past the spreads squared (1.16 and 1.06). Another
# card's levels differ: no other line.
LEVELS_SLOWER = {"NVIDIA H200": (1.5, 1.4)}


def level_lines(profile: Profile) -> tuple[float, float] | None:
    """S7.2-hierarchy: (L2 over L1, device memory over L2) at least, None where no line is set."""
    return profile.line(LEVELS_SLOWER)


# S7.2-shared, what a tiled matmul's SMs read from L2 over one read of each input tile per program
# (ncu's lts__t_sectors_srcunit_tex_op_read): on the H200 at n = 2048, tiles 16x16 / 64x64 / 128x128:
# 0.90 / 0.95 / 0.93, on an H100 80GB 0.889 / 0.943 / 0.909 (L1 hits lower it; counts, not timings).
# One read of each tile per program is the statement: its window holds on every GPU.
TILE_READS = {ANY_GPU: (0.6, 1.2)}
TILE_READS_N = 2048


def tile_reads_window(profile: Profile) -> tuple[float, float] | None:
    """S7.2-shared: (least, most) of L2 reads over one read of each input tile per program."""
    return profile.line(TILE_READS)


# S6.5-regimes, the mean over many requests: 20 requests of tanh(A @ A) at n = 128 queued with one wait,
# per request, over the same 20 each waited for (the learner's timed_call and sync). Recorded on the
# H200 over 5 runs of 7 interleaved trials, alone: JAX 0.53-0.62, torch 0.64-0.69 (0.61-0.81 at
# 10 requests); with 3 more processes timing on the GPU: 0.11-0.60 and 0.04-0.22. The line's margin
# over the worst (0.69) is 1.22, past twice the runs' spread (1.08 torch, 1.12 JAX). On an H100 80GB:
# 0.526 JAX, 0.555 torch. At n = 128 every GPU's request is host and launch overhead, which queueing
# overlaps: the statement's line, on every GPU.
MANY_REQUESTS = {ANY_GPU: 0.85}
MANY_REQUESTS_N, MANY_REQUESTS_COUNT = 128, 20


def many_requests_line(profile: Profile) -> float | None:
    """S6.5-regimes: queued requests, each, over waited ones, at most."""
    return profile.line(MANY_REQUESTS)


# S6.4-sync-idle: the device's idle share submitted ahead (at most) and waited for after every step
# (at least this factor of it), with a step sized as on the H200 (``sync_step``). Recorded there over 9
# runs of 3 series: 0.011-0.019 submitted ahead, 7.2-43x that waited for; a forward with a hidden sync
# 0.11-0.19 submitted ahead. The step is sized from each card's FP32 rate to take what it took there
# (``sync_step``), so a host sync's gap is the same share of it: the lines hold on every GPU.
SYNC_IDLE = {ANY_GPU: (0.05, 1.5)}
SYNC_STEP_N = 2048  # the H200's [N, N] @ [N, N] step (float32 on the FP32 lanes: 0.26 ms at its peak)


def sync_idle_lines(profile: Profile) -> tuple[float, float] | None:
    """S6.4-sync-idle: (idle share submitted ahead at most, waited-for over submitted-ahead at least)."""
    return profile.line(SYNC_IDLE)


def sync_step(profile: Profile | None) -> int:
    """S6.4-sync-idle's N (the claim test's step and its meta-test's mutant): the step takes on this GPU
    about what 2048^3 took on the H200, so a host sync's gap is the same share of it (a T4: 1024)."""
    h200 = recorded()["h200"]
    if profile is None or profile.clock_khz <= 0:  # no GPU, or a driver that does not say its clock
        return SYNC_STEP_N
    n = SYNC_STEP_N * (profile.fp32_flops / h200.fp32_flops) ** (1 / 3)
    return max(256, int(round(n / 256)) * 256)
