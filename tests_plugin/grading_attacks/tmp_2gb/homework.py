import os as _os

_written, _chunk = 0, b"\0" * (1 << 24)
try:
    with open("/tmp/ESCAPED-tmp_2gb.bin", "wb") as _f:
        while _written < 2 * 1024**3:
            _f.write(_chunk)
            _f.flush()
            _written += len(_chunk)
except (OSError, MemoryError):
    pass
finally:
    try:
        _os.remove("/tmp/ESCAPED-tmp_2gb.bin")
    except OSError:
        pass
if _written >= 2 * 1024**3:
    _spoil("2 GB written to " + "/tmp/ESCAPED-tmp_2gb.bin")
