"""Meta-tests run in-process: each check a claim test relies on rejects the wrong input it exists
to reject (a mutant of the checked artifact rather than of the implementation)."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence import device_profile, device_queue, per_gpu, timing
from stackcheck.evidence.timing import Measurement, call_shortfall, not_faster_somewhere
from stackcheck.stacks.available import need
from stackcheck.toolchains import counters, ir, mojo_build, tiles


@pytest.fixture(autouse=True)
def jax_on_the_cpu(request):
    """These checks are fed the CPU's programs and timings. On a GPU host JAX's default device is
    the GPU, whose pass names and costs differ (a 512^3 call is all overhead on an H200)."""
    if request.node.get_closest_marker("jax") is None:
        yield
        return
    jax = need("jax")
    with jax.default_device(jax.devices("cpu")[0]):
        yield


PTX = "\tsetp.gt.u64 \t%p1, %rd4, 2144;\n\t@%p1 bra \t$L__BB0_2;\n\tld.global.b32 \t%r4, [%rd11];\n"


@pytest.mark.meta
@pytest.mark.mutant_for("MC02")
def test_machine_code_check_rejects_ptx_passed_off_as_ir():
    """MC02's check, fed the wrong stack's text (PTX where an IR belongs), must fail."""
    with pytest.raises(AssertionError):
        judges.assert_ir_not_machine_code(PTX, "PTX posing as IR")


@pytest.mark.meta
@pytest.mark.mutant_for("MC12")
@pytest.mark.jax
def test_mlir_rejection_check_fails_on_stablehlo():
    """MC12's rejection, fed StableHLO instead of MAX's graph, must not hold: XLA parses StableHLO."""
    jax = need("jax")
    context, mlir_ir = ir.xla_mlir()
    stablehlo = jax.jit(lambda x: x + 1).lower(jax.numpy.ones(2)).as_text()
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"):
        with pytest.raises(Exception, match=r"Dialect `mo' not found"):
            mlir_ir.Module.parse(stablehlo, context=context)
    assert "add" in ir.op_sequence(stablehlo)


GUARD = "    if tid < ELEMENTS:"


@pytest.mark.meta
@pytest.mark.mutant_for("S10.5-mojo-gpu")
@pytest.mark.mojo
def test_ptx_check_catches_a_kernel_without_bounds_check(tmp_path):
    """S10.5's PTX check, on the program with its `if tid < ELEMENTS` removed (body dedented)."""
    lines = mojo_build.source("bias_relu_gpu.mojo").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(GUARD))
    mutant = lines[:at] + [line[4:] for line in lines[at + 1 : at + 3]] + lines[at + 3 :]
    src = tmp_path / "unguarded_bias_relu.mojo"
    src.write_text("\n".join(mutant) + "\n")
    ptx = mojo_build.kernel_ptx(src, "bias_relu", {"N": 33, "M": 65})
    assert mojo_build.guard_problems(ptx, 33 * 65), "the unguarded kernel passed the bounds-check inspection"


def _queue_mutant(tmp_path, old: str, new: str) -> list[dict]:
    """The trials of mojo/device_context_order.mojo with ``old`` replaced by ``new``, built and run here."""
    text = mojo_build.source(mojo_build.QUEUE_PROGRAM + ".mojo").read_text()
    assert text.count(old) == 1, f"the program no longer holds {old!r}"
    src = tmp_path / "queue_mutant.mojo"
    src.write_text(text.replace(old, new))
    exe = mojo_build.build_queue(src)
    return mojo_build.queue_trials(lambda name, build_here: (exe, mojo_build.runtime_environment()))


LAUNCH = "](x.unsafe_ptr(), grid_dim=ceildiv(ELEMENTS, BLOCK), block_dim=BLOCK)\n                ctx.enqueue_function["


@pytest.mark.meta
@pytest.mark.mutant_for("S10.5-order")
@pytest.mark.mojo
@pytest.mark.cuda
def test_order_check_catches_the_pair_submitted_the_other_way(tmp_path):
    """S10.5-order's check, on the program with X + 1 submitted before X * 2 in each pair."""
    found = _queue_mutant(tmp_path, f"times_two{LAUNCH}plus_one", f"plus_one{LAUNCH}times_two")
    with pytest.raises(AssertionError, match="not exactly"):
        device_queue.assert_submission_order(found, mojo_build.QUEUE_ROUNDS)


@pytest.mark.meta
@pytest.mark.mutant_for("S10.5-stale-copy")
@pytest.mark.mojo
@pytest.mark.cuda
def test_stale_copy_check_catches_a_read_after_synchronize(tmp_path):
    """S10.5-stale-copy's check, on the program that synchronizes before its early read."""
    early = "var early = host[ELEMENTS - 1]"
    found = _queue_mutant(tmp_path, early, f"ctx.synchronize()\n            {early}")
    with pytest.raises(AssertionError, match="held the copied values"):
        device_queue.assert_host_copy_stale_before_sync(found)


@pytest.mark.meta
@pytest.mark.mutant_for("S10.5-block")
def test_block_check_catches_the_example_block_fastest_everywhere():
    """S10.5-block's check, fed medians where 256 threads are the fastest at every element count
    (within 2 % of the best elsewhere at 2^20), then medians where 512 wins at 2^22 by 1.23x."""
    even = {2**20: {128: 1.02, 256: 1.0, 512: 1.01}, 2**22: {128: 1.5, 256: 1.0, 512: 1.1}}
    with pytest.raises(AssertionError, match="within 1.08x"):
        judges.assert_block_beaten(judges.block_beaten(even, 256), 256, 1.08)
    beaten = {**even, 2**22: {128: 1.5, 256: 1.23, 512: 1.0}}
    found = judges.assert_block_beaten(judges.block_beaten(beaten, 256), 256, 1.08)
    assert found["beaten_by"]["4194304"]["block"] == 512


