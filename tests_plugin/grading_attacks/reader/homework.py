import glob as _glob
import os as _os
import sys as _sys

_found = {}
_paths = [_PLACES["hidden"], _PLACES["key"], _os.path.join(_PLACES["victim"], "homework.py"), *_PLACES["markers"]]
_paths += _glob.glob("/tmp/**/*.py", recursive=True) + [a.split("=", 1)[-1] for a in _sys.argv if a.endswith(".py")]
for _path in _paths:
    try:
        with open(_path, errors="replace") as _f:
            _text = _f.read()
    except OSError:
        continue
    if _os.path.realpath(_path) != _os.path.realpath(__file__) and _secret(_text):
        _found[_path] = _text[:1000]
if _found:
    _spoil(_found)
