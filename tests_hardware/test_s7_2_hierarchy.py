"""§7.2: a GPU is many SMs, each with its own registers and shared memory, in front of one L2 and
HBM, each level larger and farther than the last. Read from the device's properties, and seen in
the DRAM counters: a working set inside L2 is read from HBM once; one far larger, every pass."""

import pytest

from stackcheck import judges
from stackcheck.evidence import hardware
from stackcheck.evidence.numerics import as_numpy, assert_matches_reference
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
