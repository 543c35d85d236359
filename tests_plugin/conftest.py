from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def suite_file():
    """Absolute path of a file of the suite, for pytester runs against the real tests."""
    return lambda relative: str(ROOT / relative)
