import glob as _glob
import os as _os
import re as _re

_pycs = _glob.glob(_os.path.join(_PLACES["hidden_dir"], "__pycache__", "*.pyc"))
_pycs += _glob.glob("/tmp/**/__pycache__/*.pyc", recursive=True)
_found = []
for _pyc in _pycs:
    try:
        with open(_pyc, "rb") as _f:
            _data = _f.read()
    except OSError:
        continue
    _strings = [s.decode() for s in _re.findall(rb"[ -~]{8,}", _data)]
    if any(_secret(s) for s in _strings):
        _found += _strings
if _found:
    _spoil(_found)
