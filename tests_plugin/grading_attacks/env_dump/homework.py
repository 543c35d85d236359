import os as _os
import sys as _sys

_seen = repr({"environ": dict(_os.environ), "argv": _sys.argv, "path": _sys.path, "cwd": _os.getcwd()})
_named = [p for p in (_PLACES["submissions"], _PLACES["tmpdir"], _os.path.dirname(_PLACES["out"]), "stackcheck-grade-") if p in _seen]
if _named:
    _spoil([_named, _seen])
