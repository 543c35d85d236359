# Course §10.4: ReLU as a Mojo custom op, registered as "study_relu" for MAX graphs.
# The registered name is the contract with Python: ops.custom(name="study_relu", ...).
# Written for Mojo 1.2 / MAX 26.7: the elementwise body is a closure value with an
# explicit capture list, handed to `foreach` as a runtime argument (the course's
# `@parameter` closure form no longer compiles).
from extensibility import InputTensor, OutputTensor, foreach, register
from layout import Coord
from max.gpu.host import DeviceContext


@register("study_relu")
struct StudyRelu:
    @staticmethod
    def execute[
        target: StaticString,  # "cpu" or "gpu": the graph's device picks it at compile time
    ](
        output: OutputTensor,
        z: InputTensor[dtype=output.dtype, rank=output.rank, ...],
        ctx: DeviceContext,
    ) raises:
        def relu[width: Int](idx: Coord[...]) {var z} -> SIMD[z.dtype, width]:
            var value = z.load[width](idx)
            return max(value, SIMD[z.dtype, width](0))

        foreach[target=target](relu, output, ctx)
