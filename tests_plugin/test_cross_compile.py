"""Every Triton kernel and Mojo program that `pytest -m cuda` launches compiles for the GPUs a learner
may have, sm_75 (T4) to sm_90 (H100/H200), on this machine with no GPU: Triton compiles for a
``GPUTarget`` and Mojo cross-compiles with ``--target-accelerator``. A tiled kernel must also fit the
shared memory one block may use on that GPU, or the test that launches it must be gated there
(stackcheck.evidence.device_profile). The tiles are read from the tests' own declarations
(``gpu_tiles`` markers, ``workloads.TILES``), which the plugin holds to what each test launches.
MAX's GPU graphs compile for each target in MAX's virtual device mode (with --max-compiles: a minute
a target). Kernels Inductor generates are compiled by
Inductor for the GPU it finds, and are not built ahead here."""

import pytest

from stackcheck.evidence import device_profile, per_gpu
from stackcheck.stacks import available
from stackcheck.toolchains import tiles

pytestmark = pytest.mark.meta

ARCHS = (75, 80, 86, 89, 90)
SHARED = per_gpu.SHARED_PER_BLOCK  # the shared memory a block may opt into, by compute capability


def tiles_launched(rows: list[dict], profile: device_profile.Profile) -> dict:
    """{launch: the tests that make it} of every tiled launch a cuda test that runs on ``profile``
    declares, its own or its profiled workloads' (``workloads.TILES``); gated tests left out."""
    from stackcheck.toolchains import workloads

    launched: dict = {}
    for row in rows:
        if profile.missing(*row["needs"]):
            continue  # its test skips on this GPU, with the reason
        own = [tiles.TileLaunch(**{**t, "tile": tiles.Tile(**t["tile"])}) for t in row["tiles"]]
        for launch in own + [t for w in row["workloads"] for t in workloads.TILES.get(w, [])]:
            launched.setdefault(launch, []).append(row["test"])
    return launched


def test_the_launches_are_read_from_the_tests_and_s5_1_targets_float32_tile_runs_on_a_t4(cuda_tests):
    """S5.1-target launches its 64x64x32 tile on float32 inputs (bf16-exact values) in TF32 precision,
    ungated: on a T4 it must compile for sm_75 (with FMA, no MMA)."""
    t4 = tiles_launched(cuda_tests, device_profile.recorded()["t4"])
    s5_1 = tiles.TileLaunch(tiles.Tile(64, 64, 32), "fp32", "tf32")
    assert any("test_s5_1_target.py" in test for test in t4.get(s5_1, [])), sorted(map(str, t4))
    assert tiles.FUSED in t4, "the fused workload the chip's counters profile (Q3) is read from its ncu marker"
    assert all(launch.dtype != "bf16" for launch in t4), "bf16 tiles are gated on a T4"


