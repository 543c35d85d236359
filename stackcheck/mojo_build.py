"""``python -m stackcheck.mojo_build DIR``: build the Mojo GPU programs on a machine with Mojo, for a
GPU machine without it to run with ``--mojo-prebuilt DIR`` (the builder is
stackcheck.toolchains.mojo_build): the suite's own, and the course's standalone ones, as written
(§10.5's listing, which prints its own check)."""

import sys
from pathlib import Path

from stackcheck.toolchains.mojo_build import COURSE_RESIZED, listing_program_name, main, resized, resized_name


def course_programs(folder: Path) -> dict[str, Path]:
    """The course's standalone Mojo programs (a Mojo listing with a file name that is not a
    package), written into ``folder``, by their prebuilt names; and §10.5's at a size no block
    divides (``resized``), where its bounds check has threads to stop."""
    from stackcheck.course import listings

    found = {}
    for listing in listings.listings_of(listings.sybil().parse(listings.shipped())):
        if listings.standalone(listing):
            src = folder / Path(listing.file).name
            src.write_text(listing.source, encoding="utf-8")
            found[listing_program_name(listing.section)] = src
            if listing.section == "10.5":
                other = folder / f"{src.stem}_resized.mojo"
                other.write_text(resized(listing.source, COURSE_RESIZED), encoding="utf-8")
                found[resized_name(COURSE_RESIZED)] = other
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], course_programs))
