# The suite's own checkout loads the stackcheck entry point also where the package is not installed
# (a GPU machine with the checkout on PYTHONPATH); `stackcheck = true` in pyproject.toml makes every
# run here a stackcheck run.
pytest_plugins = ["stackcheck"]
