"""report.html and the history page in a real browser: headless Chromium (the Debian package
``chromium``, which ``.ci/run`` and the CI workflow install) renders each to a PNG and dumps its
DOM. The pages must not be blank, must carry their charts with JavaScript on and off, and a zoo
whose names and messages carry markup must run nothing.

Skipped, with the reason shown, only where no Chromium is installed."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import REPO
from trtcheck.render import write_reports
from trtcheck.render.history import render_history
from trtcheck.results import history
from trtcheck.results.record import Record
from trtcheck.results.verdict import Judged
from trtcheck.status import Status

# `trtcheck run fixtures/ --backend eager --backend emulate --backend inductor` on a 2-core CPU:
# schema 3, with speedup intervals and memory peaks
SAMPLE = REPO / "tests" / "data" / "sample_zoo_results_schema3.json.gz"
BROWSER = next((found for name in ("chromium", "chromium-browser", "google-chrome")
                if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="no Chromium found: install the Debian package chromium "
                            "(apt-get install chromium), as .ci/run and the CI workflow do")
# Headless, and quiet on a closed network: without the background-networking flags Chromium
# waits on requests that cannot be answered.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0")
HOSTILE = ('<script>document.body.setAttribute("data-pwned","1")</script>',
           '<img src=x onerror="document.body.setAttribute(\'data-pwned\',\'2\')">',
           '</svg><svg onload="document.body.setAttribute(\'data-pwned\',\'3\')">')


def browse(page: Path, *, png: Path | None = None, script: bool = True) -> tuple[str, str]:
    """The DOM Chromium made of ``page`` after loading it, and its log; a screenshot to ``png``
    (at half scale: enough to see ink, quick to decode). ``script=False`` blocks JavaScript by
    the profile's content setting, as a user who turned it off."""
    with tempfile.TemporaryDirectory() as profile:
        if not script:
            (Path(profile) / "Default").mkdir()
            (Path(profile) / "Default" / "Preferences").write_text(json.dumps(
                {"profile": {"default_content_setting_values": {"javascript": 2}}}))
        args = [BROWSER, *FLAGS, f"--user-data-dir={profile}", "--window-size=1280,1600",
                "--force-device-scale-factor=0.5", *([f"--screenshot={png}"] if png else []),
                "--dump-dom", page.as_uri()]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr


def pixels(png: Path) -> np.ndarray:
    """The pixels (height × width × channels) of an 8-bit RGB or RGBA PNG, without an imaging
    library: rows of filter None, Sub and Up are undone with numpy, Average and Paeth by hand."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and color in (2, 6)
    bpp = 3 if color == 2 else 4
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, width * bpp + 1)
    out = np.zeros((height, width * bpp), np.uint8)
    prev = np.zeros(width * bpp, np.uint8)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:]
        if kind == 0:
            row = line.copy()
        elif kind == 1:
            summed = np.cumsum(line.reshape(width, bpp), axis=0, dtype=np.uint32)
            row = (summed % 256).astype(np.uint8).ravel()
        elif kind == 2:
            row = line + prev
        else:
            row = _by_hand(line.tolist(), prev.tolist(), bpp, int(kind))
        out[y] = row
        prev = out[y]
    return out.reshape(height, width, bpp)


def _by_hand(line: list[int], prev: list[int], bpp: int, kind: int) -> np.ndarray:
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if kind == 3:
            line[i] = (line[i] + (a + b) // 2) & 0xFF
            continue
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    return np.array(line, np.uint8)


def inked(png: Path) -> float:
    """The share of the screenshot's pixels that differ from its top-left pixel (the page's
    background)."""
    image = pixels(png)[:, :, :3]
    return float((image != image[0, 0]).any(axis=2).mean())


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("pages")
    data = json.loads(gzip.decompress(SAMPLE.read_bytes()))
    sample = Record.from_dict(data)
    write_reports(Judged.of(sample), where / "sample", link=None)
    evil = Record.from_dict(data)
    for i, row in enumerate(evil.rows[:6]):
        payload = HOSTILE[i % len(HOSTILE)]
        row.case_id, row.model = f"{payload}::{row.case_id}", payload
        row.status, row.stage, row.message = Status.FAIL, "compare", f"failed {payload}"
        row.traceback = (f"Traceback (most recent call last):\n  File \"{payload}\", line 1, in x\n"
                         f"E: {payload}\n")
    evil.environment["device_name"] = HOSTILE[0]
    write_reports(Judged.of(evil), where / "evil", link=None)
    recs = []
    for n in range(4):
        rec = Record.from_dict(data)
        rec.environment.update(git_commit=f"{n:x}" * 40, git_commit_time=f"2026-01-0{n + 1}T00:00:00Z")
        recs.append((str(n), rec))
    (where / "history").mkdir()
    (where / "history" / "history.html").write_text(render_history(history.order(recs)), encoding="utf-8")
    return {"report": where / "sample" / "report.html", "evil": where / "evil" / "report.html",
            "history": where / "history" / "history.html"}


def _charts(dom: str, section: str) -> int:
    part = dom.split(f'<section id="{section}">')[1].split("</section>")[0]
    return len(re.findall(r"<svg\b", part))


def test_the_sample_report_renders_with_its_charts(pages: dict[str, Path], tmp_path: Path) -> None:
    png = tmp_path / "report.png"
    dom, log = browse(pages["report"], png=png)
    assert inked(png) > 0.02, "the screenshot is blank"
    assert _charts(dom, "accuracy") == 1 and _charts(dom, "speed") == 1
    assert _charts(dom, "memory") == 1
    assert '<input type="search" class="filter"' in dom  # the script ran: the policy allows it
    assert "Refused to" not in log, log  # nothing the policy had to block


def test_the_report_reads_with_javascript_off(pages: dict[str, Path], tmp_path: Path) -> None:
    png = tmp_path / "report.png"
    dom, _ = browse(pages["report"], png=png, script=False)
    assert inked(png) > 0.02, "the screenshot is blank"
    assert _charts(dom, "accuracy") == 1 and _charts(dom, "speed") == 1
    assert _charts(dom, "memory") == 1
    assert 'class="filter"' not in dom  # nothing ran, and nothing was needed
    assert "indices::embed_gather[int64]" in dom


def test_the_history_page_renders_with_its_charts(pages: dict[str, Path], tmp_path: Path) -> None:
    png = tmp_path / "history.png"
    dom, log = browse(pages["history"], png=png)
    assert inked(png) > 0.02, "the screenshot is blank"
    assert len(re.findall(r'<svg[^>]*class="series"', dom)) >= 10
    assert "Refused to" not in log, log


def test_a_hostile_zoo_runs_nothing_and_the_page_still_renders(pages: dict[str, Path],
                                                                tmp_path: Path) -> None:
    source = pages["evil"].read_text(encoding="utf-8")
    assert source.count("<script>") == 1 and not re.search(r"<[^>]*\son\w+=", source)
    png = tmp_path / "evil.png"
    dom, _ = browse(pages["evil"], png=png)
    assert "data-pwned" not in dom.split("<body")[1].split(">")[0]  # no payload ran
    assert dom.count("<script>") == 1 and "<img" not in dom
    assert "&lt;script&gt;document.body.setAttribute" in dom  # shown as text
    assert _charts(dom, "accuracy") == 1 and _charts(dom, "speed") == 1
    assert inked(png) > 0.02
