"""The suite's data files: fixtures/ (claim catalogue, hand example), mojo/ (Mojo sources) and
course/ (the course's listings).

In a checkout they sit beside the package; an installed wheel ships them as the packages
``stackcheck.fixtures``, ``stackcheck.mojo`` and ``stackcheck.listings``. This is the one place that knows both.
"""

from __future__ import annotations

import importlib.resources
import os
import site
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # what holds stackcheck/: the checkout, or site-packages
PACKAGES = {"fixtures": "stackcheck.fixtures", "mojo": "stackcheck.mojo", "course": "stackcheck.listings"}


def path(folder: str, *parts: str) -> Path:
    """``folder``/``parts`` from the checkout when there is one, else from the installed package."""
    checkout = ROOT / folder
    if checkout.is_dir():
        return checkout.joinpath(*parts)
    found = importlib.resources.files(PACKAGES[folder])  # a namespace package: join before converting
    for part in parts:
        found = found / part
    return Path(str(found))


def user_site() -> str | None:
    """The user site folder (``pip install --user``'s packages) where this Python processed it, else
    None: a child Python started with -I, or with another HOME, would not find it by itself."""
    user = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    return user if user in sys.path else None


def cache_dir() -> Path:
    """Where the suite keeps builds and locks: $STACKCHECK_CACHE, else ~/.cache/stackcheck."""
    return Path(os.environ.get("STACKCHECK_CACHE", Path.home() / ".cache" / "stackcheck"))


def checkout_files(root: Path = ROOT) -> list[Path] | None:
    """The files of the checkout at ``root`` as a clone or a students' copy has them: tracked, and
    new ones git does not ignore. None where ``root`` is no git checkout (an installed wheel, an
    exported copy)."""
    if not (root / ".git").exists():
        return None
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=root, capture_output=True, text=True)
    if listed.returncode:
        return None
    return [root / name for name in listed.stdout.splitlines() if (root / name).is_file()]