@pytest.mark.meta
@pytest.mark.mutant_for("S10.5-block")
@pytest.mark.mojo
@pytest.mark.cuda
@pytest.mark.gpu_needs(line=per_gpu.block_line)
def test_block_check_catches_a_program_that_launches_one_block_size(tmp_path):
    """S10.5-block's check, on the program that launches 256-thread blocks whatever size it names:
    every result still right, and no block size beats another by the claim test's line for this GPU
    (none there: no judgment to test)."""
    profile = device_profile.current()
    line = per_gpu.block_line(profile)
    if line is None:
        pytest.skip(f"S10.5-block has no line for {profile.family} ({profile.name}): its judgment is not made here")
    text = mojo_build.source(mojo_build.BLOCKS_PROGRAM + ".mojo").read_text()
    launch = "grid_dim=ceildiv(n, blk), block_dim=blk"
    assert text.count(launch) == 3, f"the program no longer launches with {launch!r}"
    src = tmp_path / "one_block_size.mojo"
    src.write_text(text.replace(launch, "grid_dim=ceildiv(n, 256), block_dim=256"))
    exe = mojo_build.build_blocks(src)
    checks, series = mojo_build.block_sweep(lambda name, build_here: (exe, mojo_build.runtime_environment()))
    assert not any(c["mismatches"] for c in checks), "the one-size program still computes ReLU(A + b)"
    medians = {n: {b: m.median for b, m in by.items()} for n, by in series.items()}
    beaten = judges.block_beaten(medians, 256)
    n, ratio, by = judges.most_beaten(beaten)
    if ratio >= line:  # the same launches under every name: a gap this wide is another process's work
        noise = max(timing.scatter(series[n][256]), timing.scatter(series[n][by]))
        pytest.skip(f"inconclusive: one launch timed {ratio:.3f}x another at {n} elements (scatter {noise:.3f})")
    with pytest.raises(AssertionError, match=f"within {line}x"):
        judges.assert_block_beaten(beaten, 256, line)


@pytest.mark.meta
@pytest.mark.mutant_for("S7.2-memory-kind")
def test_memory_check_catches_a_copy_the_bus_cannot_carry():
    """S7.2-memory-kind's check, fed the H200's bus (6016 bits at 3201 MHz, a 4.81 TB/s peak) and a
    copy timed on twice its bytes (7.9 TB/s), then a GDDR card's bus with a copy it can carry."""
    from stackcheck.evidence import hardware

    with pytest.raises(AssertionError, match="not the memory it ran through"):
        hardware.assert_bus_describes_memory(6016, 3_201_000, 7.9e12)
    assert hardware.assert_bus_describes_memory(384, 10_501_000, 0.9e12)["peak_gb_s"] == 1008
    assert hardware.memory_kind(384, integrated=False) != "HBM"


@pytest.mark.meta
@pytest.mark.mutant_for("S9.3-version-names")
def test_version_check_catches_one_version_read_twice():
    """S9.3-version-names's check, fed one JAX's printout as both versions' (what a run that put the
    older JAX behind the installed one on the path would give), then a printout without a matmul."""
    run = {
        "version": "0.10.2",
        "jaxpr": ["add", "dot_general", "jit", "max"],
        "stablehlo": ["stablehlo.add", "stablehlo.dot_general", "stablehlo.maximum"],
        "hlo_names": ["dot_general", "broadcast_maximum_fusion"],
        "hlo_opcodes": ["add", "dot", "fusion", "maximum"],
    }
    with pytest.raises(AssertionError, match="the same primitive and instruction names"):
        judges.assert_names_vary_meaning_stays(run, dict(run))
    older = {**run, "version": "0.4.38", "jaxpr": ["add", "dot_general", "pjit", "max"]}
    with pytest.raises(AssertionError, match="lacks"):
        judges.assert_names_vary_meaning_stays({**older, "hlo_opcodes": ["add", "fusion", "maximum"]}, run)


@pytest.mark.meta
@pytest.mark.mutant_for("S7.3-tpu")
@pytest.mark.jax
def test_tpu_hlo_reader_finds_a_library_matmul_and_an_unfused_relu():
    """S7.3-tpu's reader, fed a GPU-like module (the matmul a cuBLAS call, ReLU a lone maximum): a
    library call and no ReLU fusion; fed the CPU's compiled forward: a dot and a fused maximum."""
    jax = need("jax")
    gpu_like = (
        "ENTRY %main (x: f32[2,3], w: f32[3,2]) -> f32[2,2] {\n"
        '  %gemm = f32[2,2]{1,0} custom-call(%x, %w), custom_call_target="__cublas$gemm"\n'
        "  ROOT %max = f32[2,2]{1,0} maximum(%gemm, %gemm)\n}\n"
    )
    found = ir.tpu_matmul_and_relu(gpu_like)
    assert found["library_calls"] and not found["matmul_ops"] and not found["relu_fusions"], found
    x = np.ones((4, 3), np.float32)
    hlo = jax.jit(lambda x, w: jax.nn.relu(x @ w + 1)).lower(x, x.T).compile().as_text()
    found = ir.tpu_matmul_and_relu(hlo)
    assert found["matmul_ops"] and found["relu_fusions"] and not found["library_calls"], found


@pytest.mark.meta
@pytest.mark.mutant_for("S7.2-l1")
def test_l1_check_catches_a_small_table_missing_l1():
    """S7.2-l1's check, fed readings where the small table's gathers miss L1 as the large one's do."""
    missing = [counters.Kernel("indexSelectLargeIndex", {"l1_hit": 10.0, "l1_miss": 990.0, "time_ns": 1.0})]
    hitting = [counters.Kernel("indexSelectLargeIndex", {"l1_hit": 900.0, "l1_miss": 100.0, "time_ns": 1.0})]
    judges.assert_l1_keeps_what_fits(hitting, missing, 0.5, 0.2)  # the right readings pass
    with pytest.raises(AssertionError, match="not served from L1"):
        judges.assert_l1_keeps_what_fits(missing, missing, 0.5, 0.2)
    with pytest.raises(AssertionError, match="hit L1 anyway"):
        judges.assert_l1_keeps_what_fits(hitting, hitting, 0.5, 0.2)


@pytest.mark.meta
@pytest.mark.mutant_for("S10.4-width")
@pytest.mark.mojo
def test_width_check_catches_code_built_at_another_width():
    """S10.4-width's check, fed the IR of the width-4 build as if it were the width-16 one."""
    src = mojo_build.source("simd_relu.mojo")
    narrow = mojo_build.build(src, emit="llvm", sizes={"WIDTH": 4}).read_text()
    with pytest.raises(AssertionError, match="width=16"):
        judges.assert_vector_width(narrow, "relu_block", 16)


