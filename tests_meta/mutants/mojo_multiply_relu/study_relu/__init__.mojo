# A wrong study_relu (stackcheck's mutant mojo_multiply_relu): ReLU as value * (value > 0), which
# agrees with select(z > 0, z, 0) on every finite nonzero value, and gives NaN for NaN and -0 for -0.
# Otherwise the suite's own study_relu (mojo/study_relu).
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
            return value * value.gt(0).cast[z.dtype]()

        foreach[target=target](relu, output, ctx)
