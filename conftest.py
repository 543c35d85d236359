# The whole suite is driven by the stackcheck plugin (also installed as a pytest11 entry point).
pytest_plugins = ["stackcheck.plugin"]