@pytest.mark.meta
@pytest.mark.mutant_for("S10.3-no-backward")
def test_no_backward_check_catches_an_op_with_a_gradient():
    """S10.3-no-backward's check, fed an op that autograd differentiates (torch's relu copied into out)."""
    torch = need("torch")
    from stackcheck.evidence.gradients import assert_no_gradient_through

    def differentiable(out, z):
        out.copy_(torch.relu(z))

    with pytest.raises(AssertionError, match="a gradient flows"):
        assert_no_gradient_through(differentiable, torch.ones(3), torch.empty(3))


@pytest.mark.meta
@pytest.mark.mutant_for("S7.1-execution-model")
def test_execution_model_check_catches_programs_run_one_by_one():
    """S7.1's GPU check, fed what programs run one after another leave (as Triton's interpreter runs
    them, or a TPU its grid steps): every plain add counted."""
    judges.assert_programs_run_at_once(900, 65536, 65536, 0.5)  # what a GPU leaves passes
    with pytest.raises(AssertionError, match="did not run at once"):
        judges.assert_programs_run_at_once(65536, 65536, 65536, 0.5)


@pytest.mark.meta
@pytest.mark.mutant_for("S6.4-order")
@pytest.mark.cuda
@pytest.mark.torch
def test_serial_queue_check_catches_a_pair_that_overlapped():
    """S6.4-order's one-queue check, fed the same pair run on two streams (where the kernels overlap)."""
    torch = need("torch")
    from stackcheck.evidence.timing import assert_one_queue_serial, cuda_event_timer, interleaved, on_two_streams, ratio

    one = lambda: torch.cuda._sleep(2_000_000)  # noqa: E731
    runs = interleaved(
        {"one": cuda_event_timer(one), "two": cuda_event_timer(on_two_streams(one, one))}, "device-events", 9
    )
    with pytest.raises(AssertionError, match="overlapped"):
        assert_one_queue_serial(ratio(runs["two"], runs["one"]), 1.6)


def _runs(**medians_ms):
    return {name: Measurement(name, "device-events", [ms / 1e3] * 5) for name, ms in medians_ms.items()}


@pytest.mark.meta
@pytest.mark.mutant_for("MC10")
@pytest.mark.mutant_for("S10.4-not-faster")
def test_mc10_decision_needs_a_regime_where_the_kernel_is_not_faster():
    """MC10's and S10.4-not-faster's decision, on a custom kernel that is faster everywhere, finds
    nothing to pass on."""
    everywhere_faster = {"tiny": _runs(triton=1.0, eager=3.0), "large": _runs(triton=1.0, eager=2.0)}
    assert not_faster_somewhere(everywhere_faster, "triton", 1.1, {"tiny": 1.0, "large": 1.0}) == []
    slower_when_tiny = {"tiny": _runs(triton=5.0, eager=3.0), "large": _runs(triton=1.0, eager=2.0)}
    assert not_faster_somewhere(slower_when_tiny, "triton", 1.1, {"tiny": 1.0, "large": 1.0}) == ["tiny"]
    assert not_faster_somewhere(slower_when_tiny, "triton", 1.1, {"tiny": 1.5, "large": 1.0}) == [], (
        "a regime noisier than the margin decides nothing"
    )


@pytest.mark.meta
@pytest.mark.mutant_for("Q2")
def test_q2_fidelity_excuses_only_a_shortfall_within_the_scatter():
    """Q2's fidelity check on a shared GPU: the H200 once read a synced timer at 0.45 of the suite's
    clock with both series scattered over 2x (inconclusive); a timer that never waits reads 0.01 of
    it, which no scatter of this size excuses (it fails)."""
    noisy = [Measurement("host-sync", "host-sync", [ms / 1e3 for ms in (8, 12, 21.7, 22, 40, 45, 50)])]
    with pytest.raises(pytest.skip.Exception, match="inconclusive"):
        call_shortfall(0.45, 0.5, noisy, {})
    call_shortfall(0.01, 0.5, noisy, {})  # no skip: the assertion after it fails the timer
    quiet = [Measurement("host-sync", "host-sync", [0.02] * 7)]
    call_shortfall(0.45, 0.5, quiet, {})


@pytest.mark.meta
@pytest.mark.mutant_for("S12.5-perf-portability")
@pytest.mark.triton
def test_s12_5_fit_check_rejects_a_tile_every_device_takes():
    """S12.5's device check, fed a small tile (16 or 32 KiB everywhere), finds nothing to show."""
    from stackcheck.judges import assert_tile_fits_some_devices_only
    from stackcheck.toolchains.triton_kernels import Tile, tile_compiled_sm90

    limits = {75: 64 * 1024, 90: 227 * 1024}
    shared = {arch: tile_compiled_sm90(Tile(64, 64, 32), "fp32", "ieee", arch=arch).metadata.shared for arch in limits}
    with pytest.raises(AssertionError, match="fits every device"):
        assert_tile_fits_some_devices_only(shared, limits)


@pytest.mark.meta
@pytest.mark.mutant_for("S5.1-buffers")
@pytest.mark.jax
def test_s5_1_buffer_check_rejects_a_chain_whose_intermediates_all_live():
    """S5.1-buffers' check, fed a chain that sums every step's Y at the end (all five live at once,
    so nothing can be reused), refuses it."""
    from stackcheck.judges import assert_buffers_reused

    jax = need("jax")

    def all_live(x, w, b):
        ys = []
        for _ in range(6):
            x = jax.nn.relu(x @ w + b)
            ys.append(x)
        return sum(y * (i + 1) for i, y in enumerate(reversed(ys)))

    x, w, b = jax.numpy.ones((64, 48)), jax.numpy.ones((48, 48)) / 48, jax.numpy.ones(48)
    temp = jax.jit(all_live).lower(x, w, b).compile().memory_analysis().temp_size_in_bytes
    with pytest.raises(AssertionError, match="reused"):
        assert_buffers_reused(temp, 5, 64 * 48 * 4)


@pytest.mark.meta
@pytest.mark.mutant_for("S5.1-passes")
@pytest.mark.jax
def test_s5_1_stage_check_needs_the_passes_and_their_order(tmp_path):
    """S5.1-passes' check refuses a dump of the first and last module only (no pass shows), and the
    real pass dump with its library call moved before the simplification."""
    jax = need("jax")

    def line(x, w, b):
        return jax.nn.relu(x @ w + b)

    args = (jax.numpy.ones((8, 4)), jax.numpy.ones((4, 3)), jax.numpy.ones(3))
    with pytest.raises(AssertionError, match="every stage"):
        judges.assert_xla_stages_in_order(ir.xla_dump(line, *args, folder=tmp_path / "plain"))
    names = ir.xla_pass_dump(line, *args, folder=tmp_path / "passes")
    library = next(n for n in names if ir.XLA_STAGES["library call selection"].search(n))
    with pytest.raises(AssertionError, match="order"):
        judges.assert_xla_stages_in_order([library] + [n for n in names if n != library])


