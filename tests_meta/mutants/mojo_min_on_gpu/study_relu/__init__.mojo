# A wrong study_relu (stackcheck's mutant mojo_min_on_gpu): the right max(z, 0) on the CPU, and
# min(z, 0) where the graph is compiled for a GPU. Both are one FMNMX instruction in SASS; only its
# predicate operand tells max (!PT) from min (PT). Otherwise the suite's own study_relu (mojo/study_relu).
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

        def wrong[width: Int](idx: Coord[...]) {var z} -> SIMD[z.dtype, width]:
            var value = z.load[width](idx)
            return min(value, SIMD[z.dtype, width](0))

        comptime if target == "gpu":
            foreach[target=target](wrong, output, ctx)
        else:
            foreach[target=target](relu, output, ctx)
