# Course §10.4: "width는 이 원소별 계산의 벡터 폭에 관련된 컴파일 시점 매개변수다". The same ReLU
# as the custom op's elementwise function, written for any `width`: WIDTH values loaded as one SIMD
# vector, compared with zero, stored. WIDTH is a build-time parameter (mojo build -D WIDTH=...);
# each build computes ReLU over the same COUNT values and prints their sum.
# Written for Mojo 1.2: Pointer with unsafe_load / unsafe_store.
from std.sys.defines import get_defined_int

comptime WIDTH = get_defined_int["WIDTH", 8]()
comptime COUNT = 4096  # a multiple of every width built


@no_inline
def relu_block[width: Int](src: Pointer[Float32, _], dst: Pointer[mut=True, Float32, _]):
    for i in range(0, COUNT, width):
        var value = src.unsafe_load[width=width](i)
        dst.unsafe_store(i, max(value, SIMD[DType.float32, width](0)))


def main() raises:
    var src = List[Float32](length=COUNT, fill=0)
    var dst = List[Float32](length=COUNT, fill=-1)
    for i in range(COUNT):
        src[i] = Float32(i % 17) - 8  # finite, exact, mixed signs
    relu_block[WIDTH](src.unsafe_ptr(), dst.unsafe_ptr())
    var total = Float64(0)
    for i in range(COUNT):
        total += Float64(dst[i])
    print("width", WIDTH, "sum", total)
