"""§7.2: a GPU is many SMs, each with its own registers and shared memory, in front of one L2 and
HBM, each level larger and farther than the last. Read from the device's properties, seen in the
DRAM counters (a working set inside L2 is read from HBM once; one far larger, every pass), and
measured: the same bytes read from one SM's L1, from L2 and from device memory take longer at each
level out (stackcheck.toolchains.levels)."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence import device_profile, hardware, judged, per_gpu, timing
from stackcheck.evidence.numerics import as_numpy, assert_exact, assert_matches_reference, uniform
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import counters

PASSES = 8  # judged by the median of passes 2..8 (judges.assert_l2_reuse)
LARGE = 2**30  # bytes: far past any L2 so far (the H200's is 60 MB)
SMALL_SHARE = 0.25  # of the L2
SMALL_READS, LARGE_READS = (
    counters.request("reread", "none", counters.TRAFFIC, passes=PASSES, **size)
    for size in ({"l2_fraction": SMALL_SHARE}, {"nbytes": LARGE})
)


@pytest.mark.claim("S7.2-hierarchy")
@pytest.mark.parametrize("device", device_params("torch", devices=("cuda",)))
@pytest.mark.ncu(SMALL_READS, LARGE_READS)
def test_l2_keeps_what_fits(device, evidence):
    from stackcheck.toolchains import workloads

    small = workloads.l2_share(SMALL_SHARE)
    found = judges.assert_l2_reuse(counters.profile(SMALL_READS), counters.profile(LARGE_READS), PASSES, small, LARGE)
    evidence(device=device, **found)


@pytest.mark.claim("S7.2-hierarchy")
@pytest.mark.parametrize("device", device_params("torch", devices=("cuda",)))
@pytest.mark.checks("the driver's sizes of each level and the workload's sums, not what a read from each costs")
def test_each_level_is_larger_than_the_last(device, evidence):
    """The device's own properties and the reread workload's numbers: no counters needed."""
    torch = need("torch")
    from stackcheck.toolchains import workloads

    props = torch.cuda.get_device_properties(device)
    levels = hardware.gpu_levels(props)
    evidence(device=props.name, sms=props.multi_processor_count, **levels)
    near = max(levels["registers_per_sm"], levels["shared_memory_per_sm"])  # each SM's own, on chip
    assert props.multi_processor_count > 1 and near < levels["l2"] < levels["hbm"], (
        f"each SM's registers and shared memory, then L2, then HBM, each larger: {levels}"
    )
    small = workloads.l2_share(SMALL_SHARE)
    prepared = workloads.reread(1, nbytes=small)
    (x,) = prepared.inputs
    assert_matches_reference(
        prepared.step()[0].reshape(1),
        as_numpy(x).sum().reshape(1),
        dtype="float32",
        k=x.numel(),
        what="sum of the working set",
    )


@pytest.mark.claim("S7.2-hierarchy")
@pytest.mark.parametrize("device", device_params("triton", devices=("cuda",)))
@pytest.mark.gpu_needs(line=per_gpu.level_lines)
def test_each_level_out_is_slower_to_read(device, evidence):
    torch = need("torch")
    from stackcheck.toolchains import levels

    profile = device_profile.current()
    programs = torch.cuda.get_device_properties(device).multi_processor_count * levels.PROGRAMS_PER_SM
    sets = levels.working_sets(profile.l2_bytes, profile.budget_bytes)
    # small integers: every sum is exact in float32, so the kernel's sums are checked bit for bit; one
    # seeded MiB repeated fills each set (what a read costs does not depend on the values)
    tile = torch.from_numpy(np.floor(uniform((2**18,), seed=72, low=0, high=8))).to(device)
    xs = {level: tile.repeat(-(-(n // 4) // tile.numel()))[: n // 4] for level, n in sets.items()}
    out = torch.empty(programs, levels.BLOCK, device=device)
    for level, x in xs.items():  # the kernels timed sum what they read
        expected = levels.expected(x, programs, level)
        assert_exact(levels.reread(x, out, level), expected, what=f"the sums of the blocks read from {level}")
    timers = {
        level: timing.cuda_event_timer(lambda x=x, level=level: levels.reread(x, out, level)) for level, x in xs.items()
    }
    runs = timing.interleaved(timers, "device-events", trials=9, warmup=2)
    found = {
        "working_set_bytes": sets,
        "tb_per_s": {level: round(levels.bytes_read(programs) / m.median / 1e12, 2) for level, m in runs.items()},
        **{level: m.summary() for level, m in runs.items()},
    }
    lines = per_gpu.level_lines(profile)
    if lines is None:
        device_profile.no_line(profile, found)
    names = list(runs)
    evidence(
        **found,
        judged=[
            judged.line(f"{far} over {near}", timing.ratio(runs[far], runs[near]), at_least=line, of=(far, near))
            for (near, far), line in zip(zip(names, names[1:]), lines)
        ],
    )
    for (near, far), line in zip(zip(names, names[1:]), lines):
        ratio = timing.ratio(runs[far], runs[near])
        if ratio < line:
            timing.call_it(ratio, line, max(timing.scatter(runs[far]), timing.scatter(runs[near])), found)
    judges.assert_each_level_slower({level: m.median for level, m in runs.items()}, lines)


@pytest.mark.claim("S7.2-hierarchy")
@pytest.mark.triton
@pytest.mark.checks("the timing kernel's sums in Triton's interpreter, not the levels")
def test_the_reread_kernel_sums_the_blocks_it_reads():
    """The kernel the levels are timed with, in Triton's interpreter on the CPU: its sums are right."""
    torch = need("torch")
    from stackcheck.toolchains import levels

    x = torch.from_numpy(np.floor(uniform((64 * levels.BLOCK,), seed=73, low=0, high=8)))
    out = torch.empty(8, levels.BLOCK)
    for level in levels.STRIDES:
        expected = levels.expected(x, 8, level, passes=16)
        assert_exact(levels.reread(x, out, level, passes=16), expected, what=f"the sums read ({level}'s stride)")
