"""stackcheck.toolchains.counters: ncu's CSV read per kernel, ncu's refusals as skips that --require ncu fails, and
every other ncu error as a failure that says what went wrong."""

import json
import re
import subprocess
import tomllib

import pytest

from stackcheck.paths import data
from stackcheck.stacks import available
from stackcheck.toolchains import counters

pytestmark = pytest.mark.meta

ERR_PERM = (
    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
    "Counters on the target device 0."
)


def test_an_h200_recording_reads_as_three_kernels_with_every_metric():
    """ncu 2025.3's CSV of eager ReLU(X @ W + b) on an H200 (N = M = 1024, K = 256): GEMM, add, clamp."""
    with open(data.path("fixtures", "ncu_eager_forward_h200.csv"), encoding="utf-8") as f:
        kernels = counters.parse(f.read(), "", 0, list(counters.DEFAULT_METRICS))
    assert [k.name.split("<")[0].split("(")[0][:12] for k in kernels] == [
        "sm80_xmma_ge",
        "void at::ele",
        "void at::vec",
    ]
    assert all(set(k.values) == set(counters.DEFAULT_METRICS) for k in kernels)
    gemm, add, clamp = kernels
    assert gemm.values["ffma"] > 1e8 and clamp.tensor_pipe == 0 and clamp.values["alu"] > 0
    assert gemm.values["dram_read"] == 2_139_904  # the CSV's "2,139,904", in bytes (--print-units base)


def test_a_refusal_is_a_skip_with_ncus_words():
    with pytest.raises(available.Missing, match="ERR_NVGPUCTRPERM") as refused:
        counters.parse("", ERR_PERM, 1, ["dram_read"])
    assert refused.value.needed == "ncu"


def recorded(case: str) -> dict:
    """ncu 2025.3.1 on the H200 when the workload fails or a metric is unknown (fixtures/ncu_errors_h200.toml)."""
    with open(data.path("fixtures", "ncu_errors_h200.toml"), "rb") as f:
        return tomllib.load(f)[case]


@pytest.mark.parametrize(
    ("case", "said"),
    [
        (
            "workload_raised",
            r"the profiled workload crashed \(exit 1; The application returned an error code \(1\)\.\)",
        ),
        ("workload_out_of_memory", r"the profiled workload ran out of GPU memory \(exit 1\)"),
        ("workload_segfault", r"the profiled workload crashed \(exit 11; The application returned an error code \(11"),
    ],
)
def test_a_failed_workload_is_a_failure_that_says_how_it_failed_not_a_refusal(case, said):
    """Issue 53: ncu's "==ERROR== The application returned an error code" read as "ncu cannot read
    counters here" (a skip): a crashed or out-of-memory workload is a failure with its own last lines."""
    run = recorded(case)
    with pytest.raises(BaseException) as failed:  # a refusal is a skip: caught here, it fails the test
        counters.parse(run["stdout"], run["stderr"], run["returncode"], ["dram_read", "time_ns"])
    assert type(failed.value) is AssertionError and re.search(said, str(failed.value)), repr(failed.value)
    last = (run["stderr"].strip() or "==PROF== Connected to process").splitlines()[-1][:60]  # SIGSEGV says nothing
    assert last in str(failed.value)


def test_a_metric_this_gpu_lacks_is_a_failure_that_names_it():
    """ncu 2025.3 reads a metric name it does not know as n/a with no unit (exit 0, no ==ERROR==); here
    the recording's unknown name stands for the suite's L1 metric on a GPU without it."""
    run = recorded("unknown_metric")
    stdout = run["stdout"].replace("sm__no_such_metric.sum", counters.METRICS["l1_hit"])
    with pytest.raises(
        AssertionError, match=rf"no metric {counters.METRICS['l1_hit']} on this GPU \(compute capability 9.0"
    ):
        counters.parse(stdout, run["stderr"], run["returncode"], ["l1_hit", "dram_read"])
    with pytest.raises(AssertionError, match="ncu has no such metric on this GPU: Failed to find metric sm__x.sum"):
        counters.parse("==ERROR== Failed to find metric sm__x.sum\n", "", 1, ["dram_read"])


