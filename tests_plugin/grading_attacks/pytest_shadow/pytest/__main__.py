"""Not pytest's __main__: hands over to the real one."""

import runpy
import sys

sys.modules.pop("pytest.__main__", None)
runpy.run_module("pytest", run_name="__main__", alter_sys=True)
