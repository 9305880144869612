"""The state zoo (inputs and buffers a model modifies) run end to end; the mutation checks
themselves are in tests/unit/measure/test_mutation.py."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import ZOOS, trtcheck

ZOO = ZOOS / "state"


def test_the_state_zoo_passes_end_to_end(tmp_path: Path) -> None:
    done = trtcheck("run", ZOO, "--backend", "eager", "--backend", "emulate",
                    "--out", tmp_path / "out", "--timeout", "120")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "total 6: 6 pass" in done.stdout
