from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.helpers import ZOOS, Ran


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every end-to-end test starts processes: all are ``slow``, so ``-m "not slow"`` is a fast
    loop."""
    for item in items:
        if "/tests/e2e/" in str(item.path):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def fault_zoo(shared: Callable[..., Ran]) -> Ran:
    """The fault zoo (crashes, a hang, import errors, hostile names) beside the healthy and the
    stateful models, run serially on eager and emulate on the CPU, once for the suite:
    ``test_run.py`` checks each fault's row, ``test_scale.py`` compares workers and shards with
    it, ``test_mutation.py`` reads the state zoo's rows. On the CPU the memory limit caps
    address space, which CUDA reserves in bulk."""
    return shared("faults", "run", ZOOS, "-k", "faults or healthy or state", "--timeout", "15",
                  "--device", "cpu", "--memory-limit", "6144", "--backend", "eager",
                  "--backend", "emulate", timeout=900)
