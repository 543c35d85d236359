import ctypes as _ctypes
import subprocess as _subprocess

_libc = _ctypes.CDLL(None, use_errno=True)


def _unmount(paths):
    """umount -l each mount over ``paths`` (root in the sandbox with CAP_SYS_ADMIN can), then remount them writable."""
    for _path in paths:
        for _ in range(3):
            _libc.umount2(str(_path).encode(), 2)  # MNT_DETACH
        try:
            _subprocess.run(["umount", "-l", str(_path)], capture_output=True, timeout=10)
            _subprocess.run(["mount", "-o", "remount,rw,bind", str(_path)], capture_output=True, timeout=10)
        except (OSError, _subprocess.SubprocessError):
            pass
        _libc.mount(None, str(_path).encode(), None, 32 | 4096, None)  # MS_REMOUNT | MS_BIND, read-write


def _read(path):
    try:
        with open(path, errors="replace") as _f:
            return _f.read()
    except OSError:
        return ""

import os as _os

_unmount(["/", _PLACES["submissions"], _PLACES["victim"], _PLACES["checkout"], _os.path.join(_PLACES["checkout"], "fixtures")])
_wrote = []
for _path, _text in (
    (_os.path.join(_PLACES["victim"], "homework.py"), "\nnumpy_steps = None  # ESCAPED: appended by remount_rw\n"),
    (_os.path.join(_PLACES["checkout"], "fixtures", "ESCAPED-remount_rw.txt"), "escaped"),
):
    try:
        with open(_path, "a") as _f:
            _f.write(_text)
        _wrote.append(_path)
    except OSError:
        pass
if _wrote:
    _spoil(_wrote)
