"""Meta-tests: each claim test of tests_ir fails against a wrong implementation or a wrong input."""
import pytest

from stackcheck import ir, need
from tests_meta.conftest import assert_caught, mutant_cases
from tests_ir.test_mc02_ir_vs_machine_code import assert_ir_not_machine_code

MUTANTS = [
    ("no_bias", "tests_ir/test_s4_3_ir.py", "S4.3-ir", "not max"),
    ("materialized_z", "tests_ir/test_s5_2_fusion.py", "S5.2-fusion", "inductor"),
    ("materialized_z", "tests_ir/test_s9_3_hlo.py", "S9.3-hlo", None),
    ("materialized_z", "tests_ir/test_q1_buffers.py", "Q1", "inductor"),
    ("hidden_break", "tests_ir/test_s4_4_graph_break.py", "S4.4-graph-break", "one_graph"),
    ("host_pull", "tests_ir/test_mc01_python_on_host.py", "MC01", "jax"),
    ("row_by_row_bias", "tests_ir/test_mc03_counts.py", "MC03", "differ"),
    ("recorded_nothing", "tests_ir/test_s10_2_record.py", "S10.2-record", None),
]


@pytest.mark.meta
@mutant_cases(MUTANTS)
def test_mutant_is_caught(run_with_mutant, mutant, test_file, claim, selection):
    assert_caught(run_with_mutant(test_file, mutant, selection), mutant, claim)


PTX = "\tsetp.gt.u64 \t%p1, %rd4, 2144;\n\t@%p1 bra \t$L__BB0_2;\n\tld.global.b32 \t%r4, [%rd11];\n"


@pytest.mark.meta
def test_machine_code_check_rejects_ptx_passed_off_as_ir():
    """MC02's check, fed the wrong stack's text (PTX where an IR belongs), must fail."""
    with pytest.raises(AssertionError):
        assert_ir_not_machine_code(PTX, "PTX posing as IR")


@pytest.mark.meta
def test_mlir_rejection_check_fails_on_stablehlo():
    """MC12's rejection, fed StableHLO instead of MAX's graph, must not hold: XLA parses StableHLO."""
    from tests_ir.test_mc12_mlir import xla_mlir

    jax = need("jax")
    context, mlir_ir = xla_mlir()
    stablehlo = jax.jit(lambda x: x + 1).lower(jax.numpy.ones(2)).as_text()
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"):
        with pytest.raises(Exception, match=r"Dialect `mo' not found"):
            mlir_ir.Module.parse(stablehlo, context=context)
    assert "add" in ir.op_sequence(stablehlo)