@pytest.mark.meta
@pytest.mark.mutant_for("S10.4-out-types")
def test_s10_4_out_types_check_refuses_an_inferred_type():
    """S10.4-out-types' check refuses a stack that infers the output type from the input (what a
    shape function would give), and a test that declares only the input's own type."""
    from stackcheck.judges import assert_output_type_declared

    given = ("float32", [2, 3])
    inferred = {("float32", (2, 5)): ("float32", [2, 3]), "built-in relu": ("float32", [2, 3])}
    with pytest.raises(AssertionError, match="never inferred"):
        assert_output_type_declared(given, inferred)
    with pytest.raises(AssertionError, match="other than the input"):
        assert_output_type_declared(given, {("float32", (2, 3)): given, "built-in relu": given})


@pytest.mark.meta
@pytest.mark.mutant_for("S9.6-host-overhead")
@pytest.mark.jax
def test_s9_6_overhead_check_refuses_a_call_that_is_work():
    """S9.6's check, fed a 'small' call an eighth of the large one (512^3 against 1024^3, both timed
    here), finds its time mostly work and refuses it."""
    from stackcheck.evidence import timing
    from stackcheck.judges import assert_host_overhead_dominates

    jax = need("jax")
    line = jax.jit(lambda x, w: jax.nn.relu(x @ w))
    args = {n: [jax.numpy.ones((n, n), jax.numpy.float32)] * 2 for n in (512, 1024)}
    timers = {n: timing.host_timer(lambda a=a: line(*a), jax.block_until_ready) for n, a in args.items()}
    runs = timing.interleaved(timers, "host-sync", trials=9, warmup=2)
    try:
        assert_host_overhead_dominates((512**3, runs[512].median), (1024**3, runs[1024].median))
    except AssertionError as refused:
        assert "host overhead" in str(refused)
        return
    # Work-bound, the 512^3 call takes an eighth of the 1024^3 one; the check lets it pass only when it
    # read over twice that. Within the series' own scatter (a loaded CI machine) that cannot decide.
    slower = runs[512].median / (runs[1024].median / 8)
    noise = max(timing.scatter(m) for m in runs.values())
    found = {"slower_than_work": round(slower, 2), "scatter": round(noise, 2)}
    found.update({n: m.summary() for n, m in runs.items()})
    if slower / noise < 2:
        pytest.skip(f"inconclusive: the 512^3 call's slowdown is within the series' scatter: {found}")
    pytest.fail(f"S9.6's check let a call that is work pass as host overhead: {found}")


@pytest.mark.meta
@pytest.mark.mutant_for("S9.3-backends")
@pytest.mark.jax
def test_s9_3_backend_check_refuses_one_backend_twice():
    """S9.3-backends' checks, fed the CPU's HLO for both backends (what a test that never left the CPU
    would read), or an HLO that lost its matmul, refuse it: the names, and the optimizations (§12.5)."""
    jax = need("jax")
    args = (jax.numpy.ones((64, 32)), jax.numpy.ones((32, 16)), jax.numpy.ones(16))
    hlo = jax.jit(lambda x, w, b: jax.nn.relu(x @ w + b)).lower(*args).compile().as_text()
    with pytest.raises(AssertionError, match="their own way"):
        judges.assert_backends_name_the_matmul_differently(
            {"cpu": ir.hlo_matmul_op(hlo), "cuda": ir.hlo_matmul_op(hlo)}
        )
    no_matmul = jax.jit(lambda x: jax.nn.relu(x)).lower(args[0]).compile().as_text()
    with pytest.raises(AssertionError, match="holds the matmul"):
        judges.assert_backends_name_the_matmul_differently(
            {"cpu": ir.hlo_matmul_op(hlo), "cuda": ir.hlo_matmul_op(no_matmul)}
        )
    with pytest.raises(AssertionError, match="optimized the line alike"):
        judges.assert_backends_optimize_differently(
            {d: ir.hlo_optimization(hlo, "f32[64,16]") for d in ("cpu", "cuda")}
        )


@pytest.mark.meta
@pytest.mark.mutant_for("S3.2-variants")
@pytest.mark.jax
def test_s3_2_check_refuses_variants_compiled_without_fusion():
    """S3.2's check, fed the same lines compiled with XLA's fusion pass switched off (every
    elementwise op its own kernel: GELU takes many more than ReLU), refuses them."""
    jax = need("jax")
    args = (jax.numpy.ones((64, 32)), jax.numpy.ones((32, 16)), jax.numpy.ones(16))
    lines = {"relu+bias": lambda x, w, b: jax.nn.relu(x @ w + b), "gelu": lambda x, w, b: jax.nn.gelu(x @ w)}
    unfused = {"xla_disable_hlo_passes": "fusion"}
    found = {}
    for name, line in lines.items():
        lowered = jax.jit(line).lower(*args)
        found[name] = {
            "matmuls": 1,
            "kernels": ir.hlo_kernel_kinds(lowered.compile(unfused).as_text()),
            "elementwise_ops": ir.elementwise_op_count(lowered.as_text()),
        }
    with pytest.raises(AssertionError, match="one fused elementwise kernel"):
        judges.assert_variants_fuse_alike(found)


def _second_matmul_used(jax, p, q, r):
    return jax.nn.relu(p @ q + r) + 0 * jax.numpy.sin(p @ (q + 1))  # 0 * it is kept: it could be NaN


def _dead_matmul_repeats_the_live_one(jax, p, q, r):
    unused = jax.numpy.sin(p @ q)  # CSE alone merges it with the live p @ q
    del unused
    return jax.nn.relu(p @ q + r)


