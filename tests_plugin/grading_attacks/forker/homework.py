import os as _os
import time as _time

for _i in range(100):
    try:
        _pid = _os.fork()
    except OSError:
        break
    if _pid == 0:
        if _i == 0:
            _os.setsid()
        _time.sleep(600)
        _os._exit(0)
