import atexit as _atexit
import os as _os
import sys as _sys


def _garbage():
    for _arg in _sys.argv:
        if _arg.startswith("--curriculum-report="):
            _base = _os.path.splitext(_arg.split("=", 1)[1])[0]
            try:
                with open(_base + ".instructor-only.json", "wb") as _f:
                    _f.write(b"\xff not JSON {")
            except OSError:
                pass


_atexit.register(_garbage)
