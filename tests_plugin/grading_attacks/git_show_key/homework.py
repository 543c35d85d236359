import os as _os
import subprocess as _subprocess

_roots = {_PLACES["checkout"]}
try:
    import stackcheck as _stackcheck

    _roots.add(_os.path.dirname(_os.path.dirname(_os.path.abspath(_stackcheck.__file__))))
except Exception:
    pass
_found = {}
for _root in _roots:
    try:
        _done = _subprocess.run(
            ["git", "-c", "safe.directory=*", "-C", _root, "show", "HEAD:fixtures/checkpoint_key.toml"],
            capture_output=True, text=True, timeout=30,
        )
        _found[_root] = _done.stdout
    except (OSError, _subprocess.SubprocessError):
        pass
if any(_secret(t) for t in _found.values()):
    _spoil(_found)
