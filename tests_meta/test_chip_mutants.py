"""Meta-tests for the chip's claims (tests_hardware): each counter judgment rejects the wrong
reading it exists to reject. Readings are shaped like the H200's (issue 11's measurements), so
these run on any machine."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck import judges
from stackcheck.evidence import device_profile, hardware, per_gpu, timing
from stackcheck.toolchains import counters
from stackcheck.toolchains.counters import Kernel

N = M = 8192
K = 256
TENSOR = N * M * 4


def kernel(name, **values):
    return Kernel(name, {**dict.fromkeys(counters.METRICS, 0.0), **values})


FP32_GEMM = kernel("sm80_xmma_gemm_f32f32", ffma=68.7e9, hmma=4096)
BF16_GEMM = kernel("nvjet_sm90_tst", gmma=2_097_152)
RELU = kernel("triton_bias_relu", alu=4.98e6)
EAGER = [
    kernel("gemm", dram_read=16e6, dram_write=244e6),
    kernel("add", dram_read=269e6, dram_write=249e6),
    kernel("clamp", dram_read=268e6, dram_write=244e6),
]
FUSED = [kernel("matmul_bias_relu", gmma=1e6, dram_read=17e6, dram_write=268e6)]


@pytest.mark.meta
@pytest.mark.mutant_for("MC04")
def test_a_reader_that_sums_the_fma_pipe_as_tensor_work_is_caught():
    """The fp32 GEMM's FFMAs read under the tensor-pipe name must fail the 'not on Tensor Cores' check."""
    judges.assert_tensor_cores([FP32_GEMM], False, "fp32 GEMM")
    misread = kernel(FP32_GEMM.name, gmma=FP32_GEMM.values["ffma"], ffma=FP32_GEMM.values["ffma"])
    with pytest.raises(AssertionError, match="FFMA, not the tensor pipe"):
        judges.assert_tensor_cores([misread], False, "fp32 GEMM")
    with pytest.raises(AssertionError, match="Tensor Core"):
        judges.assert_tensor_cores([FP32_GEMM], True, "fp32 GEMM claimed on Tensor Cores")


@pytest.mark.meta
@given(tensor=st.integers(0, 10**12), ffma=st.integers(0, 10**12))
@settings(max_examples=200, deadline=None)
def test_mc04_judges_and_records_a_share_never_a_ratio_over_a_zero(tensor, ffma):
    """MC04's judged number is the tensor pipe's share of the multiply-adds, in [0, 1] whatever the
    counts (bf16 on Tensor Cores issues no FFMA: a ratio over it read 2.6e5), and the verdict is the
    line the report draws: on Tensor Cores exactly when the share is above 1e-3."""
    read = [kernel("gemm", gmma=tensor, ffma=ffma)]
    share = tensor / (tensor + ffma) if tensor + ffma else 0.0
    for expected in (True, False):
        try:
            found = judges.assert_tensor_cores(read, expected, "a GEMM")
        except AssertionError:
            found = None
        (line,) = found["judged"] if found else [{"measured": share}]
        assert 0 <= line["measured"] <= 1 and line["measured"] == pytest.approx(share)
        on_tensor_cores = share > 1e-3
        assert (found is not None) == (on_tensor_cores if expected else ffma > 0 and not on_tensor_cores)


TF32_GEMM = kernel("sm90_xmma_gemm_f32f32_tf32f32", gmma=262144, hmma=262144, ffma=4194304)
TF32_GEMV = kernel("internal::kernel<float>", hmma=2112, ffma=4196352)


@pytest.mark.meta
@pytest.mark.mutant_for("MC04")
def test_a_thin_product_read_as_its_gemm_is_not_a_shape_that_decides():
    """The H200's TF32 GEMV is FFMA work; read with its GEMM's counters (or the GEMM off the tensor
    pipe too) the shape no longer decides, and the card's recorded case fails."""
    recorded = per_gpu.SHAPE_DECIDES["NVIDIA H200"]
    judges.assert_shape_decides({recorded: ([TF32_GEMM], [TF32_GEMV])}, recorded)
    for wrong in (([TF32_GEMM], [TF32_GEMM]), ([FP32_GEMM], [TF32_GEMV])):
        with pytest.raises(AssertionError, match="1 x N product"):
            judges.assert_shape_decides({recorded: wrong}, recorded)


