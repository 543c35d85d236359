import pytest


class LaunchSpy:
    """Stands in for a Triton kernel object: records each launch grid, then launches the real kernel."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.grids = []

    def __getitem__(self, grid):
        self.grids.append(tuple(grid))
        return self.kernel[grid]


@pytest.fixture
def launches(monkeypatch):
    """Record every launch of stackcheck's Triton bias+ReLU kernel (compiled or interpreted)."""
    from stackcheck import triton_kernels

    spies = {name: LaunchSpy(getattr(triton_kernels, name)) for name in ("compiled_kernel", "interpreted_kernel")}
    for name, spy in spies.items():
        monkeypatch.setattr(triton_kernels, name, spy)
    return lambda: [grid for spy in spies.values() for grid in spy.grids]
