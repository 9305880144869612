from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every end-to-end test starts processes: all are ``slow``, so ``-m "not slow"`` is a fast
    loop."""
    for item in items:
        if "/tests/e2e/" in str(item.path):
            item.add_marker(pytest.mark.slow)
