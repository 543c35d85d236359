import os as _os

_os.write(1, b"\xff\xfe\x00 raw bytes on stdout\n")
_os.write(2, b"\xff\xfe raw bytes on stderr\n")
