"""Every Triton kernel and Mojo program that `pytest -m cuda` launches compiles for the GPUs a learner
may have, sm_75 (T4) to sm_90 (H100/H200), on this machine with no GPU: Triton compiles for a
``GPUTarget`` and Mojo cross-compiles with ``--target-accelerator``. A tiled kernel must also fit the
shared memory one block may use on that GPU, or the test that launches it must be gated there
(stackcheck.evidence.device_profile). MAX's GPU graphs compile for each target in MAX's virtual
device mode (with --max-compiles: a minute a target). Kernels Inductor generates are compiled by
Inductor for the GPU it finds, and are not built ahead here."""

import pytest

from stackcheck.evidence import device_profile, per_gpu
from stackcheck.stacks import available

pytestmark = pytest.mark.meta

ARCHS = (75, 80, 86, 89, 90)
SHARED = per_gpu.SHARED_PER_BLOCK  # the shared memory a block may opt into, by compute capability
# Where the launching test is gated: the need that skips it on that GPU (device_profile.NEEDS).
BF16_TILES_NEED = "triton-bf16"


def tiles_launched():
    """(id, tile, dtype, precision, need) of every tiled matmul a cuda test launches expecting it to run."""
    from stackcheck.toolchains.triton_kernels import FUSED_TILE, TILES, Tile

    launched = [
        ("fused-tf32 (Q3, MC05, S7.2)", FUSED_TILE, "fp32", "tf32", None),
        ("fused-ieee", FUSED_TILE, "fp32", "ieee", None),
        ("64x64x32-bf16 (S5.1-target)", Tile(64, 64, 32), "bf16", "tf32", BF16_TILES_NEED),
        ("16x16x256-bf16 (S12.5)", Tile(16, 16, 256, stages=3, warps=2), "bf16", "tf32", BF16_TILES_NEED),
        ("128x256x64-bf16 (S12.5)", Tile(128, 256, 64, stages=3, warps=8), "bf16", "tf32", BF16_TILES_NEED),
    ]
    launched += [(f"S5.3-{t}", Tile(*t), "fp32", "tf32", None) for t in TILES]
    return launched


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
def test_every_launched_tile_compiles_and_fits_or_its_test_is_gated(arch):
    available.need("triton")
    from stackcheck.toolchains.triton_kernels import tile_compiled_sm90

    profile = device_profile.Profile(f"sm_{arch}", (arch // 10, arch % 10), 1, 1, SHARED[arch], 1)
    problems = []
    for name, tile, dtype, precision, need in tiles_launched():
        if need and profile.lacks(need):
            continue  # its test skips on this GPU, with the reason
        try:
            shared = tile_compiled_sm90(tile, dtype, precision, arch=arch).metadata.shared
        except Exception as error:  # a compile failure is a finding, named with its tile
            problems.append(f"{name}: {type(error).__name__}: {str(error).splitlines()[0][:200]}")
            continue
        if shared > SHARED[arch]:
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
