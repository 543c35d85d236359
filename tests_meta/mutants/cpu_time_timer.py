"""A timer of CPU time: right while the host computes, blind while it waits for a device."""

import time


def timed_call(fn, sync=None):
    start = time.process_time()
    result = fn()
    if sync is not None:
        sync(result)
    return time.process_time() - start