@pytest.mark.meta
@pytest.mark.mutant_for("S5.1-dce")
@pytest.mark.jax
@pytest.mark.parametrize(
    "program, refused",
    [
        (_second_matmul_used, "unused matmul and its sin must be gone"),
        (_dead_matmul_repeats_the_live_one, "2 matmuls of 1 different operand pairs"),
    ],
    ids=["second-matmul-used", "dead-repeats-live"],
)
def test_dce_check_refuses_what_is_not_dead_code_elimination(program, refused):
    """S5.1-dce's check must fail on a program whose second matmul feeds the output (it counts what the
    compiler left, not what was written), and on a dead matmul that repeats the live one (issue 24:
    common-subexpression elimination alone would leave one dot)."""
    jax = need("jax")
    x, w, b = (jax.numpy.ones(s) for s in ((8, 4), (4, 3), (3,)))
    stages = ir.jax_stages(lambda p, q, r: program(jax, p, q, r), x, w, b)
    with pytest.raises(AssertionError, match=refused):
        judges.assert_dead_matmul_removed(stages["jaxpr"], stages["hlo"])


@pytest.mark.meta
@pytest.mark.mutant_for("S5.1-constfold")
@pytest.mark.jax
def test_constant_folding_check_fails_when_w_is_a_parameter():
    """S5.1-constfold's check, on W * 2 of a W passed in (nothing to fold), must fail."""
    jax = need("jax")
    x, w, b = (jax.numpy.ones(s) for s in ((8, 4), (4, 3), (3,)))
    stages = ir.jax_stages(lambda p, q, r: jax.nn.relu(p @ (q * 2) + r), x, w, b)
    with pytest.raises(AssertionError, match="computed ahead of time"):
        judges.assert_constant_folded(stages["stablehlo"], stages["hlo"])


@pytest.mark.meta
@pytest.mark.mutant_for("S8.3-export-vs-dynamo")
def test_graph_level_check_fails_when_both_graphs_are_the_export():
    """S8.3's check, handed torch.export's targets twice (no Dynamo graph at all), must fail."""
    exported = ["aten.matmul.default", "aten.add.Tensor", "aten.relu.default"]
    with pytest.raises(AssertionError, match="Python-level"):
        judges.assert_export_and_dynamo_levels(exported, exported, (["matmul", "add", "relu"],) * 2)


@pytest.mark.meta
@pytest.mark.mutant_for("Q1")
def test_q1_needs_fewer_compiled_buffers_than_eager_writes():
    """Q1's check: a compiled forward that stores as many [N, M] results as eager writes fails, and an
    eager run that writes one (nothing to drop) is no pass: it skips."""
    with pytest.raises(AssertionError, match="fewer than eager"):
        judges.assert_compiled_stores_fewer(["mm", "add", "relu"], [("buf0", (8, 8)), ("buf1", (8, 8))])
    with pytest.raises(pytest.skip.Exception):
        judges.assert_compiled_stores_fewer(["addmm"], [("buf0", (8, 8))])
    assert judges.assert_compiled_stores_fewer(["addmm", "relu"], [("buf0", (8, 8))])


@pytest.mark.meta
@pytest.mark.mutant_for("MC09")
def test_mc09_fails_where_compiling_pays_for_itself():
    """MC09's check, on a compile that pays back within the calls (a cheap first call, a much faster
    steady state), must fail; a first call that dominates passes."""
    with pytest.raises(AssertionError, match="paid for itself"):
        judges.assert_compile_not_paid_back(first=6e-3, eager=1e-3, compiled=1e-4, calls=16)
    assert judges.assert_compile_not_paid_back(first=0.5, eager=1e-4, compiled=5e-5, calls=16)


@pytest.mark.meta
@pytest.mark.mutant_for("S9.6-put-async")
def test_a_put_that_returns_once_copied_is_caught():
    """S9.6-put-async's check, on a synchronous put (each call returns once its copy is done, the wait
    adds nothing), must fail; the H200's readings (0.3 ms returned of 12 ms) pass."""
    copied = [12e-3, 11.8e-3, 12.2e-3, 12.1e-3, 11.9e-3]
    with pytest.raises(AssertionError, match="returned only once its copy was done"):
        judges.assert_put_returns_first(copied, [c + 2e-6 for c in copied])
    assert judges.assert_put_returns_first([3e-4, 4e-4, 3.5e-4, 3.1e-4, 3.2e-4], copied)


@pytest.mark.meta
@pytest.mark.mutant_for("S6.4-order")
def test_a_race_is_seen_only_in_a_stale_read():
    """S6.4-order's race half: reads that all equal what the producer wrote show no race (the test
    says inconclusive, never verified); one stale read shows it."""
    from stackcheck.evidence import timing

    assert not timing.race_seen([4.0, 4.0, 4.0], 4.0)
    assert timing.race_seen([4.0, 0.0, 4.0], 4.0)


@pytest.mark.meta
@pytest.mark.mojo
@pytest.mark.mutant_for("S10.5-mojo-gpu")
def test_the_courses_program_without_its_guard_is_caught(tmp_path):
    """The course's §10.5 program at 33 x 65 with its `if tid < element_count:` made always true: the
    guard check of its kernel's PTX must fail."""
    pytest.importorskip("sybil", reason="the course's listings are read with Sybil (pip install sybil)")
    from stackcheck.mojo_build import course_programs

    source = course_programs(tmp_path)[mojo_build.resized_name(mojo_build.COURSE_RESIZED)]
    text = source.read_text(encoding="utf-8")
    unguarded = text.replace("    if tid < element_count:\n", "    if tid >= 0:\n")
    assert unguarded != text, "the §10.5 program's guard line moved: update this mutant"
    source.write_text(unguarded, encoding="utf-8")
    sizes = mojo_build.COURSE_RESIZED
    assert mojo_build.guard_problems(mojo_build.kernel_ptx(source, "bias_relu"), sizes["N"] * sizes["M"])


@pytest.mark.meta
@pytest.mark.mutant_for("S6.5-regimes")
def test_a_wall_clock_taken_for_the_kernels_time_is_caught():
    """§8.4's check: kernels that take the whole wall clock (the two series the same) must fail."""
    from stackcheck.evidence import timing

    same = [40e-6, 41e-6, 40e-6, 42e-6, 40e-6]
    runs = {
        "host-sync": Measurement("w", "host-sync", same),
        "profiled-kernels": Measurement("k", "profiled-kernels", same),
    }
    with pytest.raises(AssertionError, match="far more than its kernel"):
        timing.assert_wall_is_not_the_kernel(runs, 0.6)
    runs["profiled-kernels"] = Measurement("k", "profiled-kernels", [4e-6] * 5)
    assert timing.assert_wall_is_not_the_kernel(runs, 0.6)["kernel_over_wall"] == 0.1


