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


class ImplError(Exception):
    """``--impl`` names something that cannot be imported; the message is one line."""


def load_module(spec: str) -> ModuleType:
    """Import ``spec``: a dotted module name or a path to a .py file (a student's homework).

    Every way this can go wrong (no such file, a folder, a syntax error, an import that raises)
    is an ImplError whose message is one line naming the file and line where it can."""
    as_path = spec.endswith(".py") or os.sep in spec or os.path.exists(spec)
    try:
        return _load_file(spec) if as_path else importlib.import_module(spec)
    except SyntaxError as error:
        shown = spec if error.filename and os.path.abspath(error.filename) == os.path.abspath(spec) else error.filename
        where = f"{shown}:{error.lineno}" if shown else spec
        raise ImplError(f"--impl {spec}: {where}: SyntaxError: {error.msg}") from None
    except ModuleNotFoundError as error:
        missing = "" if error.name == spec else f" (it imports {error.name!r}, which is not installed)"
        raise ImplError(f"--impl {spec}: no module named {error.name!r}{missing}; give a dotted module name "
                        "importable here or a path to a .py file") from None
    except ImplError:
        raise
    except Exception as error:  # the module ran and raised: say where
        frame = _last_frame_in(error, spec)
        raise ImplError(f"--impl {spec}: {frame}importing it raised {type(error).__name__}: {error}") from None


def _load_file(spec: str) -> ModuleType:
    path = os.path.abspath(spec)
    if os.path.isdir(path):
        raise ImplError(f"--impl {spec}: is a folder; give the .py file that defines the functions")
    if not os.path.exists(path):
        raise ImplError(f"--impl {spec}: no such file")
    name = "stackcheck_impl_" + os.path.splitext(os.path.basename(path))[0]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ImplError(f"--impl {spec}: not a Python file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _last_frame_in(error: BaseException, spec: str) -> str:
    """'file:line: ' of the deepest traceback frame inside the --impl file, or ''."""
    import traceback

    frames = [f for f in traceback.extract_tb(error.__traceback__) if os.path.basename(f.filename)
              == os.path.basename(spec)]
    return f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""


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
