"""§10.5: "device buffer를 일반 CPU 배열처럼 즉시 읽어서는 안 된다". mojo/device_context_order.mojo
submits work and then a copy of its result into a host buffer holding -1; the host reads that buffer
right after submitting the copy, before synchronize(): it must still hold -1 in every trial, while
after synchronize() it holds the result."""

import pytest

from stackcheck.evidence import device_queue
from stackcheck.toolchains import mojo_build


@pytest.mark.claim("S10.5-stale-copy")
@pytest.mark.cuda
def test_a_host_copy_read_before_synchronize_is_stale(mojo_program, evidence):
    found = mojo_build.queue_trials(mojo_program)
    evidence(**device_queue.assert_host_copy_stale_before_sync(found))
    device_queue.assert_submission_order(found, mojo_build.QUEUE_ROUNDS)  # after synchronize() the copy has landed