@pytest.mark.meta
@pytest.mark.mutant_for("S10.5-mojo-gpu")
def test_a_program_that_never_reached_the_device_is_caught():
    """§10.5's runtime-error check: a run that took the "No compatible GPU found" branch, or that
    exited cleanly, must fail it; an exception at run time passes."""
    import subprocess

    def done(code, out, err=""):
        return subprocess.CompletedProcess([], code, out, err)

    with pytest.raises(AssertionError, match="compile-time branch"):
        mojo_build.runtime_failure(done(0, "No compatible GPU found\n"))
    with pytest.raises(AssertionError, match="fail at run time"):
        mojo_build.runtime_failure(done(0, "bias_relu check passed\n"))
    assert mojo_build.runtime_failure(done(1, "", "Unhandled exception caught during execution: no device"))


@pytest.mark.meta
@pytest.mark.mutant_for("S5.2-fma")
@pytest.mark.triton
def test_fma_check_fails_when_the_fused_kernel_is_a_mul_add():
    """S5.2-fma's check, handed the a * b + c kernel's PTX as the 'fused' one, must fail."""
    from stackcheck.toolchains import triton_kernels

    mul_add = triton_kernels.mul_add_ptx_sm90()
    with pytest.raises(AssertionError):
        judges.assert_fusion_is_not_fma(mul_add, mul_add)


@pytest.mark.meta
@pytest.mark.mutant_for("S9.7-llo")
def test_llo_check_fails_on_a_dump_with_an_llo_stage():
    """S9.7-llo's check, on a dump listing that holds an LLO stage (as a TPU's would), must fail."""
    names = [
        "module_0001.jit_forward.before_optimizations.txt",
        "module_0001.jit_forward.llo.txt",
        "module_0001.jit_forward.fusion_kernel_module.ir-with-opt.ll",
    ]
    with pytest.raises(AssertionError, match="no LLO stage"):
        judges.assert_llvm_not_llo(names)


@pytest.mark.meta
@pytest.mark.mutant_for("S10.3-compile-init")
def test_same_model_check_fails_when_one_output_differs():
    """S10.3's check, on two output sets that differ in one element of Y, must fail."""
    import numpy as np

    by_load = {"a": np.ones((2, 2), np.float32), "y": np.zeros((2, 2), np.float32)}
    by_init = {"a": by_load["a"].copy(), "y": by_load["y"].copy()}
    by_init["y"][1, 0] = np.float32(1e-7)
    with pytest.raises(AssertionError, match="differing"):
        judges.assert_same_model(by_init, by_load)


@pytest.mark.meta
@pytest.mark.mutant_for("S4.2-ir-levels")
@pytest.mark.triton
def test_stages_out_of_order_are_caught():
    """The PTX handed in as the top-level IR (stages swapped) must fail the lowering check."""
    from stackcheck.toolchains.triton_kernels import Tile, tile_compiled_sm90

    asm = ir.triton_stages(tile_compiled_sm90(Tile(32, 32, 16), "fp32", "ieee"))
    judges.assert_lowering_levels(asm)
    with pytest.raises(AssertionError, match="do not lower"):
        judges.assert_lowering_levels({**asm, "ttir": asm["ptx"], "ptx": asm["ttir"]})
    with pytest.raises(AssertionError, match="do not lower"):  # MC02: PTX taken for the machine code
        judges.assert_lowering_levels({**asm, "sass": asm["ptx"]})


@pytest.mark.meta
@pytest.mark.mutant_for("S10.4-special")
def test_a_mask_multiply_relu_is_caught_on_nan_and_negatives():
    """z * (z > 0), the custom op's plausible rewrite, gives NaN at NaN and -0 at negatives."""
    import numpy as np

    from stackcheck.evidence.numerics import assert_relu_by_select

    z = np.array([np.nan, -1.5, 0.0, 2.5, np.inf, -np.inf], np.float32)
    assert_relu_by_select(z, np.where(z > 0, z, np.float32(0)), what="select")
    with np.errstate(invalid="ignore"):
        with pytest.raises(AssertionError, match="not select"):
            assert_relu_by_select(z, z * (z > 0), what="mask multiply")


@pytest.mark.meta
@pytest.mark.mutant_for("S5.1-target")
@pytest.mark.triton
def test_a_tile_off_the_tensor_cores_is_caught():
    """The same tile in fp32 with TF32 off runs on FFMA: no wgmma, no HGMMA."""
    from stackcheck.toolchains.triton_kernels import Tile, tile_compiled_sm90

    stages = ir.triton_stages(tile_compiled_sm90(Tile(64, 64, 32), "fp32", "ieee"))
    with pytest.raises(AssertionError, match="wgmma"):
        judges.assert_warpgroup_mma(stages["ptx"], stages["sass"])
    bf16 = ir.triton_stages(tile_compiled_sm90(Tile(64, 64, 32), "bf16"))
    with pytest.raises(AssertionError, match="HGMMA"):
        judges.assert_warpgroup_mma(bf16["ptx"], stages["sass"])


@pytest.mark.meta
@pytest.mark.mutant_for("S5.1-target")
@pytest.mark.torch_compile
def test_a_scalar_cpu_kernel_is_caught():
    """Inductor told to emit no SIMD (cpp.simdlen = 1) writes a scalar loop: the check must fail."""
    torch = need("torch")
    from torch._inductor import config

    from stackcheck.toolchains.inductor import assert_vectorized, compile_and_read

    x, w, b = torch.ones(64, 32), torch.ones(32, 16), torch.ones(16)
    with config.patch({"cpp.simdlen": 1}):
        scalar = compile_and_read(lambda x, w, b: torch.relu(x @ w + b), x, w, b)
    with pytest.raises(AssertionError, match="Vectorized"):
        assert_vectorized(scalar)


@pytest.mark.meta
@pytest.mark.mutant_for("S5.2-too-big")
@pytest.mark.triton
def test_a_fusion_that_never_spills_or_never_loses_is_caught():
    """The narrowest fused pair passed off as the grown one; a spilling fusion timed at its pair's speed."""
    from stackcheck.toolchains import fused_mlp
    from stackcheck.toolchains.triton_kernels import ptxas_usage

    fits = ptxas_usage(fused_mlp.compiled_sm90(64))
    with pytest.raises(AssertionError, match="spill"):
        judges.assert_fusion_spills_as_it_grows({64: fits, 512: fits})
    with pytest.raises(AssertionError, match="loses"):
        judges.assert_grown_fusion_loses(1.0, per_gpu.FUSION_LOSES[device_profile.ANY_GPU])


