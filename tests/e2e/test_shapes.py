"""The dynamic zoo run through the CLI on lowering and emulate; the shape planning itself is in
tests/unit/program/test_shapes.py."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import TESTS, trtcheck

DYNAMIC_ZOO = TESTS / "dynamic"  # not under tests/zoos: every zoo there is run whole


def test_the_cli_runs_declared_ranges_on_lowering_and_emulate(tmp_path: Path) -> None:
    """One run of the dynamic zoo: each row at its example and at both ends of its declared
    ranges (the declared max, however far above the example); a complex input with a dynamic
    batch compiles under lowering (passed as its example tensor: Torch-TensorRT's Input has no
    complex dtype); a spec naming an input the forward does not have is an export error row.
    Lowering's compiled modules pass at every shape, and their saved artifacts then fail the
    deploy stage, each naming its owner: Torch-TensorRT 2.13.0's save re-exports the dynamic
    attention and specializes its batch, and saves the complex gain static."""
    proc = trtcheck("run", DYNAMIC_ZOO, "--backend", "lowering", "--backend", "emulate",
                    "--torch-tensorrt", "2.13.0", "--out", tmp_path, timeout=900)
    rows = {(r["model"], r["backend"]): r
            for r in json.loads((tmp_path / "results.json").read_text())["rows"]}
    assert proc.returncode == 1, proc.stdout + proc.stderr  # example_batch_mean fails
    for backend in ("lowering", "emulate"):
        gain = rows["complex_gain", backend]
        assert gain["status"] == ("error" if backend == "lowering" else "pass"), gain["message"]
        assert gain["shapes"] == [{"z": [8, 16]}, {"z": [1, 16]}, {"z": [32, 16]}]
        attention = rows["attention", backend]
        assert attention["status"] == ("error" if backend == "lowering" else "pass"), \
            attention["message"]
        assert attention["shapes"] == [{"ids": [4, 8]}, {"ids": [1, 2]}, {"ids": [16, 64]}]
        bad = rows["example_batch_mean", backend]
        assert bad["status"] == "fail" and bad["message"].startswith("at shape x=(1, 8): ")
        misnamed = rows["misnamed_dynamic_input", backend]
        assert (misnamed["status"], misnamed["stage"]) == ("error", "export"), misnamed
    gain, attention = rows["complex_gain", "lowering"], rows["attention", "lowering"]
    assert gain["stage"] == "deploy" and gain["message"].startswith(
        "deploy as exported_program: calling the loaded artifact at shape z=(1, 16) failed "
        "(Torch-TensorRT's exporter, which saved no dynamic dimension): ")
    [saved] = gain["evidence"]["deploy"]
    assert (saved["step"], saved["dynamic_dims"]) == ("run", {"saved": 0, "loaded": 0})
    assert attention["stage"] == "save" and attention["message"].startswith(
        "deploy as exported_program: torch_tensorrt.save(output_format='exported_program') "
        "failed (Torch-TensorRT's exporter): ")
    assert not rows["complex_gain", "emulate"]["evidence"].get("deploy")
    assert ("dynamic input ids passed as torch_tensorrt.Input(min_shape=(1, 2), opt_shape=(4, 8), "
            "max_shape=(16, 64))") in rows["attention", "lowering"]["evidence"]["notes"]
    assert ("dynamic input z passed as its example tensor, (8, 16) complex64 (Torch-TensorRT's "
            "Input has no complex dtype; the engine takes its range from the exported program's "
            "symbolic shapes), and run at (1, 16) and (32, 16)"
            ) in rows["complex_gain", "lowering"]["evidence"]["notes"]