@pytest.mark.triton
@pytest.mark.parametrize("arch", ARCHS, ids=[f"sm_{a}" for a in ARCHS])
def test_the_bias_relu_kernel_compiles_for_every_dtype_and_block(arch):
    available.need("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from stackcheck.toolchains import triton_kernels as tk

    for dtype in ("fp32", "fp16", "bf16"):
        for block in (128, 256, 1024):
            signature = {**{k: v.replace("fp32", dtype) for k, v in tk.FP32_ARGS.items()}, "M": "constexpr"}
            source = ASTSource(
                fn=tk.compiled_kernel,
                signature={**signature, "BLOCK_SIZE": "constexpr"},
                constexprs={"M": 65, "BLOCK_SIZE": block},
            )
            compiled = tk.triton.compile(source, target=GPUTarget("cuda", arch, 32))
            assert compiled.asm["ptx"] and compiled.metadata.shared <= SHARED[arch], (dtype, block)


@pytest.mark.triton
@pytest.mark.parametrize("arch", ARCHS, ids=[f"sm_{a}" for a in ARCHS])
def test_every_launched_tile_compiles_and_fits_or_its_test_is_gated(arch, cuda_tests):
    available.need("triton")
    from stackcheck.toolchains.triton_kernels import tile_compiled_sm90

    profile = device_profile.Profile(f"sm_{arch}", (arch // 10, arch % 10), 1, 1, SHARED[arch], 1, 1)
    problems = []
    for launch, tests in tiles_launched(cuda_tests, profile).items():
        name = f"{launch} ({', '.join(sorted({t.split('::')[0] for t in tests}))})"
        try:
            shared = tile_compiled_sm90(launch.tile, launch.dtype, launch.precision, arch=arch).metadata.shared
        except Exception as error:  # a compile failure is a finding, named with its tile
            problems.append(f"{name}: {type(error).__name__}: {str(error).splitlines()[0][:200]}")
            continue
        if shared > SHARED[arch] and not launch.may_not_fit:
            problems.append(f"{name}: needs {shared} bytes of shared memory; sm_{arch} allows {SHARED[arch]}")
    assert problems == [], f"sm_{arch}: " + "; ".join(problems)


@pytest.mark.mojo
@pytest.mark.parametrize("target", ["nvidia:75", "nvidia:80", "nvidia:86", "nvidia:89", "nvidia:90"])
def test_the_mojo_gpu_programs_build_for_every_target(target, tmp_path):
    """§10.5's program (the suite's, at a size no block divides) for each, and the course's own
    listing for the oldest (the same DeviceContext calls, a few seconds a build)."""
    from stackcheck.toolchains import mojo_build

    assert target in mojo_build.TARGETS
    src = mojo_build.source("bias_relu_gpu.mojo")
    assert mojo_build.build(src, emit="exe", sizes=mojo_build.GPU_SIZES[0], target=target).stat().st_size > 0
    if target != mojo_build.TARGETS[0]:
        return
    pytest.importorskip("sybil", reason="the course's listings are read with Sybil (pip install sybil)")
    from stackcheck.mojo_build import course_programs

    listing = course_programs(tmp_path)[mojo_build.listing_program_name("10.5")]
    assert mojo_build.build(listing, emit="exe", target=target).stat().st_size > 0


@pytest.mark.max
@pytest.mark.mojo
@pytest.mark.max_compiles
@pytest.mark.max_graph()  # compiled in the test, for a GPU this machine may not have
@pytest.mark.parametrize("arch", ARCHS, ids=[f"sm_{a}" for a in ARCHS])
def test_every_max_gpu_graph_compiles_for_every_target(arch, impl):
    """The math graph (its bfloat16 and float16 chains too), the structure graph and the special
    graph, as ``pytest -m cuda`` builds them for the GPU, with the Mojo custom op: every GPU object
    MAX emits holds machine code for that target."""
    from stackcheck.run import max_graphs
    from stackcheck.toolchains import ir

    cubins = ir.cuda_objects(max_graphs.compiled_for_gpu(impl, f"sm_{arch}/every"))
    targets = sorted({ir.cubin_sm(cubin) for cubin in cubins})
    assert cubins and targets == [arch], f"every GPU object is for sm_{arch}: {len(cubins)} objects, for {targets}"


def _run_checked(declared, *launches):
    with tiles.checked(list(declared)):
        for launch in launches:
            tiles.launched(launch)


def test_a_cuda_test_that_launches_a_tile_it_does_not_declare_fails():
    """What the self-tests above compile is what the tests launch: around each cuda test the plugin
    (gpu_gates) fails it when its launches differ from its gpu_tiles markers (a tile launched
    undeclared, or one declared and never run), and a workload's from workloads.TILES."""
    s5_1 = tiles.TileLaunch(tiles.Tile(64, 64, 32), "fp32", "tf32")
    as_bf16 = tiles.TileLaunch(tiles.Tile(64, 64, 32), "bf16", "tf32")
    _run_checked([s5_1], s5_1, s5_1)
    with pytest.raises(AssertionError, match=r"launched on the GPU without declaring: 64x64x32 .* fp32/tf32"):
        _run_checked([as_bf16], s5_1)
    with pytest.raises(AssertionError, match=r"declared but not launched: 64x64x32 .* bf16/tf32"):
        _run_checked([s5_1, as_bf16], s5_1)
    with pytest.raises(ValueError, match="the test's own failure"):  # a failing test keeps its own error
        with tiles.checked([as_bf16]):
            raise ValueError("the test's own failure")
    tiles.launched(s5_1)  # outside any recording: nothing to check
