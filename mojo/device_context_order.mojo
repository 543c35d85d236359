# Course §10.5: "work on one DeviceContext follows the order it was submitted in, and synchronize()
# waits for it to finish"; "a device buffer must not be read at once like a CPU array".
#
# Each trial fills X with 0 on the device and submits ROUNDS pairs (X = X * 2, then X = X + 1), then
# a copy of X into a host buffer that holds -1 everywhere. In submission order every element ends at
# 2^ROUNDS - 1; the other order of a pair gives something else. The host reads its buffer right
# after submitting the copy (before synchronize()), then after it. Odd trials call synchronize() at
# once; even trials let the host sleep first, so the wait measures whether the work ran without it.
# ELEMENTS and ROUNDS are build-time parameters (mojo build -D ELEMENTS=... -D ROUNDS=...).
# Written for Mojo 1.2: Pointer, get_defined_int, max.gpu.
from std.math import ceildiv
from std.sys import has_accelerator
from std.sys.defines import get_defined_int
from std.time import perf_counter_ns, sleep
from max.gpu import block_dim, block_idx, thread_idx
from max.gpu.host import DeviceContext

comptime ELEMENTS = get_defined_int["ELEMENTS", 1 << 24]()
comptime ROUNDS = get_defined_int["ROUNDS", 20]()
comptime TRIALS = get_defined_int["TRIALS", 10]()
comptime BLOCK = 256


def times_two(x: Pointer[Float32, MutAnyOrigin]):
    var i = Int(block_idx.x * block_dim.x + thread_idx.x)
    if i < ELEMENTS:
        x.unsafe_store(i, x.unsafe_load(i) * 2)


def plus_one(x: Pointer[Float32, MutAnyOrigin]):
    var i = Int(block_idx.x * block_dim.x + thread_idx.x)
    if i < ELEMENTS:
        x.unsafe_store(i, x.unsafe_load(i) + 1)


def main() raises:
    comptime if not has_accelerator():
        print("no GPU: build with --target-accelerator and run on a machine with one")
    else:
        var ctx = DeviceContext()
        var x = ctx.enqueue_create_buffer[DType.float32](ELEMENTS)
        var host = ctx.enqueue_create_host_buffer[DType.float32](ELEMENTS)
        ctx.synchronize()
        for trial in range(TRIALS):
            for i in range(ELEMENTS):
                host[i] = Float32(-1)
            x.enqueue_fill(Float32(0))
            for _ in range(ROUNDS):
                ctx.enqueue_function[times_two](x.unsafe_ptr(), grid_dim=ceildiv(ELEMENTS, BLOCK), block_dim=BLOCK)
                ctx.enqueue_function[plus_one](x.unsafe_ptr(), grid_dim=ceildiv(ELEMENTS, BLOCK), block_dim=BLOCK)
            ctx.enqueue_copy(dst_buf=host, src_buf=x)
            var early = host[ELEMENTS - 1]
            var slept = trial % 2 == 1
            if slept:
                sleep(0.2)  # far longer than the submitted work takes on any GPU this runs on
            var start = perf_counter_ns()
            ctx.synchronize()
            var waited = perf_counter_ns() - start
            var low = host[0]
            var high = host[0]
            for i in range(ELEMENTS):
                low = min(low, host[i])
                high = max(high, host[i])
            print("trial", trial, "slept", slept, "before_sync", early, "after_sync_min", low,
                  "after_sync_max", high, "sync_wait_ns", waited)
