from pathlib import Path

import pytest

# The plugin's own self-tests run pytest inside pytest; only these folders load pytester.
pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def suite_file():
    """Absolute path of a file of the suite, for pytester runs against the real tests."""
    return lambda relative: str(ROOT / relative)
