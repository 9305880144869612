"""The committed converter table is what its script writes (the script in a process of its own,
on the real Torch-TensorRT code); float64 placement itself is in
tests/unit/emulation/test_float64_placement.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from trtcheck.emulation import converters


def test_the_committed_table_is_what_the_script_generates(ttrt_releases, tmp_path: Path) -> None:
    out = tmp_path / "converters.json"
    subprocess.run([sys.executable, "-m", "trtcheck.backends.lowering.converter_table",
                    "--release", converters.table().release, "--out", str(out)],
                   check=True, capture_output=True, cwd=tmp_path)
    assert json.loads(out.read_text()) == json.loads(converters.TABLE.read_text())
    assert out.read_text() == converters.TABLE.read_text()
