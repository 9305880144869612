"""``trtcheck.stack`` in fresh interpreters: torch found without importing it, .pth lines, the
module run as a script with the standard library only (as the Action's install step runs it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO
from trtcheck import stack


def test_installed_torch_is_found_without_importing_it_and_pinned() -> None:
    code = ("import sys, json; from trtcheck import stack; f = stack.find('torch');"
            "print(json.dumps([f.version, f.location, f.dists, 'torch' in sys.modules,"
            " stack.constraints({'torch': f})]))")
    version, location, dists, imported, pins = json.loads(subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    import torch

    assert version == torch.__version__ and not imported
    assert Path(torch.__file__).parent.parent == Path(location)
    assert dists == ["torch"] and pins == [f"torch=={torch.__version__}"]
    assert not stack.find("no_such_module_here").installed


def test_pth_lines_add_site_dirs_with_their_own_pth_files(tmp_path: Path) -> None:
    """A runner's site directory often holds .pth files itself (editable installs): the Action's
    venv processes them too."""
    runner_site, own_site = tmp_path / "runner site", tmp_path / "own"
    (runner_site / "pkg_src").mkdir(parents=True)
    (runner_site / "pkg_src" / "runner_mod.py").write_text("X = 1\n")
    (runner_site / "editable.pth").write_text(str(runner_site / "pkg_src") + "\n")
    own_site.mkdir()
    (own_site / stack.PTH).write_text("\n".join(stack.pth_lines([str(runner_site)])) + "\n")
    code = (f"import site; site.addsitedir({str(own_site)!r}); import runner_mod, sys;"
            f"print(runner_mod.X, sys.path.index({str(runner_site)!r}) > sys.path.index({str(own_site)!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "True"]


def test_script_runs_with_the_standard_library_only(tmp_path: Path) -> None:
    """As the install step runs it: by path, before trtcheck or its dependencies are installed."""
    proc = subprocess.run([sys.executable, "-S", str(REPO / "trtcheck" / "stack.py"), "--extras",
                           "dev", "--out", str(tmp_path)], capture_output=True, text=True,
                          check=False, cwd=tmp_path)
    # -S: no site-packages at all, so torch is not there and the install would bring one
    assert proc.returncode == 2, proc.stderr
    assert "torch is not installed" in proc.stdout and not proc.stderr
    ok = subprocess.run([sys.executable, str(REPO / "trtcheck" / "stack.py"), "--out",
                         str(tmp_path)], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "found torch " in ok.stdout
    marker = json.loads((tmp_path / stack.MARKER).read_text())
    assert marker["found"]["torch"]["version"] and marker["install_torch"] is False
    assert (tmp_path / stack.CONSTRAINTS).read_text().startswith("torch==")
