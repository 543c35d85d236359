from pathlib import Path

import pytest

from stackcheck.claims.mutation import Runner

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def mutant_runner():
    """One server per process that imports the stacks once and forks a pytest run per mutant."""
    runner = Runner(ROOT)
    yield runner
    runner.close()