def test_only_permission_and_an_unusable_profiler_are_refusals():
    unloaded = "==ERROR== Failed to initialize the profiler: LibraryNotLoaded\n"  # gVisor, docs of the lent H200s
    with pytest.raises(available.Missing, match="ncu cannot profile on this machine: Failed to initialize"):
        counters.parse(unloaded, "", 1, ["dram_read"])
    with pytest.raises(AssertionError, match=r"ncu failed \(exit 1\): '/no/such/program' does not exist"):
        counters.parse("==ERROR== '/no/such/program' does not exist or is not an executable.\n", "", 1, ["dram_read"])


def test_a_failing_workload_is_an_error_with_its_last_lines():
    with pytest.raises(
        AssertionError, match="out of GPU memory \\(exit 1\\):\nTraceback ...\nRuntimeError: CUDA out of"
    ):
        counters.parse("", "Traceback ...\nRuntimeError: CUDA out of memory", 1, ["dram_read"])
    with pytest.raises(AssertionError, match="workload crashed \\(exit 1; no ncu error\\):\nTraceback ...\nValueError"):
        counters.parse("", "Traceback ...\nValueError: shapes", 1, ["dram_read"])


def test_a_missing_metric_is_named():
    line = '"0","1","p","h","k","1","7","(1,1,1)","(1,1,1)","0","9.0","s","dram__bytes_read.sum","byte","1,024"'
    header = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
        '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
    )
    assert counters.parse(f"{header}\n{line}\n", "", 0, ["dram_read"])[0].values == {"dram_read": 1024.0}
    with pytest.raises(AssertionError, match=r"no \['dram_write'\]"):
        counters.parse(f"{header}\n{line}\n", "", 0, ["dram_read", "dram_write"])


def test_without_ncu_a_profile_skips_and_require_ncu_fails(pytester, monkeypatch):
    monkeypatch.setenv("PATH", str(pytester.path))
    pytester.makepyfile(
        test_chip="""
        import pytest
        from stackcheck.toolchains import counters

        @pytest.mark.claim("MC04")
        def test_profiled():
            counters.profile(counters.request("matmul", n=8, dtype="float32"))
    """
    )
    skipped = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rs")
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(["*the ncu command is not on PATH*"])
    failed = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--require", "ncu")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*--require ncu: the ncu command is not on PATH*"])


