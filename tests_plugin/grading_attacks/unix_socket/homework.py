import glob as _glob
import socket as _socket

_paths = [*_PLACES["unix"], *_glob.glob("/run/*.sock"), *_glob.glob("/var/run/*.sock"), *_glob.glob("/tmp/.X11-unix/*")]
_reached = []
for _path in [*_paths, "\0" + _PLACES["abstract"]]:
    try:
        with _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM) as _s:
            _s.settimeout(3)
            _s.connect(_path)
            _s.sendall(b"unix attack got through")
        _reached.append(_path)
    except OSError:
        pass
if any(p.startswith("\0") or "stackcheck-attack" in p for p in _reached):
    _spoil(_reached)
