"""What the commands share: the PATHS argument, the checks of a report directory and a record
path, the lines before a job, and :func:`finish`, the one path that writes a record's
reports, prints its summary and gives the exit code."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from trtcheck.cli import github
from trtcheck.cli.console import echo
from trtcheck.errors import Exit, OutputError, UsageError

if TYPE_CHECKING:
    from trtcheck.config.options import Options
    from trtcheck.results.record import Record
    from trtcheck.results.verdict import Judged

paths_arg = click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))


def teller(opts: Options) -> Callable[[str], None]:
    """Prints a job's lines on stderr, nothing under ``-q``."""
    return (lambda line: echo(line, err=True)) if opts.verbosity >= 0 else (lambda line: None)


def opening(opts: Options) -> None:
    """The config file's warnings, and which backend ran instead of the default one."""
    for warning in opts.config_warnings:
        echo(f"warning: {warning}", err=True)
    if opts.backend_note and opts.verbosity >= 0:
        echo(opts.backend_note, err=True)


def check_writable(out: Path) -> None:
    blocking = next((p for p in (out, *out.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise UsageError(f"cannot write reports to {out}: {blocking} is a file, not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".trtcheck-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"cannot write reports to {out}: {exc.strerror or exc}") from None


def record_file(path: Path) -> Path:
    """A record file, or a report directory's results.json (else its journal)."""
    if not path.is_dir():
        return path
    found = next((path / name for name in ("results.json", "results.jsonl")
                  if (path / name).is_file()), None)
    if found is None:
        raise UsageError(f"{path} is a directory without results.json or results.jsonl: "
                         "give a report directory, or a record file")
    return found


def write(judged: Judged, out: Path) -> list[Path]:
    """Every report of the judged record into ``out`` (the caller holds its lock), linked to
    the run."""
    from trtcheck.render import write_reports

    return write_reports(judged, out, link=github.link_for(judged.record))


# Which lines :func:`finish` prints around the summary: a run's (the baseline's count, the
# resumed cases, where the time went), an ab job's (the baseline's count), a re-rendered record's.
RUN, AB, RECORD = "run", "ab", "record"


def finish(rec: Record, out: Path, *, job: str = RECORD, verbosity: int = 0,
           refuse: str | None = None) -> int:
    """Judge ``rec`` once, write its reports into ``out`` (its lock held by the caller), print
    the summary, and return the exit code its verdict gives, after the step outputs under
    GitHub Actions; ``refuse``: a line that makes it exit 2 instead (``reduce`` with nothing to
    reduce)."""
    from trtcheck.execution.run import STOPPED
    from trtcheck.render.terminal import render_summary
    from trtcheck.results.verdict import Judged

    judged = Judged.of(rec)
    try:
        written, unwritten = write(judged, out), None
    except OutputError as exc:
        if job != RUN:
            raise
        written, unwritten = [], exc
    if verbosity >= 0 and job in (RUN, AB):
        say_baseline(rec)
    echo(render_summary(judged, failing_only=verbosity < 0))
    if verbosity >= 0:
        if job == RUN:
            say_resumed(rec, out)
            echo(time_line(rec.environment))
        if written:
            echo(f"reports: {', '.join(str(p) for p in written)}")
    stopped = rec.environment.get("output_error")
    if stopped or unwritten:
        done = sum(r.message != STOPPED.format(stopped) for r in rec.rows)
        raise OutputError("; ".join(filter(None, (
            stopped and f"{stopped}: the run stopped with {done} of {len(rec.rows)} rows done",
            str(unwritten) if unwritten else (f"reports written: "
                                              f"{', '.join(p.name for p in written)} "
                                              "(the rows that finished)"),
            stopped and "--resume runs the rest once there is room"))))
    if refuse:
        echo(refuse, err=True)
        return publish(Exit.USAGE, out, judged)
    return publish(verdict(judged), out, judged)


def time_line(env: Mapping[str, Any]) -> str:
    """Where a run's time went: its wall time, then the seconds in each stage (summed over
    cases), the rest being start-up, collection and reports."""
    total = float(env.get("duration_s") or 0.0)
    stages = env.get("stage_s") or {}
    parts = [f"{stage} {s:.1f} s ({s / total:.0%})" if total else f"{stage} {s:.1f} s"
             for stage, s in stages.items() if s >= 0.05]
    rest = total - sum(stages.values())
    if rest >= 0.05:
        parts.append(f"outside stages {rest:.1f} s")
    return f"time: {total:.1f} s" + (f": {', '.join(parts)}" if parts else "")


def say_resumed(rec: Record, out: Path) -> None:
    from trtcheck.execution.run import JOURNAL

    resumed = rec.environment.get("resumed")
    if resumed:
        echo(f"resumed: {resumed['reused']} of {resumed['cases']} cases reused from "
             f"{out / JOURNAL}, {resumed['cases'] - resumed['reused']} run")


def say_baseline(rec: Record) -> None:
    """The baseline's warnings and how many rows regressed against it."""
    from trtcheck.render.abtext import side_label
    from trtcheck.render.changes import count_line, decision_lines
    from trtcheck.render.escape import plain
    from trtcheck.results import baseline
    from trtcheck.results.processes import SIDES

    diff = baseline.read(rec.baseline)
    if diff is None:
        return
    for warning in diff.warnings:
        echo(f"warning: {plain(warning)}", err=True)
    labels = [side_label(rec.ab, side) for side in SIDES]
    if labels[0] and labels[1]:
        same = " (same tree: both sides ran the same code)" if rec.ab and rec.ab.get("same_tree") \
            else ""
        echo(plain(f"base: {labels[0]}; head: {labels[1]}{same}"))
    for line in decision_lines(diff):
        echo(plain(line))
    echo(f"against the {'base' if diff.rule == baseline.PROCESSES else 'baseline'}: "
         f"{count_line(diff)}")


def publish(code: int, out: Path | None, judged: Judged | None) -> int:
    """Under GitHub Actions, annotate the failing rows and write the step outputs; ``code``."""
    if github.active():
        from trtcheck.render.annotations import render_annotations

        for line in render_annotations(judged.record) if judged else []:
            echo(line)
        github.write_outputs(code, out, judged)
    return code


def verdict(judged: Judged) -> int:
    """The job's exit code (the record's verdict, judged under the options it holds), after
    one line on stderr when it was interrupted or tested nothing."""
    from trtcheck.status import Verdict

    result = judged.verdict
    if result.verdict is Verdict.INTERRUPTED:
        echo("trtcheck: interrupted: reports cover the cases that finished", err=True)
    elif result.verdict is Verdict.EMPTY:
        echo(f"trtcheck: nothing tested: {result.why}", err=True)
    return result.exit_code

