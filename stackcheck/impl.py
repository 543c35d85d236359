"""``--impl MODULE``: swap in another implementation of some or all reference names."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import ModuleType

from stackcheck import reference

SURFACE = tuple(name for name in dir(reference) if not name.startswith("_") and callable(getattr(reference, name))
                and getattr(getattr(reference, name), "__module__", "") == reference.__name__)


def load_module(spec: str) -> ModuleType:
    """Import ``spec``: a dotted module name or a path to a .py file (a student's homework)."""
    if spec.endswith(".py") or os.sep in spec:
        path = os.path.abspath(spec)
        if not os.path.exists(path):
            raise FileNotFoundError(f"--impl {spec}: no such file")
        name = "stackcheck_impl_" + os.path.splitext(os.path.basename(path))[0]
        module_spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        module_spec.loader.exec_module(module)
        return module
    return importlib.import_module(spec)


class Impl:
    """Attribute access returns the --impl module's version of a name, else the reference one."""

    def __init__(self, module: ModuleType | None):
        self.module = module
        unknown = sorted(n for n in vars(module) if not n.startswith("_") and callable(getattr(module, n))
                         and n not in SURFACE and getattr(getattr(module, n), "__module__", None) == module.__name__
                         ) if module else []
        self.provided = sorted(n for n in SURFACE if module is not None and hasattr(module, n))
        self.unknown = unknown

    def __getattr__(self, name: str):
        if name not in SURFACE:
            raise AttributeError(f"{name!r} is not part of the stackcheck implementation surface {SURFACE}")
        if self.module is not None and hasattr(self.module, name):
            return getattr(self.module, name)
        return getattr(reference, name)

    def __repr__(self) -> str:
        return f"<Impl: {self.describe()}>"

    def describe(self) -> str:
        if self.module is None:
            return "stackcheck.reference (the course's solutions)"
        extra = f"; ignored (not in the surface): {', '.join(self.unknown)}" if self.unknown else ""
        return (f"{self.module.__name__} provides {', '.join(self.provided) or 'nothing of the surface'}; "
                f"the rest falls back to stackcheck.reference{extra}")
