import socket as _socket

try:
    _socket.create_connection(("1.1.1.1", 53), timeout=3)
    _spoil("the network")
except OSError:
    pass
