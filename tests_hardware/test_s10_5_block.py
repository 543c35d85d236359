"""§10.5: "block 크기 256은 이 예제의 선택일 뿐 모든 GPU에서 최적이라는 의미가 아니다". The course's
bias_relu kernel (mojo/bias_relu_blocks.mojo) at block sizes 32 to 1024 and 2^20 to 2^26 elements:
every launch computes ReLU(A + b) exactly, and at some element count another block size runs it
clearly faster than the example's 256 threads. Other GPUs: measured and reported, no line."""

import pytest

from stackcheck import judges
from stackcheck.evidence import device_profile, per_gpu, timing
from stackcheck.evidence.numerics import assert_exact
from stackcheck.toolchains import mojo_build

EXAMPLE_BLOCK = 256  # the course's comptime block_size


@pytest.mark.claim("S10.5-block")
@pytest.mark.cuda
@pytest.mark.gpu_needs(line=per_gpu.block_line)
def test_the_examples_block_size_is_a_choice_not_the_optimum(mojo_program, evidence):
    checks, series = mojo_build.block_sweep(mojo_program)
    assert_exact(
        [c["mismatches"] for c in checks],
        [0] * len(checks),
        what="elements of ReLU(A + b) that differ from the host's, per (element count, block size)",
        runs=[(c["elements"], c["block"]) for c in checks],
    )
    medians = {n: {b: m.median for b, m in by.items()} for n, by in series.items()}
    record = {str(n): {str(b): round(t * 1e6, 2) for b, t in by.items()} for n, by in medians.items()}
    evidence(medians_us=record)
    profile = device_profile.current()
    line = per_gpu.block_line(profile)
    beaten = judges.block_beaten(medians, EXAMPLE_BLOCK)
    if line is None:
        device_profile.no_line(profile, {"beaten_by": beaten})
    n, ratio, by = judges.most_beaten(beaten)
    timing.call_shortfall(ratio, line, [series[n][EXAMPLE_BLOCK], series[n][by]], {"medians_us": record})
    evidence(**judges.assert_block_beaten(beaten, EXAMPLE_BLOCK, line))
