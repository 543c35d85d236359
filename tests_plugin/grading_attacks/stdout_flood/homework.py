import os as _os

_chunk = b"y" * (1 << 20)
try:
    for _ in range(512):
        _os.write(1, _chunk)
except OSError:
    pass
