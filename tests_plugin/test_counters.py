"""stackcheck.counters: ncu's CSV read per kernel, and ncu's refusals as skips that --require ncu fails."""
import pytest

from stackcheck import counters, data, env

pytestmark = pytest.mark.meta

ERR_PERM = ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
            "Counters on the target device 0.")


def test_an_h200_recording_reads_as_three_kernels_with_every_metric():
    """ncu 2025.3's CSV of eager ReLU(X @ W + b) on an H200 (N = M = 1024, K = 256): GEMM, add, clamp."""
    with open(data.path("fixtures", "ncu_eager_forward_h200.csv"), encoding="utf-8") as f:
        kernels = counters.parse(f.read(), "", 0, list(counters.METRICS))
    assert [k.name.split("<")[0].split("(")[0][:12] for k in kernels] == ["sm80_xmma_ge", "void at::ele", "void at::vec"]
    assert all(set(k.values) == set(counters.METRICS) for k in kernels)
    gemm, add, clamp = kernels
    assert gemm.values["ffma"] > 1e8 and clamp.tensor_pipe == 0 and clamp.values["alu"] > 0
    assert gemm.values["dram_read"] == 2_139_904  # the CSV's "2,139,904", in bytes (--print-units base)


def test_a_refusal_is_a_skip_with_ncus_words():
    with pytest.raises(env.Missing, match="ERR_NVGPUCTRPERM") as refused:
        counters.parse("", ERR_PERM, 1, ["dram_read"])
    assert refused.value.needed == "ncu"


def test_a_failing_workload_is_an_error_with_its_last_lines():
    with pytest.raises(AssertionError, match="exited with 1:\nTraceback ...\nRuntimeError: CUDA out of memory"):
        counters.parse("", "Traceback ...\nRuntimeError: CUDA out of memory", 1, ["dram_read"])


def test_a_missing_metric_is_named():
    line = '"0","1","p","h","k","1","7","(1,1,1)","(1,1,1)","0","9.0","s","dram__bytes_read.sum","byte","1,024"'
    header = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
              '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')
    assert counters.parse(f"{header}\n{line}\n", "", 0, ["dram_read"])[0].values == {"dram_read": 1024.0}
    with pytest.raises(AssertionError, match=r"no \['dram_write'\]"):
        counters.parse(f"{header}\n{line}\n", "", 0, ["dram_read", "dram_write"])


def test_without_ncu_a_profile_skips_and_require_ncu_fails(pytester, monkeypatch):
    monkeypatch.setenv("PATH", str(pytester.path))
    pytester.makepyfile(test_chip="""
        import pytest
        from stackcheck import counters

        @pytest.mark.claim("MC04")
        def test_profiled():
            counters.profile("matmul", n=8, dtype="float32")
    """)
    skipped = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rs")
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(["*the ncu command is not on PATH*"])
    failed = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--require", "ncu")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*--require ncu: the ncu command is not on PATH*"])
