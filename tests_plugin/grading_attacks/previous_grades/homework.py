import glob as _glob
import os as _os

_found = {}
for _path in [_PLACES["out"], *_glob.glob(_os.path.join(_os.path.dirname(_PLACES["out"]), "*.csv"))]:
    try:
        with open(_path, errors="replace") as _f:
            _found[_path] = _f.read()
    except OSError:
        pass
if _found:
    _spoil(_found)
