"""§7.2: "L1 : 각 SM 가까이 있으며 해당 SM의 접근을 돕는 공간". Random gathers (torch.index_select)
from a table small enough for one SM's L1 are found in L1, read from ncu's global-load lookup
counters; from a table far larger than L2 they almost never are. The gathered values are checked
against the table."""

import numpy as np
import pytest

from stackcheck import judges
from stackcheck.evidence.numerics import as_numpy, assert_exact
from stackcheck.stacks.available import need
from stackcheck.stacks.params import device_params
from stackcheck.toolchains import counters

COUNT = 1 << 22  # gathers a run
SMALL = 16 * 1024  # bytes: inside the L1 of every CUDA GPU so far (Kepler's is the least: 16 KB)
LARGE = 2**30  # bytes: far past any L2 so far
SMALL_LEAST, LARGE_MOST = 0.5, 0.2  # H200: 0.78 and 0.00004 (a 1 GiB table's gathers almost never hit)
SMALL_GATHERS, LARGE_GATHERS = (
    counters.request("gather", "all", counters.L1, table_bytes=size, count=COUNT) for size in (SMALL, LARGE)
)


@pytest.mark.claim("S7.2-l1")
@pytest.mark.parametrize("device", device_params("torch", devices=("cuda",)))
@pytest.mark.ncu(SMALL_GATHERS, LARGE_GATHERS)
def test_l1_keeps_what_one_sm_reads_often(device, evidence):
    torch = need("torch")
    found = judges.assert_l1_keeps_what_fits(
        counters.profile(SMALL_GATHERS), counters.profile(LARGE_GATHERS), SMALL_LEAST, LARGE_MOST
    )
    evidence(device=torch.cuda.get_device_name(device), **found)


@pytest.mark.claim("S7.2-l1")
@pytest.mark.cuda
@pytest.mark.torch
@pytest.mark.checks("the gathers' numbers, not what L1 keeps")
def test_the_gathers_return_the_table_values():
    """The gather workload's numbers: no counters needed (a GPU that refuses ncu still shows them)."""
    from stackcheck.toolchains import workloads

    prepared = workloads.gather(SMALL, COUNT)
    table, index = prepared.inputs
    expected = np.take(as_numpy(table), index.cpu().numpy())
    assert_exact(as_numpy(prepared.step()), expected, what="the gathered values", table=SMALL)
