"""A virtual environment made from the running Python, for whatever needs a Python of its own that
still sees this one's packages (a notebook's kernel, a clone's `.venv`, an older library set).

``python -m venv --system-site-packages`` is not that: a venv made so sees its *base* interpreter's
site-packages, and where the running Python is itself a venv (a newcomer's set-up, CI's) the base
has none of the packages installed here. ``derived`` makes a venv whose own site folder comes first
(what is installed into it shadows the rest) and then lists the running Python's site folders in its
import order, each processed as a site folder (its ``.pth`` files run: an editable install's
import hook among them).

    python -m stackcheck.paths.venvs WHERE    makes one at WHERE and prints its python
"""

from __future__ import annotations

import site
import subprocess
import sys
import venv
from pathlib import Path


def site_folders() -> list[str]:
    """This interpreter's site folders in its import order: its user site where it processed one (a
    `pip install --user`), its venv's and its base's site-packages."""
    found = [*site.getsitepackages(), *([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])]
    found = [p for p in dict.fromkeys(found) if Path(p).is_dir()]
    return sorted(found, key=lambda p: sys.path.index(p) if p in sys.path else len(sys.path))


def derived(where: Path, site_dirs: list[str] | None = None) -> Path:
    """A venv at ``where`` that sees ``site_dirs`` (default: this Python's, ``site_folders``) after its
    own site folder; returns its python. Its ``pip`` is the one those folders hold, and installs into
    the new venv."""
    where = Path(where)
    venv.create(where, system_site_packages=False, with_pip=False, clear=True)
    python = where / "bin" / "python"
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    folders = site_folders() if site_dirs is None else site_dirs
    lines = [f"import site; site.addsitedir({folder!r})" for folder in folders]
    (Path(own.stdout.strip()) / "stackcheck-derived.pth").write_text("\n".join(lines) + "\n")
    return python


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m stackcheck.paths.venvs WHERE  (makes a venv there that sees this Python's packages)")
    print(derived(Path(sys.argv[1])))
