"""The Mojo package as a resolved pathlib.Path."""

from pathlib import Path


def mojo_package():
    from stackcheck.toolchains.mojo_build import source

    return Path(source("study_relu")).resolve()
