"""``python -m stackcheck.mojo_build DIR``: build the Mojo GPU programs on a machine with Mojo, for a
GPU machine without it to run with ``--mojo-prebuilt DIR`` (the builder is
stackcheck.toolchains.mojo_build)."""

import sys

from stackcheck.toolchains.mojo_build import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
