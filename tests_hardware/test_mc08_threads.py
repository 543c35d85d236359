"""MC08 (§14.1, §10.5): a GPU's thread count is not its core count. The bias + ReLU kernel is
launched as far more logical threads than the chip has FP32 lanes; the hardware schedules them in
waves, and every element comes out right."""

import numpy as np
import pytest

from stackcheck.evidence import hardware
from stackcheck.evidence.numerics import as_numpy, assert_matches_reference, uniform
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params

BLOCK, WARPS = 128, 4  # one element per thread: Triton's default 4 warps of 32 threads per program
GPU_SHAPE = (4097, 4096)  # 2^24 + 4096 elements; a partial last program
CPU_COLUMNS = 255


def cpu_shape(cores: int) -> tuple[int, int]:
    """At least 512 programs, and more than 100 a core on a larger host; a partial last program."""
    programs = max(512, 101 * cores)
    return programs * BLOCK // CPU_COLUMNS + 1, CPU_COLUMNS


def launched_threads(impl, launches, device):
    import os

    torch = need("torch")
    n, m = GPU_SHAPE if device == "cuda" else cpu_shape(os.cpu_count() or 1)
    a, b = uniform((n, m), seed=81), uniform((m,), seed=82)
    y = impl.triton_bias_relu(torch.from_numpy(a).to(device), torch.from_numpy(b).to(device), block_size=BLOCK)
    assert_matches_reference(
        as_numpy(y),
        np.maximum(a.astype(np.float64) + b, 0),
        dtype="float32",
        k=1,
        what="every element of ReLU(A + b)",
        N=n,
        M=m,
    )
    programs = sum(int(np.prod(grid)) for grid in launches())  # a 2-D grid counts every program
    return n * m, programs * WARPS * 32


@pytest.mark.claim("MC08")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
def test_logical_threads_outnumber_the_lanes_and_run_in_waves(impl, launches, device, evidence):
    torch = need("torch")
    elements, threads = launched_threads(impl, launches, device)
    props = torch.cuda.get_device_properties(device)
    lanes = hardware.fp32_lanes(props)
    waves = threads / (props.multi_processor_count * props.max_threads_per_multi_processor)
    evidence(
        elements=elements,
        logical_threads=threads,
        sms=props.multi_processor_count,
        fp32_lanes=lanes,
        threads_per_lane=round(threads / lanes, 1),
        waves_per_sm=round(waves, 2),
    )
    assert threads >= elements >= 2**24, f"{threads} threads launched for {elements} elements"
    assert threads >= 100 * lanes and waves > 1, (
        f"{threads} logical threads on {lanes} FP32 lanes: {threads / lanes:.0f} per lane, {waves:.2f} waves per SM"
    )


@pytest.mark.claim("MC08")
@pytest.mark.triton
def test_the_interpreter_runs_hundreds_of_programs_on_a_few_cores(impl, launches):
    """On a CPU, Triton's interpreter runs each program in turn: logical work, not one core each."""
    import os

    elements, threads = launched_threads(impl, launches, "cpu")
    cores = os.cpu_count() or 1
    assert threads >= elements and threads // (WARPS * 32) > 100 * cores, (
        f"{threads // (WARPS * 32)} programs for {elements} elements on {cores} cores"
    )
