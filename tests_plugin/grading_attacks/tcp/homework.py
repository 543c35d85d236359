import socket as _socket

_reached = []
for _address in (("1.1.1.1", 53), tuple(_PLACES["tcp"])):
    try:
        with _socket.create_connection(_address, timeout=3) as _s:
            _s.sendall(b"tcp attack got through")
        _reached.append(_address)
    except OSError:
        pass
if _reached:
    _spoil(_reached)
