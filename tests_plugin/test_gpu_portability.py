"""Every cuda test and cuda meta-test, walked against every recorded GPU profile (issue 53): a test
that needs a GPU feature is gated on it, and a test that declares a line takes it from per_gpu's
tables, where a GPU without one is "no line", never judged by the H200's numbers. What a test needs
is read from its own markers and parameters (the signs below), not from a list of tests."""

import pytest

from stackcheck.evidence import device_profile, per_gpu

pytestmark = pytest.mark.meta

PROFILES = device_profile.recorded()
TENSOR_METRICS = {"hmma", "gmma"}  # a request that reads these judges the tensor pipe


def feature_needs(row: dict) -> dict[str, str]:
    """{need: the sign in the test's markers or parameters that shows it} of one cuda test."""
    from stackcheck.toolchains import workloads

    signs = {}
    if "precision" in row["markers"]:  # about matmul precision on a GPU: TF32 (the TF32 fact, MC13)
        signs["tf32"] = "marked precision"
    if row["params"].get("dtype") == "bfloat16" and {"triton", "torch_compile"} & set(row["markers"]):
        signs["triton-bf16"] = "a bfloat16 run through Triton kernels"
    if any(t["dtype"] == "bf16" for t in row["tiles"]):
        signs["triton-bf16"] = "launches a bf16 tile"
    for request in row["requests"]:
        if not TENSOR_METRICS & set(request["metrics"]):
            continue
        launched = workloads.TILES.get(request["workload"], [])
        if request["kwargs"].get("dtype") == "bfloat16" or any(t.dtype == "bf16" for t in launched):
            signs["bf16-tensor-cores"] = f"reads the tensor pipe of a bf16 {request['workload']}"
        if request["kwargs"].get("tf32") or any(t.dtype == "fp32" and t.precision == "tf32" for t in launched):
            signs["tf32"] = f"reads the tensor pipe of a TF32 {request['workload']}"
    return signs


def test_the_walk_reads_every_cuda_test_and_meta_test(cuda_tests):
    tests = [row["test"] for row in cuda_tests]
    assert len(tests) > 100 and any(t.startswith("tests_meta/") for t in tests), len(tests)


@pytest.mark.parametrize("key", list(PROFILES))
def test_every_feature_a_cuda_test_needs_is_gated(cuda_tests, key):
    """On this GPU, no cuda test runs that needs what the GPU lacks (the TF32 fact on a T4, Triton's
    bf16 on a T4): each such test carries the gpu_needs gate that skips it with the reason."""
    profile = PROFILES[key]
    problems = []
    for row in cuda_tests:
        if profile.missing(*row["needs"]):
            continue  # skipped on this GPU, with the reason
        for need, sign in feature_needs(row).items():
            if profile.lacks(need):
                problems.append(f"{row['test']}: {sign}, needs {need}, and is not gated (gpu_needs({need!r}))")
    assert problems == [], f"{profile.name}: " + "; ".join(problems)


def test_the_signs_find_what_the_gated_tests_need(cuda_tests):
    """The signs are read from the markers: they find the gates the tests carry (MC04's bf16 and TF32
    cases, MC05's TF32 tile, MC13 and S10.3-gpu's TF32 facts, Triton's and Inductor's bf16 runs)."""
    found = {(row["test"].split("::")[0], need) for row in cuda_tests for need in feature_needs(row)}
    for expected in [
        ("tests_runtime/test_s10_3_gpu.py", "tf32"),
        ("tests_math/test_mc13_bitwise.py", "tf32"),
        ("tests_hardware/test_mc04_tensor_cores.py", "bf16-tensor-cores"),
        ("tests_hardware/test_mc04_tensor_cores.py", "tf32"),
        ("tests_hardware/test_mc05_relu_on_alus.py", "tf32"),
        ("tests_math/test_x_numerics.py", "triton-bf16"),
        ("tests_hardware/test_s12_5_perf_portability.py", "triton-bf16"),
    ]:
        assert expected in found, expected
    q3 = {need for test, need in found if test == "tests_hardware/test_q3_intermediates.py"}
    assert q3 == set(), "Q3 reads DRAM bytes of its TF32 tile, not its tensor pipe: it runs on a T4"


