from stackcheck.env import stack_missing
from stackcheck.plugin import STATE


def _needs_max(item) -> bool:
    return item.get_closest_marker("max") is not None


def pytest_collection_modifyitems(items):
    """MAX tests last: their one compile (about a minute cold) then overlaps all the others."""
    items.sort(key=_needs_max)


def pytest_collection_finish(session):
    """Start that compile at once, on a background thread, if any selected test needs it."""
    if stack_missing("max") or not any(_needs_max(item) for item in session.items):
        return
    from stackcheck import max_graphs

    max_graphs.prefetch(session.config.stash[STATE]["impl"], with_mojo=stack_missing("mojo") is None)
