"""``trtcheck report``, ``diff``, ``merge`` and ``history`` run where torch cannot be imported: the
merge job of a matrix, or a laptop reading an artifact."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO

# Any import of torch (or of a module under it) raises, as on a machine without torch.
BLOCK = """
import sys
class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError(f"torch is blocked in this test: {name}")
        return None
sys.meta_path.insert(0, _NoTorch())
from trtcheck.cli import main
sys.exit(main(sys.argv[1:]))
"""


def trtcheck_without_torch(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCK, *map(str, args)], capture_output=True,
                          text=True, cwd=REPO, timeout=120)


def _record(tmp_path: Path, name: str) -> Path:
    data = json.loads(gzip.decompress((REPO / "tests/data/sample_zoo_results.json.gz").read_bytes()))
    path = tmp_path / name / "results.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    return path


def test_report_diff_merge_and_history_import_no_torch(tmp_path: Path) -> None:
    a, b = _record(tmp_path, "a"), _record(tmp_path, "b")
    report = trtcheck_without_torch("report", a, "--out", tmp_path / "report")
    assert report.returncode in (0, 1), report.stderr
    assert (tmp_path / "report" / "report.md").is_file()
    assert "Traceback" not in report.stderr

    diff = trtcheck_without_torch("diff", a, b)
    assert diff.returncode in (0, 1), diff.stdout + diff.stderr  # 1: the record has failing rows
    assert "78 rows unchanged" in diff.stdout
    assert "Traceback" not in diff.stderr

    merged = trtcheck_without_torch("merge", a, "--out", tmp_path / "merged")
    assert merged.returncode in (0, 1), merged.stdout + merged.stderr
    assert (tmp_path / "merged" / "results.json").is_file()
    assert "Traceback" not in merged.stderr

    drawn = trtcheck_without_torch("history", a, b.parent, "--out", tmp_path / "history")
    assert drawn.returncode == 0, drawn.stdout + drawn.stderr
    assert "<svg" in (tmp_path / "history" / "history.html").read_text(encoding="utf-8")
    assert (tmp_path / "report" / "report.html").is_file()


def test_the_block_does_block_torch(tmp_path: Path) -> None:
    proc = trtcheck_without_torch("analyze", REPO / "fixtures", "--out", tmp_path)  # builds here
    assert "blocked" in proc.stdout + proc.stderr or proc.returncode != 0


# Whether a command left torch loaded in its own process (finding where it is installed is not
# loading it: the environment record asks where each package came from).
PROBE = ("import sys; from trtcheck.cli import main; code = main(sys.argv[1:]); "
         "print('torch loaded' if 'torch' in sys.modules else 'no torch', code)")


def test_an_isolated_cpu_run_and_list_load_torch_only_in_their_children(tmp_path: Path) -> None:
    """The zoo is imported by the collector and run by the workers: the parent of a run that
    names its backends never loads torch (one torch import per run, not two)."""
    zoo = REPO / "tests" / "zoos" / "healthy"
    for argv in (["run", zoo, "--backend", "eager", "--device", "cpu", "-q", "--out", tmp_path / "o"],
                 ["list", zoo]):
        proc = subprocess.run([sys.executable, "-c", PROBE, *map(str, argv)], capture_output=True,
                              text=True, cwd=REPO, timeout=300)
        assert proc.stdout.splitlines()[-1] == "no torch 0", proc.stdout + proc.stderr
    rows = json.loads((tmp_path / "o" / "results.json").read_text())["rows"]
    assert rows and {r["status"] for r in rows} == {"pass"}
