import os as _os

with open("/proc/self/status") as _f:
    _status = dict(line.split(":", 1) for line in _f.read().splitlines() if ":" in line)
_caps = int(_status.get("CapEff", "0").strip(), 16)
if _os.getuid() == 0 or _os.geteuid() == 0 or _caps or _status.get("NoNewPrivs", "0").strip() != "1":
    _spoil({"uid": _os.getuid(), "CapEff": hex(_caps), "NoNewPrivs": _status.get("NoNewPrivs")})
