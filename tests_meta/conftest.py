from pathlib import Path

import pytest

from stackcheck.claims.fresh_interpreters import pytest_runtest_call  # noqa: F401 - its hook, for this folder
from stackcheck.claims.mutation import Mutant, Runner, mutant_args

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def mutant_runner():
    """One server per process that imports the stacks once and forks a pytest run per mutant."""
    runner = Runner(ROOT)
    runner.start()  # here, not in the first test's call: the one fresh interpreter the runs share
    yield runner
    runner.close()


@pytest.fixture(scope="session")
def mutant_run(mutant_runner, tmp_path_factory, request):
    """``mutant_run(mutant, batch)``: the pytest run of ``mutant`` against its claim's tests, made in
    one forked process with the mutants of ``batch`` that this session runs and has not run yet."""
    selected = {
        param.id
        for item in request.session.items
        for param in getattr(getattr(item, "callspec", None), "params", {}).values()
        if isinstance(param, Mutant)
    }
    results = {}

    def run(mutant: Mutant, batch: list[Mutant]) -> pytest.RunResult:
        if mutant.id not in results:
            todo = [mutant] + [m for m in batch if m.id in selected and m.id not in results and m != mutant]
            made = mutant_runner.run_batch([(mutant_args(ROOT, m), tmp_path_factory.mktemp(m.id)) for m in todo])
            results.update(zip((m.id for m in todo), made))
        return results.pop(mutant.id)

    return run
