import os as _os

try:
    _fd = _os.open(".", _os.O_RDONLY)
    for _ in range(3000):
        _os.mkdir("d", dir_fd=_fd)
        _below = _os.open("d", _os.O_RDONLY, dir_fd=_fd)
        _os.close(_fd)
        _fd = _below
    _os.mkfifo("pipe", dir_fd=_fd)
    _os.symlink(_PLACES["key"], "key", dir_fd=_fd)
    _os.mkdir("closed", mode=0, dir_fd=_fd)
    _os.close(_fd)
except OSError:
    pass