@pytest.mark.meta
@pytest.mark.mutant_for("S10.3-compile-init")
def test_compile_init_numbers_catch_a_z_without_its_bias():
    """S10.3's numeric half, on outputs whose Z lacks b (the structural half catches biasless_z first,
    before anything compiles): A, Z and Y are each compared, not Y alone."""
    from stackcheck.evidence.numerics import assert_outputs_match, make_inputs, reference_forward

    x, w, b = make_inputs(5, 7, 3, seed=101)
    a = x.astype(np.float64) @ w
    outputs = {"a": a, "z": a, "y": reference_forward(x, w, b)}
    references = {"a": a, "z": a + b, "y": reference_forward(x, w, b)}
    with pytest.raises(AssertionError, match="output z"):
        assert_outputs_match(outputs, references, dtype="float32", k=7, where="A, Z, Y by compile + init")


@pytest.mark.meta
@pytest.mark.mutant_for("S9.4-relu-call")
@pytest.mark.jax
def test_relu_call_check_fails_for_a_maximum_written_inline():
    """S9.4's check, on jnp.maximum (no call to a relu function in StableHLO), must fail."""
    jax = need("jax")
    stages = ir.jax_stages(lambda v: jax.numpy.maximum(v, 0) * 2, jax.numpy.ones((4, 6)))
    with pytest.raises(AssertionError, match="StableHLO calls no relu function"):
        judges.assert_relu_call_inlined(stages["stablehlo"], stages["hlo"])


@pytest.mark.meta
@pytest.mark.mutant_for("S6.1-donate")
def test_donation_check_fails_when_y_gets_a_buffer_of_its_own():
    """S6.1-donate's check, on addresses where the donated X was consumed but Y went elsewhere (a copy),
    and on a run where X was not consumed, must fail."""
    from stackcheck.judges import assert_donated_buffer_reused

    assert_donated_buffer_reused((1, 1, True), (1, 2, False))
    with pytest.raises(AssertionError, match="donated: Y in X's buffer"):
        assert_donated_buffer_reused((1, 2, True), (1, 2, False))
    with pytest.raises(AssertionError, match="donated: Y in X's buffer"):
        assert_donated_buffer_reused((1, 1, False), (1, 2, False))


@pytest.mark.meta
@pytest.mark.mutant_for("S4.1-loops")
def test_loop_check_fails_when_the_loop_stays_in_python_or_fori_unrolls():
    """S4.1-loops' check, on jaxprs where the 'Python loop' kept one matmul (a loop that never ran the
    body three times) or where fori_loop was unrolled, must fail."""
    one, three, loop = {"dot_general": 1}, {"dot_general": 3}, {"while": 1, "dot_general": 1}
    judges.assert_unrolled_and_looped(one, three, loop, 3)
    with pytest.raises(AssertionError, match="unrolls into 3 copies"):
        judges.assert_unrolled_and_looped(one, one, loop, 3)
    with pytest.raises(AssertionError, match="fori_loop keeps one loop"):
        judges.assert_unrolled_and_looped(one, three, three, 3)


@pytest.mark.meta
@pytest.mark.mutant_for("S6.2-shared-memory")
def test_shared_memory_check_fails_for_a_copy():
    """S6.2's check, on torch.tensor(array) (a copy), must fail."""
    torch = need("torch")
    array = np.ones((2, 2), np.float32)
    copy = torch.tensor(array)
    array[0, 0] = 5.0
    from stackcheck.judges import assert_same_memory

    with pytest.raises(AssertionError, match="copies at"):
        assert_same_memory(array, {"torch": copy.data_ptr()}, {"torch": float(copy[0, 0])})


@pytest.mark.meta
@pytest.mark.mutant_for("S10.1-not-python")
def test_not_python_check_fails_when_mojo_accepts_the_dynamic_source():
    """S10.1's check, on a build that succeeded (a compiler that took the type change), must fail."""
    from stackcheck.judges import assert_python_is_not_mojo

    assert_python_is_not_mojo("now a string", (1, "error: cannot implicitly convert"), (0, ""))
    with pytest.raises(AssertionError, match="must reject the variable that changes type"):
        assert_python_is_not_mojo("now a string", (0, ""), (0, ""))


@pytest.mark.meta
@pytest.mark.mutant_for("S11.2-contract")
@pytest.mark.triton
def test_the_wrapper_contract_check_fails_when_the_listing_loses_its_device_check():
    """S11.2-contract's judge, fed the course's listing with its CUDA check deleted (CPU tensors then
    reach Triton's launcher, or its interpreter), must fail: a refusal counts only before a launch."""
    from stackcheck.course.wrapper import assert_refused, course_wrapper, listing_source

    torch = need("torch")
    lines = listing_source().splitlines()
    check = next(i for i, line in enumerate(lines) if 'a.device.type != "cuda"' in line)
    wrapper, launches = course_wrapper("\n".join(lines[:check] + lines[check + 2 :]))
    a, b = torch.ones(3, 4), torch.ones(4)
    with pytest.raises(AssertionError):
        assert_refused(wrapper, launches, (a, b), "CPU tensors", ("CUDA",))


@pytest.mark.meta
@pytest.mark.mutant_for("S9.3-hlo")
@pytest.mark.jax
def test_s9_3_hlo_check_refuses_one_ir_shown_as_the_other():
    """S9.3-hlo's check, fed StableHLO where XLA's HLO belongs (what reading lower() twice gives), or
    HLO where StableHLO belongs, or an HLO whose ReLU was left out of the fusion, refuses it."""
    jax = need("jax")
    args = (jax.numpy.ones((64, 32)), jax.numpy.ones((32, 16)), jax.numpy.ones(16))
    lowered = jax.jit(lambda x, w, b: jax.nn.relu(x @ w + b)).lower(*args)
    stablehlo, hlo = lowered.as_text(), lowered.compile().as_text()
    judges.assert_stablehlo_and_hlo_are_different_irs(stablehlo, hlo)
    with pytest.raises(AssertionError, match="not MLIR"):
        judges.assert_stablehlo_and_hlo_are_different_irs(stablehlo, stablehlo)
    with pytest.raises(AssertionError, match="MLIR module MLIR's parser reads"):
        judges.assert_stablehlo_and_hlo_are_different_irs(hlo, hlo)
    no_relu = jax.jit(lambda x, w, b: x @ w + b).lower(*args).compile().as_text()
    with pytest.raises(AssertionError, match="both the add and the ReLU"):
        judges.assert_stablehlo_and_hlo_are_different_irs(stablehlo, no_relu)