@pytest.mark.meta
@pytest.mark.mutant_for("MC05")
def test_relu_on_the_tensor_pipe_is_caught():
    judges.assert_general_pipes_only([RELU], "bias + ReLU")
    with pytest.raises(AssertionError, match="no tensor-pipe"):
        judges.assert_general_pipes_only([RELU, BF16_GEMM], "bias + ReLU fused into a GEMM reading")


@pytest.mark.meta
@pytest.mark.mutant_for("Q3")
def test_an_eager_path_that_is_really_compiled_is_caught():
    judges.assert_intermediates_removed(EAGER, FUSED, N, M, K)
    with pytest.raises(AssertionError):
        judges.assert_intermediates_removed(FUSED, FUSED, N, M, K)
    with pytest.raises(AssertionError, match="fused kernel still moves"):
        judges.assert_intermediates_removed(EAGER, [kernel("unfused", dram_read=300e6, dram_write=520e6)], N, M, K)


@pytest.mark.meta
@pytest.mark.mutant_for("Q5")
def test_a_compiled_chain_that_still_launches_every_op_is_caught():
    eager = [kernel(f"op{i}", dram_read=2**30, dram_write=2**30) for i in range(8)]
    compiled = [kernel("triton_poi_fused", dram_read=2**30, dram_write=2**30)]
    judges.assert_fewer_launches_and_bytes(eager, compiled, 8)
    with pytest.raises(AssertionError):
        judges.assert_fewer_launches_and_bytes(eager, eager, 8)


@pytest.mark.meta
@pytest.mark.mutant_for("S7.2-hierarchy")
def test_swapped_working_sets_are_caught():
    small = [kernel("sum", dram_read=r) for r in (15e6, 0.1e6, 15e6, 0.1e6, 0.1e6)]  # one pass evicted
    large = [kernel("sum", dram_read=2**30) for _ in range(5)]
    judges.assert_l2_reuse(small, large, 5, 15_000_000, 2**30)
    with pytest.raises(AssertionError, match="inside L2 was re-read"):
        judges.assert_l2_reuse(large, large, 5, 15_000_000, 2**30)
    with pytest.raises(pytest.skip.Exception, match="inconclusive"):  # evicted as often as not: undecided
        judges.assert_l2_reuse(small[:1] + small[2:3] * 2 + small[1:2] * 2, large, 5, 15_000_000, 2**30)
    with pytest.raises(AssertionError, match="inside L2 was re-read"):  # no pass kept it: no reuse
        judges.assert_l2_reuse(small[:1] + small[2:3] * 4, large, 5, 15_000_000, 2**30)


class _Device:
    platform, device_kind, core_on_chip = "gpu", "NVIDIA H200", None

    def memory_stats(self):
        return {"bytes_limit": 140 * 2**30}


@pytest.mark.meta
@pytest.mark.mutant_for("S7.3-tpu")
def test_a_gpu_passed_off_as_a_tpu_is_caught():
    with pytest.raises(AssertionError, match="not a TPU"):
        hardware.tpu_facts(_Device())


@pytest.mark.meta
@pytest.mark.mutant_for("S5.3-tiling")
@pytest.mark.triton
def test_a_grid_that_drops_the_partial_tiles_is_caught():
    """The tiled matmul launched on floor(N / tile) x floor(M / tile) programs leaves edge tiles unwritten."""
    from stackcheck.toolchains import triton_kernels

    class FloorGrid:
        def __init__(self, kernel):
            self.kernel = kernel

        def __getitem__(self, grid):
            return self.kernel[tuple(max(g - 1, 1) for g in grid)]

    kernels = (FloorGrid(triton_kernels.matmul_compiled), FloorGrid(triton_kernels.matmul_interpreted))
    with pytest.raises(AssertionError, match="does not match"):
        triton_kernels.assert_tilings_right("cpu", triton_kernels.TILES[:1], kernels=kernels)


@pytest.mark.meta
@pytest.mark.mutant_for("S3.1-flash")
def test_a_flash_backend_that_materializes_the_scores_is_caught():
    scores = 8 * 16384**2 * 2
    judges.assert_flash_saves(int(0.01 * scores), int(1.5 * scores), scores)
    with pytest.raises(AssertionError, match="flash backend should not"):
        judges.assert_flash_saves(int(1.5 * scores), int(1.5 * scores), scores)


