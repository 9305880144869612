"""Merging shard records of 10,000 rows and rendering every report.

Builds ``--shards`` shard records holding ``--rows`` rows together, copied from the sample zoo's
recorded rows (``tests/data/sample_zoo_results.json.gz``) under new case ids, then times
:func:`trtcheck.results.merge.merge` plus :func:`trtcheck.render.write_reports` (results.json,
junit.xml, report.md, comment.md) in this process. Target: at most 2 s. report.html, which
``write_reports`` writes too, is timed on its own and left out of that figure. The whole
``trtcheck merge`` command, which also starts Python and imports torch, is timed alongside.

    python benchmarks/bench_merge.py [--rows 10000] [--shards 4] [--repeat 3]
    python benchmarks/bench_merge.py --quick    # 200 rows, 2 shards, once: checks the code path
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import trtcheck
from trtcheck.cli.github import link_for
from trtcheck.config.settings import ROW_SETTINGS
from trtcheck.execution.shard import describe
from trtcheck.render import render_html, write_reports
from trtcheck.results import record
from trtcheck.results.merge import merge
from trtcheck.results.record import gc_paused
from trtcheck.results.verdict import Judged

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "tests" / "data" / "sample_zoo_results.json.gz"
TARGET_S = 2.0


class _Case:
    def __init__(self, case_id: str) -> None:
        self.case_id = case_id


def make_shards(where: Path, rows: int, shards: int) -> list[Path]:
    sample = record.Record.from_dict(json.loads(gzip.decompress(SAMPLE.read_bytes())))
    made = [replace(sample.rows[i % len(sample.rows)],
                    case_id=f"zoo{i // len(sample.rows)}/{sample.rows[i % len(sample.rows)].case_id}")
            for i in range(rows)]
    cases = [_Case(r.case_id) for r in made]
    paths = []
    per = -(-rows // shards)
    for i in range(shards):
        part = made[i * per:(i + 1) * per]
        # written by this trtcheck, as the shards of a run are
        env = {**sample.environment, "trtcheck": trtcheck.__version__,
               "shard": describe(i + 1, shards, cases, cases[i * per:(i + 1) * per])}
        path = where / f"shard{i + 1}" / "results.json"
        record.save(record.Record(env, sample.options, part, sample.analyses), path)
        paths.append(path)
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="200 rows, 2 shards, once")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.shards, args.repeat = 200, 2, 1
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_shards(Path(tmp), args.rows, args.shards)
        inside, whole, page = [], [], []
        for i in range(args.repeat):
            t0 = time.perf_counter()
            merged = merge(paths, ROW_SETTINGS)
            write_reports(Judged.of(merged), Path(tmp) / f"merged{i}", link=link_for(merged))
            total = time.perf_counter() - t0
            # report.html, which write_reports also writes, is measured on its own
            t0 = time.perf_counter()
            with gc_paused():
                render_html(Judged.of(merged), link=link_for(merged))
            page.append(time.perf_counter() - t0)
            inside.append(total - page[-1])
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "trtcheck", "merge", *map(str, paths), "--out",
                            f"{tmp}/cli{i}"], capture_output=True, check=False)
            whole.append(time.perf_counter() - t0)
        size = sum(p.stat().st_size for p in (Path(tmp) / "merged0").iterdir()) / 2**20
    print(f"| what ({len(merged.rows)} rows, {args.shards} shards, {size:.1f} MiB of reports) "
          "| median s | min s | max s |")
    print("|---|---|---|---|")
    for label, times in (("merge + render every report but report.html", inside),
                         ("report.html alone (rendered as write_reports does)", page),
                         ("`trtcheck merge` command (Python start and torch import included)", whole)):
        print(f"| {label} | {statistics.median(times):.2f} | {min(times):.2f} | {max(times):.2f} |")
    met = statistics.median(inside) <= TARGET_S
    print(f"\nmerge + render: {statistics.median(inside):.2f} s (target <= {TARGET_S} s): "
          f"{'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
