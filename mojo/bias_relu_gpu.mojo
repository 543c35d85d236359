# Course §10.5: a standalone Mojo program that launches Y = ReLU(A + b) on the GPU through
# DeviceContext. A = X @ W is taken as given (the matmul is out of scope here); b is the
# length-M bias, broadcast over rows by indexing it with tid % M.
#
# Sizes are build-time parameters: mojo build -D N=33 -D M=65 ... (defaults 33 x 65, which
# a 256-thread block does not divide, so the bounds check matters). Written for Mojo 1.2:
# Pointer (not UnsafePointer), get_defined_int (not env_get_int), max.gpu (not gpu).
from std.math import ceildiv
from std.sys import has_accelerator
from std.sys.defines import get_defined_int
from max.gpu import block_dim, block_idx, thread_idx
from max.gpu.host import DeviceContext

comptime N = get_defined_int["N", 33]()
comptime M = get_defined_int["M", 65]()
comptime ELEMENTS = N * M
comptime BLOCK = 256  # threads per block: a choice of this example, not a rule


def bias_relu(a: Pointer[Float32, MutAnyOrigin], bias: Pointer[Float32, MutAnyOrigin],
              y: Pointer[Float32, MutAnyOrigin]):
    var tid = Int(block_idx.x * block_dim.x + thread_idx.x)
    if tid < ELEMENTS:  # the last block has threads past the end: they must not load or store
        var value = a.unsafe_load(tid) + bias.unsafe_load(tid % M)
        y.unsafe_store(tid, max(value, Float32(0)))


def main() raises:
    comptime if not has_accelerator():
        print("no GPU: build with --target-accelerator and run on a machine with one")
    else:
        var ctx = DeviceContext()
        var a = ctx.enqueue_create_buffer[DType.float32](ELEMENTS)
        var b = ctx.enqueue_create_buffer[DType.float32](M)
        var y = ctx.enqueue_create_buffer[DType.float32](ELEMENTS + 1)  # one canary past the end
        with a.map_to_host() as host:
            for i in range(ELEMENTS):
                host[i] = Float32(i % 17) - 8  # finite, exact, mixed signs
        with b.map_to_host() as host:
            for j in range(M):
                host[j] = Float32(j % 5) - 2
        y.enqueue_fill(Float32(-1))  # -1 is never a ReLU output: it marks unwritten cells
        ctx.enqueue_function[bias_relu](a.unsafe_ptr(), b.unsafe_ptr(), y.unsafe_ptr(),
                                        grid_dim=ceildiv(ELEMENTS, BLOCK), block_dim=BLOCK)
        ctx.synchronize()  # waits for the work submitted above; it does not start it
        var mismatches = 0
        with y.map_to_host() as out, a.map_to_host() as a_host, b.map_to_host() as b_host:
            for i in range(ELEMENTS):
                var expected = max(a_host[i] + b_host[i % M], Float32(0))
                if out[i] != expected:
                    mismatches += 1
            if out[ELEMENTS] != Float32(-1):
                raise Error("the kernel wrote past the end of Y")
        if mismatches:
            raise Error(String("bias_relu: ", mismatches, " mismatches"))
        print("bias_relu check passed: N =", N, "M =", M, "blocks =", ceildiv(ELEMENTS, BLOCK))
