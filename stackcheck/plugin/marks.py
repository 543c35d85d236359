"""What a test's marks say of the claims it tests: which claims (``@pytest.mark.claim``), and whether
it shows their statement or checks an instrument or a precondition of it (``@pytest.mark.checks``)."""

from __future__ import annotations

import pytest


def claims_of(item: pytest.Item) -> list[str]:
    return [cid for mark in item.iter_markers("claim") for cid in mark.args]


def checks_of(item: pytest.Item) -> str | None:
    """What a claim test checks instead of its claim's statement (``@pytest.mark.checks("...")``: an
    instrument the statement is read with, a precondition of it), or None: it shows the statement."""
    mark = item.get_closest_marker("checks")
    if mark is None:
        return None
    if len(mark.args) != 1 or not isinstance(mark.args[0], str) or not mark.args[0].strip():
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.checks takes one sentence, what it checks instead")
    return mark.args[0]
