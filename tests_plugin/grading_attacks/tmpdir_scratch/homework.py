import glob as _glob
import os as _os

_mine = _os.path.realpath("homework.py")
_found = {}
for _pattern in ("**/homework.py", "**/answers.toml"):
    for _path in _glob.glob(_os.path.join(_PLACES["tmpdir"], _pattern), recursive=True):
        if _os.path.realpath(_path) != _mine:
            try:
                with open(_path, errors="replace") as _f:
                    _found[_path] = _f.read(300)
            except OSError:
                pass
if _found:
    _spoil(_found)
