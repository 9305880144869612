"""The state zoo (inputs and buffers a model modifies) run end to end; the mutation checks
themselves are in tests/unit/measure/test_mutation.py."""

from __future__ import annotations

from tests.helpers import Ran


def test_the_state_zoo_passes_end_to_end(fault_zoo: Ran) -> None:
    """Its rows in the run it shares with the fault zoo (``tests/e2e/conftest.py``)."""
    state = [r for r in fault_zoo.rows() if r["case_id"].startswith("state/")]
    assert [(r["backend"], r["status"]) for r in state] == [("eager", "pass"), ("emulate", "pass")] * 3, \
        fault_zoo.stdout + fault_zoo.stderr
