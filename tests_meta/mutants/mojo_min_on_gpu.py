"""A Mojo package whose study_relu is right on the CPU and takes min(z, 0) on a GPU: the GPU kernel
still holds one FMNMX and no FFMA, and only FMNMX's predicate operand says min (§10.4)."""

from pathlib import Path


def mojo_package():
    return Path(__file__).with_suffix("") / "study_relu"
