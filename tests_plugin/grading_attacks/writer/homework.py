import os as _os

_wrote = []
for _path in (
    _os.path.join(_os.path.dirname(_PLACES["submissions"]), "ESCAPED-writer.txt"),
    _os.path.join(_PLACES["victim"], "ESCAPED-writer.txt"),
    *(_os.path.join(_home, "ESCAPED-writer.txt") for _home in _PLACES["homes"]),
):
    try:
        with open(_path, "w") as _f:
            _f.write("escaped")
        _wrote.append(_path)
    except OSError:
        pass
if _wrote:
    _spoil(_wrote)
