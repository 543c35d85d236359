"""§11.2's Triton wrapper as the course writes it (the listing's own code, run as written), with its
kernel's launches counted, for the claim that it refuses what it does not support before launching."""

from __future__ import annotations

from typing import Callable

from stackcheck.stacks import available

WRAPPER = "11.2-triton"  # the listing's id in the shipped course


def listing_source(listing_id: str = WRAPPER) -> str:
    """The code of the shipped course's listing ``listing_id`` (read with Sybil: a skip with the install
    hint where it is missing, a failure under ``--require sybil``)."""
    try:
        from stackcheck.course import listings
    except ImportError as error:
        if "sybil" not in str(error):
            raise
        raise available.Missing(f"the course's listings are read with Sybil ({error}): pip install sybil", "sybil")

    (path,) = listings.documents(str(listings.shipped()))
    document = listings.sybil().parse(path)
    found = [x for x in listings.listings_of(document) if x.id == listing_id]
    if not found:
        raise LookupError(f"no listing {listing_id} in {path}")
    return found[0].source


def course_wrapper(source: str) -> tuple[Callable, list]:
    """(the listing's ``bias_relu``, the list its kernel's launches are appended to). The listing runs
    as a module, not as ``__main__``; each launch still runs the real kernel."""
    import hashlib
    import importlib.util
    import os
    import uuid

    from stackcheck.paths.data import cache_dir

    # Triton reads a kernel's source from its file: one file per content in the suite's cache, written
    # whole (a name of its own, then renamed), never a temporary folder a killed run would leave behind
    folder = cache_dir() / "course-11-2" / hashlib.sha256(source.encode()).hexdigest()[:16]
    path = folder / "course_06_triton_bias_relu.py"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        staged = folder / f".{uuid.uuid4().hex}.tmp"
        staged.write_text(source, encoding="utf-8")
        os.replace(staged, path)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    namespace = vars(module)
    launches: list = []
    kernel = namespace["bias_relu_kernel"]

    class Counted:
        def __getitem__(self, grid):
            launches.append(grid)
            return kernel[grid]

    namespace["bias_relu_kernel"] = Counted()
    return namespace["bias_relu"], launches


def assert_refused(wrapper: Callable, launches: list, args: tuple, what: str, words: tuple[str, ...]) -> str:
    """``wrapper(*args)`` raises the listing's ValueError naming one of ``words`` (its reason) before
    any launch: an error from Triton's launcher, after one, is no refusal."""
    before = len(launches)
    try:
        wrapper(*args)
    except Exception as error:  # noqa: BLE001 - whichever error, it is judged below
        said = f"{type(error).__name__}: {error}"
        assert len(launches) == before, f"the course's wrapper launched its kernel for {what} before failing: {said}"
        assert isinstance(error, ValueError), f"the course's wrapper failed on {what} without refusing it: {said}"
    else:
        raise AssertionError(f"the course's wrapper accepted {what}: the course says it does not support it")
    assert any(w in said for w in words), f"the course's wrapper refused {what} for another reason: {said!r}"
    return said
