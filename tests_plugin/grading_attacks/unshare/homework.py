import ctypes as _ctypes
import os as _os

_libc = _ctypes.CDLL(None, use_errno=True)
_made = []
for _flag, _name in ((0x10000000, "user"), (0x00020000, "mount")):
    _pid = _os.fork()
    if _pid == 0:
        _os._exit(0 if _libc.unshare(_flag) == 0 else 1)
    if _os.waitpid(_pid, 0)[1] == 0:
        _made.append(_name)
if _made:
    _spoil(f"unshare of {_made} namespaces worked")