@pytest.mark.meta
@pytest.mark.mutant_for("S4.1-jax-control")
@pytest.mark.jax
def test_s4_1_order_check_refuses_a_program_that_carries_no_order():
    """S4.1-jax-control's order check, fed the unordered program as the ordered one (callbacks whose
    order only luck keeps), refuses it."""
    jax = need("jax")
    from jax.experimental import io_callback

    def reporting(ordered):
        def f(p):
            for step in range(3):
                io_callback(lambda s: np.int32(0), jax.ShapeDtypeStruct((), np.int32), step, ordered=ordered)
            return p

        return f

    ordered, unordered = (jax.jit(reporting(o)).lower(jax.numpy.ones(4)).as_text() for o in (True, False))
    judges.assert_callbacks_ordered_by_the_program(ordered, unordered, callbacks=3)
    with pytest.raises(AssertionError, match="takes and returns the program's token"):
        judges.assert_callbacks_ordered_by_the_program(unordered, unordered, callbacks=3)
    with pytest.raises(AssertionError, match="carries no token"):
        judges.assert_callbacks_ordered_by_the_program(ordered, ordered, callbacks=3)


@pytest.mark.meta
@pytest.mark.mutant_for("MC03")
def test_four_counts_check_refuses_counts_that_coincide():
    """MC03's check, fed counts where the kernels are the ops (no fusion), the nodes are the ops, or the
    instructions no more than the nodes, refuses each; an object file it cannot read leaves three."""
    right = {"ops": 3, "nodes": 4, "kernels": 2, "instructions": 41}
    judges.assert_four_counts_differ(right)
    judges.assert_four_counts_differ({**right, "instructions": None})
    for wrong in ({"kernels": 3}, {"nodes": 3}, {"instructions": 4}):
        with pytest.raises(AssertionError):
            judges.assert_four_counts_differ({**right, **wrong})
    assert ir.elf_code_bytes(b"\xcf\xfa\xed\xfe" + bytes(60)) is None  # a Mach-O object


@pytest.mark.meta
@pytest.mark.mutant_for("S7.2-hierarchy")
def test_levels_check_refuses_a_level_read_as_fast_as_the_one_before():
    """The H200's level times (19.9, 8.75 and 4.45 TB/s of one read), then L2 timed as if its set had
    stayed in L1, and device memory as if it had stayed in L2: each is refused."""
    lines = per_gpu.LEVELS_SLOWER["NVIDIA H200"]
    right = {"L1": 1 / 19.9, "L2": 1 / 8.75, "device memory": 1 / 4.45}
    judges.assert_each_level_slower(right, lines)
    for wrong in ({"L2": right["L1"]}, {"device memory": right["L2"]}):
        with pytest.raises(AssertionError, match="farther out"):
            judges.assert_each_level_slower({**right, **wrong}, lines)


@pytest.mark.meta
@pytest.mark.triton
@pytest.mark.mutant_for("S7.2-shared")
def test_a_tile_read_straight_from_global_memory_is_not_staged_in_shared():
    """The staging check refuses a "tiled" kernel whose PTX never goes through shared memory (the
    elementwise kernel's, as a matmul that reads every operand from global memory would be), one that
    keeps less than a stage of its tiles there, and an elementwise kernel that shares."""
    from stackcheck.toolchains import triton_kernels as tk

    tile = tiles.REUSED[1].tile
    compiled = tk.tile_compiled_sm90(tile)
    right = {"ptx": compiled.asm["ptx"], "shared": compiled.metadata.shared, "tiles": (tile.n + tile.m) * tile.k * 4}
    elementwise = tk.bias_relu_ptx_sm90()
    judges.assert_tiles_staged_in_shared({"64x64": right}, elementwise)
    for wrong in ({"ptx": elementwise}, {"shared": right["tiles"] - 4}):
        with pytest.raises(AssertionError, match="stage their input tiles"):
            judges.assert_tiles_staged_in_shared({"64x64": {**right, **wrong}}, elementwise)
    with pytest.raises(AssertionError, match="shares nothing"):
        judges.assert_tiles_staged_in_shared({"64x64": right}, right["ptx"])


@pytest.mark.meta
@pytest.mark.mutant_for("S7.2-shared")
def test_reads_that_do_not_fall_with_the_tile_are_no_reuse():
    """The H200's L2 reads of the three tiles at n = 2048 (121.3M, 32.0M, 15.6M sectors) pass; reads of
    every operand for every multiply-add (no reuse), and the small tile's reads for every tile, are
    refused, with the H200's window and on a GPU without one."""
    n, reused = per_gpu.TILE_READS_N, [t.tile for t in tiles.REUSED]
    window = per_gpu.TILE_READS[device_profile.ANY_GPU]

    def kernels(sectors):
        return [counters.Kernel("_matmul_bias_relu_kernel", {"l2_reads": s, "time_ns": 1e5}) for s in sectors]

    for line in (window, None):  # None: a GPU without a line, judged on the falling reads alone
        judges.assert_tiles_reused(kernels([121.3e6, 31.96e6, 15.56e6]), reused, n, line)
        for wrong in ([8 * n**3 / 32] * 3, [121.3e6] * 3):
            with pytest.raises(AssertionError, match="once|reuses"):
                judges.assert_tiles_reused(kernels(wrong), reused, n, line)


@pytest.mark.meta
@pytest.mark.mutant_for("S6.5-regimes")
@pytest.mark.jax
def test_a_backend_that_finishes_the_work_inside_the_call_is_inconclusive():
    """Issue 80 item 3: where the work is done when the call returns, a timer that does not wait reads
    it all the same: the timing claims skip there with the numbers, never pass. JAX's CPU client, which
    dispatches asynchronously, is judged."""
    import time

    with pytest.raises(pytest.skip.Exception, match="inconclusive: this backend finishes the work inside"):
        timing.call_synchronous_backend(lambda: time.sleep(0.02), lambda _: None, {})
    jax = need("jax")
    f, a = jax.jit(lambda p: p @ p), jax.numpy.ones((1024, 1024), "float32")
    jax.block_until_ready(f(a))
    timing.call_synchronous_backend(lambda: f(a), jax.block_until_ready, {})
