"""Size and time of ``report.html`` and of the history page.

``report.html``: records of ``--rows`` rows (1,000 and 10,000 by default) made from the sample
zoo's recorded rows (``tests/data/sample_zoo_results.json.gz``) under new case ids, each
measured row given a speedup interval and memory peaks as a schema-3 run records them. Times
:func:`trtcheck.render.html.render_html` alone and :func:`trtcheck.render.write_reports` (every
report, report.html among them). Targets: 1,000 rows under 2 MB; 10,000 rows under 10 MB and
rendered in at most 2 s.

History: ``--commits`` records (200) of ``--history-rows`` rows (50) of successive commits, a
drifting speedup, a step down at two thirds and a status change, then times
:func:`trtcheck.results.history.order` plus :func:`trtcheck.render.history.render_history` (the
records already loaded) and the ``trtcheck history`` command (loading them too).

    python benchmarks/bench_html.py [--rows 1000 10000] [--commits 200] [--history-rows 50]
    python benchmarks/bench_html.py --quick    # 100 rows, 5 commits of 10 rows, once
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from trtcheck.render import write_reports
from trtcheck.render.history import render_history
from trtcheck.render.html import render_html
from trtcheck.results import history, record
from trtcheck.results.figures import ALLOCATOR, Memory
from trtcheck.results.rows import Row
from trtcheck.results.verdict import Judged
from trtcheck.status import Status

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "tests" / "data" / "sample_zoo_results.json.gz"
MB = 10**6
TARGETS = {1_000: (2 * MB, None), 10_000: (10 * MB, 2.0)}  # rows: (bytes, seconds)


def sample() -> record.Record:
    rec = record.Record.from_dict(json.loads(gzip.decompress(SAMPLE.read_bytes())))
    rec.source_schema = record.SCHEMA_VERSION
    return rec


def measured(row: Row, speedup: float, rng: random.Random) -> Row:
    """The row as a schema-3 run records it: a speedup with its interval (the backend's time
    eager's over it), memory peaks."""
    if row.latency is None or row.prediction:
        return row
    half = speedup * rng.uniform(0.01, 0.08)
    ms = row.latency.eager.median_ms / speedup
    backend = replace(row.latency.backend, median_ms=ms, ci_low_ms=ms * (1 - half / speedup),
                      ci_high_ms=ms * (1 + half / speedup))
    latency = replace(row.latency, backend=backend, paired_speedup=speedup,
                      speedup_low=speedup - half, speedup_high=speedup + half)
    eager = int(rng.uniform(0.5, 200) * 2**20)
    return replace(row, latency=latency,
                   memory=Memory(ALLOCATOR, eager=eager, backend=int(eager * rng.uniform(0.6, 1.6))))


def big_record(rows: int, seed: int = 0) -> record.Record:
    base, rng = sample(), random.Random(seed)
    made = []
    for i in range(rows):
        r = base.rows[i % len(base.rows)]
        made.append(measured(replace(r, case_id=f"zoo{i // len(base.rows)}/{r.case_id}"),
                             rng.lognormvariate(0, 0.6), rng))
    return record.Record(base.environment, base.options, made, base.analyses)


def history_records(where: Path, commits: int, rows: int, seed: int = 0,
                    repeats: int = 1) -> list[Path]:
    """A record per commit (``repeats`` records of every tenth commit)."""
    base, rng = sample(), random.Random(seed)
    timed = [r for r in base.rows if r.latency is not None and not r.prediction]
    picked = (timed * (rows // len(timed) + 1))[:rows]
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    level = [rng.lognormvariate(0, 0.5) for _ in picked]
    paths = []
    for c in range(commits):
        step = 0.8 if c >= 2 * commits // 3 else 1.0  # a slowdown two thirds along
        out = []
        for i, r in enumerate(picked):
            level[i] *= rng.lognormvariate(0, 0.01)
            row = measured(replace(r, case_id=f"h{i}/{r.case_id}"), level[i] * step, rng)
            if i == 0 and c >= commits // 2:
                row = replace(row, status=Status.FAIL, message="1 of 1 outputs failed")
            out.append(row)
        when = start + timedelta(hours=c)
        sha = hashlib.sha1(str(c).encode()).hexdigest()
        for k in range(repeats if c % 10 == 9 else 1):
            env = {**base.environment, "git_commit": sha, "git_commit_time": when.isoformat(),
                   "started": (when + timedelta(minutes=5 + 30 * k)).isoformat()}
            rows_k = out if k == 0 else [measured(r, r.latency.speedup * rng.lognormvariate(0, 0.05), rng)
                                         if r.latency else r for r in out]
            path = where / f"c{c}-{k}" / "results.json"
            record.save(record.Record(env, base.options, rows_k, base.analyses), path)
            paths.append(path)
    return paths


def timed(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--history-rows", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="100 rows, 5 commits of 10 rows, once")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.commits, args.history_rows, args.repeat = [100], 5, 10, 1
    print("| what | size | median s | min s | max s | target | met |")
    print("|---|---|---|---|---|---|---|")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.rows:
            rec = big_record(n)
            page = render_html(Judged.of(rec))
            size = len(page.encode())
            html_s = timed(lambda rec=rec: render_html(Judged.of(rec)), args.repeat)
            all_s = timed(lambda rec=rec, n=n: write_reports(Judged.of(rec), Path(tmp) / f"r{n}", link=None),
                          args.repeat)
            limit, seconds = TARGETS.get(n, (None, None))
            ok = (limit is None or size < limit) and (seconds is None or max(html_s) <= seconds)
            failed |= not ok
            target = " and ".join(t for t in (f"< {limit // MB} MB" if limit else "",
                                              f"≤ {seconds:g} s" if seconds else "") if t) or "—"
            print(f"| report.html, {n:,} rows | {size / MB:.2f} MB | {_stats(html_s)} | {target} | "
                  f"{'yes' if ok else 'NO'} |")
            print(f"| every report ({n:,} rows), report.html included | — | {_stats(all_s)} | — | — |")
        paths = history_records(Path(tmp), args.commits, args.history_rows)
        loaded = [(str(p), record.load(p)) for p in paths]
        page = render_history(history.order(loaded))
        hist_s = timed(lambda: render_history(history.order(loaded)), args.repeat)
        cmd_s = timed(lambda: subprocess.run(
            [sys.executable, "-m", "trtcheck", "history", *map(str, paths), "--out", f"{tmp}/h"],
            capture_output=True, check=True), args.repeat)
        what = f"{args.commits} commits × {args.history_rows} rows"
        print(f"| history.html, {what} | {len(page.encode()) / MB:.2f} MB | {_stats(hist_s)} | — | — |")
        print(f"| `trtcheck history` command, {what} (Python start, loading the records) | — | "
              f"{_stats(cmd_s)} | — | — |")
    return 1 if failed else 0


def _stats(times: list[float]) -> str:
    return f"{statistics.median(times):.2f} | {min(times):.2f} | {max(times):.2f}"


if __name__ == "__main__":
    sys.exit(main())
