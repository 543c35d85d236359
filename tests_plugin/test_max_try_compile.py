"""The math graph holds Y in float32, bfloat16 and float16. On a GPU whose MAX kernels lack one of
those dtypes the whole graph would not compile, and every MAX test would fail for one dtype's sake:
there it is compiled in parts, and the refused dtype skips its own tests with the compiler's words
(issue 33: one unsupported dtype fails one test, not a whole graph's)."""

import pytest

pytestmark = [pytest.mark.meta, pytest.mark.max, pytest.mark.max_graph()]  # nothing is compiled here


class Refusing:
    """A session for a device whose compiler refuses graphs that hold ``dtype`` (MLIR's name)."""

    def __init__(self, dtype: str | None):
        self.dtype, self.loaded = dtype, []

    def load(self, graph):
        if self.dtype is None or self.dtype in str(graph):
            raise RuntimeError(f"no {self.dtype or 'float32'} kernels for this device")
        self.loaded.append(graph)
        return object()


def test_a_refused_dtype_skips_its_own_tests_and_the_rest_still_run(impl):
    from stackcheck.run import max_graphs

    graph, names, _ = max_graphs._BUILDERS["math"](impl, max_graphs.with_mojo())
    parts = max_graphs._load(Refusing("bf16"), graph, "math", impl)
    ran = sorted(name for _, part in parts.parts for name in part)
    assert ran == sorted(set(names) - {"y_bfloat16"}) and "y_float16" in ran, (names, ran)
    refused = parts.refused["y_bfloat16"]
    with pytest.raises(pytest.skip.Exception, match="MAX did not compile Y in bfloat16 for math: .*no bf16 kernels"):
        max_graphs.low_precision_y({"y": 0, "y_bfloat16": refused}, "bfloat16")
    assert max_graphs.low_precision_y({"y_float16": 1.5, "y_bfloat16": refused}, "float16") == (1.5, "float16")


def test_a_graph_refused_for_another_reason_fails_with_the_whole_graphs_error(impl):
    from stackcheck.run import max_graphs

    graph, _, _ = max_graphs._BUILDERS["math"](impl, False)
    with pytest.raises(RuntimeError, match="no float32 kernels"):
        max_graphs._load(Refusing(None), graph, "math", impl)
