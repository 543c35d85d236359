"""``python -m stackcheck.mojo_build DIR``: build the Mojo GPU programs on a machine with Mojo, for a
GPU machine without it to run with ``--mojo-prebuilt DIR`` (the builder is
stackcheck.toolchains.mojo_build): the suite's own, and the course's standalone ones, as written
(§10.5's listing, which prints its own check)."""

import sys
from pathlib import Path

from stackcheck.toolchains.mojo_build import listing_program_name, main


def course_programs(folder: Path) -> dict[str, Path]:
    """The course's standalone Mojo programs (a Mojo listing with a file name that is not a
    package), written into ``folder``, by their prebuilt names."""
    from stackcheck.course import listings

    found = {}
    for listing in listings.listings_of(listings.sybil().parse(listings.shipped())):
        if listings.standalone(listing):
            src = folder / Path(listing.file).name
            src.write_text(listing.source, encoding="utf-8")
            found[listing_program_name(listing.section)] = src
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], course_programs))