def test_counter_tests_run_after_the_others(pytester, monkeypatch):
    """ncu profiles one process at a time: its tests go last, so the sessions started at collection
    run while the others do, not while every worker waits for them."""
    monkeypatch.setenv("PATH", str(pytester.path))
    pytester.makepyfile(
        test_chip="""
        import pytest
        from stackcheck.toolchains import counters

        @pytest.mark.ncu(counters.request("matmul", n=8, dtype="float32"))
        def test_profiled():
            pass

        def test_plain():
            pass
    """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*::test_plain PASSED*", "*::test_profiled PASSED*"])


def kernel(name: str) -> counters.Kernel:
    return counters.Kernel(name, {"time_ns": 1.0})


def test_a_batch_is_split_at_its_marker_kernels():
    members = [
        counters.request("matmul", n=8, dtype="float32"),
        counters.request("bias_relu", n=8, m=8),
        counters.request("chain", n=8, compiled=False),
    ]
    marker = "void at::cuda::<unnamed>::spin_kernel(long)"
    profiled = [kernel(marker), kernel("gemm_a"), kernel("gemm_b"), kernel(marker), kernel(marker), kernel("chain")]
    first, second, third = counters.split(profiled, members, "stackcheck-workload-failed 1 RuntimeError: boom\n")
    assert [name for name, _ in first["kernels"]] == ["gemm_a", "gemm_b"]
    assert second == {"error": "workload bias_relu(m=8, n=8) failed: RuntimeError: boom"}
    assert [name for name, _ in third["kernels"]] == ["chain"]
    with pytest.raises(AssertionError, match="2 marker kernels for 3 workloads"):
        counters._outcome(counters.split(profiled[:4], members, "")[0])


def test_a_request_is_checked_as_it_is_made():
    with pytest.raises(ValueError, match="cache must be 'all' or 'none'"):
        counters.request("matmul", cache="warm", n=8)
    with pytest.raises(ValueError, match="metrics among"):
        counters.request("matmul", metrics=["dram_bytes"], n=8)
    same = counters.request("matmul", n=8, dtype="float32"), counters.request("matmul", dtype="float32", n=8)
    assert same[0] == same[1] and hash(same[0]) == hash(same[1])


def test_one_session_per_cache_control_reads_the_union_of_its_requests_metrics(monkeypatch):
    """A session is a process that starts Python, CUDA and ncu (about 6 s on an H200): the requests of
    one cache control share one, reading every metric any of them reads."""
    sessions = []

    def session(members, read, shared):
        sessions.append(read)
        return [{"kernels": [(str(r), dict.fromkeys(read[1], 1.0))]} for r in members]

    monkeypatch.setattr(counters, "_shared_session", session)
    monkeypatch.setattr(counters, "_PROFILED", {})
    traffic = counters.request("matmul", metrics=counters.TRAFFIC, n=8)
    l1 = counters.request("gather", metrics=counters.L1, count=8, table_bytes=64)
    foreground = counters.request("reread", cache="none", metrics=counters.TRAFFIC, passes=2, nbytes=64)
    counters.prefetch([traffic, l1, foreground], background=False)
    assert [counters.profile(r)[0].name for r in (traffic, l1, foreground)] == [str(traffic), str(l1), str(foreground)]
    assert sorted(sessions) == [
        ("all", ("dram_read", "dram_write", "time_ns", "l1_hit", "l1_miss")),
        ("none", ("dram_read", "dram_write", "time_ns")),
    ]


def ncu_csv(workloads: list, metrics: list[str], lacking: str) -> str:
    """ncu's CSV for a marker kernel and one kernel a workload; ``lacking`` read as ncu 2025.3 reads a
    metric the GPU has not: n/a, no unit."""
    header = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
        '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
    )
    rows, kid = [header], 0
    for i, _ in enumerate(workloads):
        for name in ("void at::cuda::<unnamed>::spin_kernel(long)", f"work_{i}"):
            for m in metrics:
                unit, value = ("", "n/a") if m == lacking else ("byte", "7")
                rows.append(
                    f'"{kid}","1","p","h","{name}","1","7","(1,1,1)","(1,1,1)","0","7.5","s",'
                    f'"{counters.METRICS[m]}","{unit}","{value}"'
                )
            kid += 1
    return "\n".join(rows) + "\n"


def test_a_metric_the_gpu_lacks_fails_only_the_requests_that_read_it(monkeypatch):
    """With sessions shared, one request's metric that this GPU has not (a GPU before Hopper, say)
    must not cost the other requests their counters: the session runs again without it."""
    runs = []

    def run(cmd, **kwargs):
        metrics = [s for s, full in counters.METRICS.items() if full in cmd[cmd.index("--metrics") + 1].split(",")]
        workloads = json.loads(cmd[-1])
        runs.append([w[0] for w in workloads])
        return subprocess.CompletedProcess(cmd, 0, ncu_csv(workloads, metrics, lacking="l1_hit"), "")

    monkeypatch.setattr(counters, "ncu_missing", lambda: None)
    monkeypatch.setattr(counters, "usable_metrics", list)
    monkeypatch.setattr(counters.subprocess, "run", run)
    members = [
        counters.request("matmul", metrics=counters.TRAFFIC, n=8),
        counters.request("gather", metrics=counters.L1, count=8, table_bytes=64),
        counters.request("chain", metrics=counters.TRAFFIC, n=8, compiled=False),
    ]
    first, lacked, last = counters._session(members, ("all", tuple(counters.METRICS)))
    assert runs == [["matmul", "gather", "chain"], ["matmul", "chain"]]
    assert [name for name, _ in first["kernels"]] == ["work_0"] and first["kernels"][0][1]["dram_read"] == 7.0
    assert [name for name, _ in last["kernels"]] == ["work_1"]
    assert lacked == {
        "error": f"ncu has no metric {counters.METRICS['l1_hit']} on this GPU (compute capability 7.5): it read n/a"
    }
