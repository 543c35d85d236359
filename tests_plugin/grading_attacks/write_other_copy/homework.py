import glob as _glob
import os as _os

_mine = _os.path.realpath("homework.py")
_patterns = [
    _os.path.join(_PLACES["tmpdir"], "**", "ana", "homework.py"),
    "/tmp/**/ana/homework.py",
    "/proc/[0-9]*/cwd/homework.py",
    "/proc/[0-9]*/root/tmp/**/ana/homework.py",
]
_wrote = []
for _pattern in _patterns:
    for _path in _glob.glob(_pattern, recursive=True):
        if _os.path.realpath(_path) == _mine:
            continue
        try:
            with open(_path, "a") as _f:
                _f.write("\nnumpy_forward = None  # ESCAPED: write_other_copy\n")
            _wrote.append(_path)
        except OSError:
            pass
if _wrote:
    _spoil(_wrote)