@pytest.mark.meta
@pytest.mark.mutant_for("S1.2-eager-library")
def test_a_generated_matmul_kernel_is_caught():
    judges.assert_library_kernel([kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT")], "eager")
    judges.assert_library_kernel([kernel("void Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(Params)")], "eager")
    for names in (["triton_tem_fused_mm_0"], ["_matmul_bias_relu_kernel"], ["sm90_xmma_gemm", "splitKreduce"]):
        with pytest.raises(AssertionError, match="one library"):
            judges.assert_library_kernel([kernel(n) for n in names], "eager")


@pytest.mark.meta
@pytest.mark.mutant_for("S10.3-gpu")
def test_a_gpu_graph_that_drops_relu_or_an_output_is_caught():
    """The check the GPU test applies, fed the outputs of a graph that lost ReLU on the device, or
    lost the custom op's output."""
    import numpy as np

    from stackcheck.evidence.numerics import assert_outputs_match, make_inputs, reference_forward

    x, w, b = make_inputs(5, 7, 3, seed=104)
    y = reference_forward(x, w, b)
    cpu = {"y": y.astype(np.float32), "y_mojo": y.astype(np.float32)}
    assert_outputs_match(dict(cpu), cpu, dtype="float32", k=7, where="same")
    with pytest.raises(AssertionError, match="output y_mojo"):
        assert_outputs_match(
            {**cpu, "y_mojo": (x @ w + b).astype(np.float32)}, cpu, dtype="float32", k=7, where="no ReLU"
        )
    with pytest.raises(AssertionError, match="missing"):
        assert_outputs_match({"y": cpu["y"]}, cpu, dtype="float32", k=7, where="one output")


@pytest.mark.meta
@pytest.mark.mutant_for("S2.3-split")
def test_a_matmul_counted_as_one_kernel_is_caught():
    assert judges.assert_split_into_kernels([kernel("sm90_xmma_gemm_splitK"), kernel("splitKreduce_kernel")], "x")
    with pytest.raises(AssertionError, match=">= 2 kernels"):
        judges.assert_split_into_kernels([kernel("nvjet_sm90_tst_64x64")], "x")


@pytest.mark.meta
@pytest.mark.mutant_for("S6.4-no-overlap")
def test_streams_that_always_overlap_or_never_do_are_caught():
    timing.assert_overlap_needs_room(0.52, 0.99)
    with pytest.raises(AssertionError, match="fill every SM"):
        timing.assert_overlap_needs_room(0.52, 0.55)  # "two streams always run side by side"
    with pytest.raises(AssertionError, match="sliver"):
        timing.assert_overlap_needs_room(1.0, 0.99)  # "streams never overlap"


@pytest.mark.meta
@pytest.mark.mutant_for("S12.5-perf-portability")
def test_one_fast_dtype_or_one_best_tile_everywhere_is_caught():
    judges.assert_bf16_pays_where_units_are(12.0, matrix_units=True)
    judges.assert_bf16_pays_where_units_are(0.6, matrix_units=False)
    with pytest.raises(AssertionError, match="matrix units"):
        judges.assert_bf16_pays_where_units_are(1.1, matrix_units=True)  # "bf16 is no faster anywhere"
    with pytest.raises(AssertionError, match="not be much faster"):
        judges.assert_bf16_pays_where_units_are(8.0, matrix_units=False)  # "bf16 is fast everywhere"
    medians = {"skinny": {"small": 1.0, "large": 2.5}, "square": {"small": 9.0, "large": 1.0}}
    assert judges.assert_best_tile_differs(medians)["best"] == {"skinny": "small", "square": "large"}
    with pytest.raises(AssertionError, match="every shape"):
        judges.assert_best_tile_differs({"skinny": {"small": 2.5, "large": 1.0}, "square": medians["square"]})


def _sass(*ops, target="sm_90a", fmnmx="max"):
    return {"target": target, "ops": set(ops), "fmnmx": {fmnmx} if "FMNMX" in ops else set()}


@pytest.mark.meta
@pytest.mark.mutant_for("S10.4-gpu-target")
def test_a_custom_op_fused_away_or_built_for_the_cpu_is_caught():

    right = {
        "matmul_naive": _sass("FFMA", "FMNMX", "LDG", "STG"),
        "mogg_for_each_r2": _sass("FMNMX", "LDG", "STG"),
        "elementwise_r2": _sass("FADD", "LDG", "STG"),
    }
    judges.assert_custom_op_own_gpu_kernel(right, "sm_90")
    with pytest.raises(AssertionError, match="foreach kernel of its own"):  # the custom op fused into the matmul
        judges.assert_custom_op_own_gpu_kernel({k: v for k, v in right.items() if "for_each" not in k}, "sm_90")
    with pytest.raises(AssertionError, match="fuse into a matmul"):  # the built-in ReLU left unfused
        judges.assert_custom_op_own_gpu_kernel({**right, "matmul_naive": _sass("FFMA", "LDG", "STG")}, "sm_90")
    with pytest.raises(AssertionError, match="compiled for sm_90"):  # code for another GPU
        judges.assert_custom_op_own_gpu_kernel({k: {**v, "target": "sm_80"} for k, v in right.items()}, "sm_90")
    with pytest.raises(AssertionError, match="takes a min"):  # FMNMX with a true predicate: min(z, 0)
        minimum = {**right, "mogg_for_each_r1": _sass("FMNMX", "LDG", "STG", fmnmx="min")}
        judges.assert_custom_op_own_gpu_kernel(minimum, "sm_90")


@pytest.mark.meta
@pytest.mark.mutant_for("S6.4-sync-idle")
def test_a_chain_that_waits_anyway_is_caught():
    """S6.4-sync-idle's judgment: a forward that waits inside leaves the device as idle submitted
    ahead as waited for; one with nothing idle either way is no evidence either."""
    timing.assert_waits_leave_the_device_idle([0.095, 0.094, 0.09], [0.013, 0.013, 0.012], 0.05, 1.5)  # H200
    with pytest.raises(AssertionError, match="back to back"):  # the H200's hidden-sync forward
        timing.assert_waits_leave_the_device_idle([0.204, 0.19, 0.203], [0.117, 0.144, 0.114], 0.05, 1.5)
    with pytest.raises(AssertionError, match="leave the device idle"):  # no wait ever costs anything
        timing.assert_waits_leave_the_device_idle([0.012, 0.013, 0.012], [0.011, 0.012, 0.011], 0.05, 1.5)
    beside_others = [0.092, 0.182, 0.008]  # .ci/gpu: three other workers' kernels between ours, one chain clear
    timing.assert_waits_leave_the_device_idle([0.764, 0.757, 0.909], beside_others, 0.05, 1.5, shared=True)
    with pytest.raises(pytest.skip.Exception, match="inconclusive"):  # no chain clear of them
        timing.assert_waits_leave_the_device_idle([0.764, 0.757, 0.909], [0.092, 0.182, 0.09], 0.05, 1.5, shared=True)


@pytest.mark.meta
@pytest.mark.mutant_for("S6.4-sync-idle")
@pytest.mark.cuda
@pytest.mark.torch
@pytest.mark.gpu_needs(line=per_gpu.sync_idle_lines)
def test_a_forward_with_a_hidden_sync_is_caught_on_the_gpu():
    """On the GPU itself: a forward that checks its input's values on the host (a sync each call)
    leaves the device idle between steps even when the caller waits only once. The claim test's
    step, sized from the GPU (per_gpu.sync_step), and its lines; no line there, no judgment to test."""
    import torch

    profile = device_profile.current()
    lines = per_gpu.sync_idle_lines(profile)
    if lines is None:
        pytest.skip(f"S6.4-sync-idle has no line for {profile.family} ({profile.name}): its judgment is not made here")
    n = per_gpu.sync_step(profile)
    x = torch.ones(n, n, device="cuda")
    w = torch.full((n, n), 1 / n, device="cuda")

    def checked(y):
        if not torch.isfinite(y).all():  # bool() of a GPU tensor waits for it
            raise ValueError("non-finite input")
        return torch.relu(y @ w)

    checked(x)
    each, once = timing.idle_shares(checked, x, torch.cuda.synchronize, 50, 3)
    print("hidden sync: idle shares, waiting each", [round(v, 3) for v in each], "once", [round(v, 3) for v in once])
    with pytest.raises(AssertionError, match="back to back"):
        timing.assert_waits_leave_the_device_idle(each, once, *lines)


@pytest.mark.meta
@pytest.mark.mutant_for("S12.4-bottleneck")
def test_a_bottleneck_read_the_wrong_way_is_caught():
    """S12.4's judgment: a kernel at 90 % of DRAM and 30 % of the SMs is memory-bound, not compute-bound."""
    relu = kernel("triton_bias_relu", dram_pct=90.0, sm_pct=30.0, time_ns=1e6)
    judges.assert_bound_by([relu], "dram", "bias + ReLU", 1.5)
    with pytest.raises(AssertionError, match="sm at"):
        judges.assert_bound_by([relu], "sm", "bias + ReLU", 1.5)
    launch = kernel("tiny_helper", dram_pct=1.0, sm_pct=95.0, time_ns=1e3)
    judges.assert_bound_by([relu, launch], "dram", "the longest kernel decides", 1.5)
