# Course §10.5: "block 크기 256은 이 예제의 선택일 뿐 모든 GPU에서 최적이라는 의미가 아니다".
# The course's bias_relu kernel (Y = ReLU(A + b), b of length M broadcast by tid % M, one element a
# thread, bounds-checked), launched with each block size of BLOCKS at each element count of SIZES.
# For each count it first checks every block size's output against the host's ReLU(A + b), then
# times them in TRIALS interleaved rounds (the order rotates each round): one warm launch, then
# LAUNCHES launches between two synchronize() calls, on the host clock. It prints
#   check elements N block B mismatches K
#   time elements N block B trial T ns_per_launch X
# Written for Mojo 1.2: Pointer, max.gpu; a kernel's scalar arguments are fixed-width (Int64).
from std.math import ceildiv
from std.sys import has_accelerator
from std.time import perf_counter_ns
from max.gpu import block_dim, block_idx, thread_idx
from max.gpu.host import DeviceContext

comptime M = 64
comptime TRIALS = 7
comptime LAUNCHES = 20


def bias_relu(a: Pointer[Float32, MutAnyOrigin], bias: Pointer[Float32, MutAnyOrigin],
              y: Pointer[Float32, MutAnyOrigin], elements: Int64):
    var tid = Int(block_idx.x * block_dim.x + thread_idx.x)
    if tid < Int(elements):
        y.unsafe_store(tid, max(a.unsafe_load(tid) + bias.unsafe_load(tid % M), Float32(0)))


def main() raises:
    comptime if not has_accelerator():
        print("no GPU: build with --target-accelerator and run on a machine with one")
    else:
        var blocks = [32, 64, 128, 256, 512, 1024]
        var sizes = [1 << 20, 1 << 22, 1 << 24, 1 << 26]
        var most = sizes[len(sizes) - 1]
        var ctx = DeviceContext()
        var a = ctx.enqueue_create_buffer[DType.float32](most)
        var b = ctx.enqueue_create_buffer[DType.float32](M)
        var y = ctx.enqueue_create_buffer[DType.float32](most)
        with a.map_to_host() as host:
            for i in range(most):
                host[i] = Float32(i % 17) - 8  # finite, exact, mixed signs
        with b.map_to_host() as host:
            for j in range(M):
                host[j] = Float32(j % 5) - 2
        for n in sizes:
            for blk in blocks:
                y.enqueue_fill(Float32(-1))  # -1 is never a ReLU output
                ctx.enqueue_function[bias_relu](a.unsafe_ptr(), b.unsafe_ptr(), y.unsafe_ptr(), Int64(n),
                                                grid_dim=ceildiv(n, blk), block_dim=blk)
                var mismatches = 0
                with y.map_to_host() as out, a.map_to_host() as a_host, b.map_to_host() as b_host:
                    for i in range(n):
                        if out[i] != max(a_host[i] + b_host[i % M], Float32(0)):
                            mismatches += 1
                print("check elements", n, "block", blk, "mismatches", mismatches)
            for trial in range(TRIALS):
                for k in range(len(blocks)):
                    var blk = blocks[(k + trial) % len(blocks)]
                    ctx.enqueue_function[bias_relu](a.unsafe_ptr(), b.unsafe_ptr(), y.unsafe_ptr(), Int64(n),
                                                    grid_dim=ceildiv(n, blk), block_dim=blk)
                    ctx.synchronize()
                    var start = perf_counter_ns()
                    for _ in range(LAUNCHES):
                        ctx.enqueue_function[bias_relu](a.unsafe_ptr(), b.unsafe_ptr(), y.unsafe_ptr(),
                                                        Int64(n), grid_dim=ceildiv(n, blk), block_dim=blk)
                    ctx.synchronize()
                    print("time elements", n, "block", blk, "trial", trial,
                          "ns_per_launch", (perf_counter_ns() - start) // LAUNCHES)
