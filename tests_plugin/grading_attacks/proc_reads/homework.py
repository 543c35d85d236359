import glob as _glob
import os as _os
import stat as _stat

_found = {}


def _take(path):
    if _os.path.exists(path) and _os.path.exists(__file__) and _os.path.samefile(path, __file__):
        return  # its own file holds the fingerprints, which are no secret
    try:  # regular files only: a pipe or an eventfd of another process would stall this worker alone,
        # as an ordinary user's grading (bwrap's descriptors are its uid's) and not as root's
        if not _stat.S_ISREG(_os.stat(path).st_mode):
            return
        with open(path, errors="replace") as _f:
            _text = _f.read(20000)
    except OSError:
        return
    if _secret(_text):
        _found[path] = _text


for _proc in _glob.glob("/proc/[0-9]*"):
    for _target in (_PLACES["key"], _PLACES["hidden"]):
        _take(_proc + "/root" + _target)
    for _fd in _glob.glob(_proc + "/fd/*"):
        _take(_fd)
    try:
        with open(_proc + "/cmdline", "rb") as _f:
            _args = _f.read().decode(errors="replace").split("\0")
    except OSError:
        _args = []
    for _arg in _args:
        _path = _arg.split("=", 1)[-1]
        if _path.endswith((".py", ".toml")) or _os.path.isdir(_path):
            for _file in [_path, *_glob.glob(_os.path.join(_path, "**", "*.py"), recursive=True)[:200]]:
                _take(_file)
if _found:
    _spoil(_found)
