"""§10.5: "같은 DeviceContext의 작업이 제출 순서를 따르며, synchronize()가 완료를 기다리는" (the
official Mojo GPU tutorial, as the course cites it). mojo/device_context_order.mojo submits twenty
pairs (X * 2, then X + 1) on one DeviceContext with no wait between them: every element must end at
2^20 - 1, which only the submitted order gives. synchronize() right after submitting waits; after the
host slept past the work it returns at once: it waits, it does not start."""

import pytest

from stackcheck.evidence import device_queue, timing
from stackcheck.toolchains import mojo_build

LEAST = 10.0  # H200: 3.07 ms at once against 34 us after the sleep, 89x (the trials' extremes 47x):
# the line sits below the worst pairing by more than twice the after-sleep spread (2.1)


@pytest.mark.claim("S10.5-order")
@pytest.mark.cuda
def test_one_context_runs_work_in_the_order_submitted(mojo_program, evidence):
    found = mojo_build.queue_trials(mojo_program)
    evidence(rounds=mojo_build.QUEUE_ROUNDS, after_sync=[[t["after_sync_min"], t["after_sync_max"]] for t in found])
    device_queue.assert_submission_order(found, mojo_build.QUEUE_ROUNDS)


@pytest.mark.claim("S10.5-order")
@pytest.mark.cuda
def test_synchronize_waits_for_the_work_and_does_not_start_it(mojo_program, evidence):
    found = mojo_build.queue_trials(mojo_program)
    waits = device_queue.sync_waits(found)
    ratio = timing.ratio(waits["at_once"], waits["after_sleep"])
    record = {name: m.summary() for name, m in waits.items()}
    timing.call_shortfall(ratio, LEAST, list(waits.values()), record)
    evidence(**record, **device_queue.assert_sync_waits_not_starts(ratio, LEAST))