@pytest.mark.parametrize("key", list(PROFILES))
def test_a_declared_line_comes_from_a_per_gpu_table(cuda_tests, key):
    """Each line a cuda test declares (gpu_needs(line=...)) is one of per_gpu's, and gives this GPU a
    line only where its table has a key for it: the H200's recorded lines judge the H200 alone."""
    profile = PROFILES[key]
    tables = {  # each line function of per_gpu and the table it reads
        "block_line": per_gpu.BLOCK_256_BEATEN,
        "tile_margin": per_gpu.TILE_MARGIN,
        "sync_idle_lines": per_gpu.SYNC_IDLE,
        "fusion_loses_line": per_gpu.FUSION_LOSES,
        "shape_decides": per_gpu.SHAPE_DECIDES,
        "level_lines": per_gpu.LEVELS_SLOWER,
        "many_requests_line": per_gpu.MANY_REQUESTS,
        "tile_reads_window": per_gpu.TILE_READS,
    }
    declared = {name for row in cuda_tests for name in row["lines"]}
    assert declared - {"bf16_line"} <= set(tables), f"lines not from per_gpu's tables: {declared - set(tables)}"
    for name in declared - {"bf16_line"}:
        keyed = next((k for k in profile.family_keys() if k in tables[name]), None)
        assert getattr(per_gpu, name)(profile) == (None if keyed is None else tables[name][keyed]), (name, key)


class Item:
    """A collected test as the GPU gate reads it: its markers and its stash."""

    def __init__(self, *marks):
        self.marks, self.stash, self.name = [m.mark for m in marks], pytest.Stash(), "test_reads"

    def iter_markers(self, name=None):
        return (m for m in self.marks if name in (None, m.name))

    def get_closest_marker(self, name):
        return next(self.iter_markers(name), None)


@pytest.fixture
def gates(pytestconfig):
    """The GPU gate as this session registered it: its hooks, driven here as pytest drives them."""
    return pytestconfig.pluginmanager.get_plugin("stackcheck.plugin.gpu_gates")


def ends(gates, item, raised=None):
    """What the gate's call wrapper makes of a test that returned (``raised`` None) or raised ``raised``."""
    run = gates.pytest_runtest_call(item)
    next(run)
    try:
        run.send(None) if raised is None else run.throw(raised)
    except StopIteration:
        return "passed"
    except pytest.skip.Exception as skip:
        return f"skipped: {skip.msg}"
    except BaseException as error:
        return f"failed: {type(error).__name__}"
    raise AssertionError("the wrapper yielded twice")


@pytest.mark.parametrize("key", list(PROFILES))
def test_a_test_that_passes_on_a_gpu_without_its_line_ends_as_a_skip(key, monkeypatch, gates):
    """On every recorded GPU without a test's line, a pass judged nothing the line decides and ends as
    a skip (MC04's shape test passed so on an H100); the test's own skip with its numbers, its failed
    assertions and its errors (a learner's code that raised, a crash) stand. A GPU with the line
    changes nothing."""
    profile = PROFILES[key]
    monkeypatch.setattr(device_profile, "current", lambda: profile)
    needs = pytest.mark.gpu_needs(line=per_gpu.tile_reads_window)
    item = Item(pytest.mark.cuda, pytest.mark.claim("S7.2-shared"), needs)
    gates.gate([item], is_cuda=lambda _: True)
    assert gates.GATE not in item.stash
    own = pytest.skip.Exception("measured, no line for this GPU: {...}")
    assert [ends(gates, item, TypeError()), ends(gates, item, AssertionError()), ends(gates, item, own)] == [
        "failed: TypeError",
        "failed: AssertionError",
        f"skipped: {own.msg}",
    ]
    if per_gpu.tile_reads_window(profile) is not None:
        assert ends(gates, item) == "passed"
    else:
        passed = ends(gates, item)
        assert passed.startswith("skipped: S7.2-shared: no line for") and "nothing is verified" in passed
