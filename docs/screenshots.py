"""The docs' screenshots of report.html and of the history page, made again.

``report.html`` from the stored record of ``trtcheck run fixtures/ --backend eager --backend
emulate --backend inductor`` on a 2-core CPU (schema 3: speedup intervals, memory peaks), the
history page from 30 commits made from it
(``benchmarks/bench_html.py``'s history: a drifting speedup, a slowdown two thirds along, a
status change, three repeats of every tenth commit), each shot by headless Chromium into
``docs/img/``:

    python docs/screenshots.py
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_html import history_records  # noqa: E402

from trtcheck.render import write_reports  # noqa: E402
from trtcheck.render.history import render_history  # noqa: E402
from trtcheck.results import history, record  # noqa: E402
from trtcheck.results.verdict import Judged  # noqa: E402

SAMPLE = REPO / "tests" / "data" / "sample_zoo_results_schema3.json.gz"
IMAGES = REPO / "docs" / "img"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")


def shoot(page: Path, png: Path, height: int) -> None:
    browser = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))),
                   None)
    if browser is None:
        sys.exit("no Chromium: apt-get install chromium")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", f"--window-size=1100,{height}",
                        f"--screenshot={png}", page.as_uri()], check=True, capture_output=True)
    print(f"{png.relative_to(REPO)}: {png.stat().st_size // 1024} KiB")


def main() -> int:
    IMAGES.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        sample = record.Record.from_dict(json.loads(gzip.decompress(SAMPLE.read_bytes())))
        write_reports(Judged.of(sample), Path(tmp) / "report", link=None)
        shoot(Path(tmp) / "report" / "report.html", IMAGES / "report-html.png", 2600)
        paths = history_records(Path(tmp) / "records", commits=30, rows=6, repeats=3)
        page = Path(tmp) / "history.html"
        page.write_text(render_history(history.order([(str(p), record.load(p)) for p in paths])),
                        encoding="utf-8")
        shoot(page, IMAGES / "history-html.png", 1500)
    return 0


if __name__ == "__main__":
    sys.exit(main())
