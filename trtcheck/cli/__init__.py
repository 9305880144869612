"""Command line: ``trtcheck run``, ``reduce``, ``ab``, ``list``, ``analyze``, ``report``,
``merge``, ``history``. Only this module exits.

Modules that import torch are imported inside the commands, so that ``--help``, ``--version``
and argument errors answer without loading torch (about 3 s)."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from trtcheck import __version__, distribution
from trtcheck.cli import github
from trtcheck.cli.console import echo, output_to
from trtcheck.cli.progress import Progress
from trtcheck.config import cascade, options, settings
from trtcheck.core.profiles import BUILTIN_PROFILES
from trtcheck.errors import Exit, OutputError, TrtcheckError, UsageError, exit_codes_help
from trtcheck.status import NO_CASE

if TYPE_CHECKING:
    from trtcheck.execution.run import Collection
    from trtcheck.results.record import Record

RUN_EPILOG = f"""\b
Profiles: {", ".join(BUILTIN_PROFILES)} (built in), and your own under
[tool.trtcheck.profiles]; a row is a case on one backend under one profile.
\b
Expected failures: xfail="reason", or a mapping whose keys are a variant, a
backend, a profile or backend:profile (the most specific wins). An xpass fails
the run only with strict_xfail = true in the config.
\b
Exit codes:
{exit_codes_help()}
"""

paths_arg = click.argument("paths", nargs=-1, required=True,
                           type=click.Path(path_type=Path))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="trtcheck",
                      message=f"%(prog)s %(version)s (distribution {distribution.DIST})")
def cli() -> None:
    """Check a PyTorch model zoo against Torch-TensorRT and eager PyTorch."""


@cli.command("run", epilog=RUN_EPILOG)
@paths_arg
@settings.click_options(settings.RUN)
def run_cmd(paths: tuple[Path, ...], **given: Any) -> int:
    """Run every case of the zoo under PATHS and write reports."""
    resolved = cascade.resolve(paths, **given)
    return _run(resolved, reduce_total=resolved.reduce_budget if resolved.reduce else None)


REDUCE_EPILOG = """\b
Each failing row (fail or error, at compile, run or compare) becomes the
smallest exported graph that still fails the same way, with a bundle in
OUT/repro/CASE/: repro.py (torch and torch_tensorrt only), a zoo file that
'trtcheck run' reproduces as one row, inputs.pt, ISSUE.md and summary.json.
Weights and inputs are random values of the same dtype and shape wherever the
failure reproduces with them; --keep-real-values keeps the real ones otherwise
(they may be private: review the bundle before sharing it).
"""
# What trtcheck reduce takes of run's options (its own are declared for REDUCE).
_REDUCE_TAKES = ("backends", "torch_tensorrt", "run_profiles", "variants", "keyword", "config",
                 "out", "device", "isolate", "timeout", "quiet", "verbose")


@cli.command("reduce", epilog=REDUCE_EPILOG)
@paths_arg
@settings.click_options(settings.RUN, only=_REDUCE_TAKES)
@settings.click_options(settings.REDUCE)
def reduce_cmd(paths: tuple[Path, ...], **given: Any) -> int:
    """Run the selected cases and reduce every failing row to a small graph that fails the same
    way, with a bundle a Torch-TensorRT maintainer can run; exits as 'trtcheck run' would."""
    return _run(cascade.resolve(paths, **given, reduce=True), reduce_total=None, must_reduce=True)


def _run(resolved: options.Options, reduce_total: float | None, *, must_reduce: bool = False) -> int:
    """Run, reduce the failing rows when asked (``reduce_total``: the seconds all reductions may
    take together, None for no cap), write the reports, exit by the run's verdict; with
    ``must_reduce`` (``trtcheck reduce``), exit 2 when no selected row could be reduced."""
    from trtcheck.core.traits import needs_choice, traits_table
    from trtcheck.execution.run import STOPPED, collect, run, start
    from trtcheck.render import write_reports
    from trtcheck.render.terminal import render_summary
    from trtcheck.results import baseline as baselines
    from trtcheck.results import record

    # Isolated, the backends load in the workers: with them named (one Torch-TensorRT release at
    # most) and a CPU build of torch, this process never loads torch.
    opts = resolved
    if needs_choice(resolved.backends, resolved.torch_tensorrt):
        from trtcheck import backends

        opts = backends.choose(resolved)
    base = record.load(opts.baseline) if opts.baseline else None  # a bad baseline stops us early
    _say_config_warnings(opts)
    if opts.backend_note and opts.verbosity >= 0:
        echo(opts.backend_note, err=True)
    if opts.isolate:
        chosen: Mapping[str, Any] = traits_table(opts.backends)
    else:
        from trtcheck import backends

        chosen = backends.instantiate(opts)
    _check_writable(opts.out)
    with record.locked(opts.out), contextlib.closing(start(opts, chosen)) as executor:
        collection = collect(opts, executor)
        say = Progress(opts.verbosity, collection)
        say.collection(collection)
        with say:
            rec, _ = run(opts, chosen, collection, say.case, say.stage, executor)
        rec.environment["stage_s"] = say.where_time_went()
        if opts.reduce:
            _reduce(opts, chosen, rec, collection, reduce_total)
        if base is not None:
            rec.baseline = baselines.compare(base, rec, metric=opts.gate.metric,
                                             threshold=opts.gate.threshold).to_dict()
        try:
            written, unwritten = write_reports(rec, opts.out, strict_xfail=opts.strict_xfail,
                                               link=github.link_for(rec)), None
        except OutputError as exc:
            written, unwritten = [], exc
    if opts.verbosity >= 0:
        _say_baseline(rec)
    echo(render_summary(rec, strict_xfail=opts.strict_xfail, failing_only=opts.verbosity < 0))
    if opts.verbosity >= 0:
        _say_resumed(rec, opts.out)
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
    if must_reduce:
        from trtcheck.reduce.signature import reducible  # torch: the reduction loaded it already

        if all(reducible(r) is not None for r in rec.rows):
            echo("trtcheck: nothing to reduce: no selected row failed at compile, run or compare "
                 "(the rows that failed, if any, say why in the reports)", err=True)
            return _publish(Exit.USAGE, opts.out, rec, opts.strict_xfail)
    return _publish(_verdict(rec, opts.strict_xfail), opts.out, rec, opts.strict_xfail)


def _say_config_warnings(opts: options.Options) -> None:
    for warning in opts.config_warnings:
        echo(f"warning: {warning}", err=True)


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


def _say_resumed(rec: Record, out: Path) -> None:
    from trtcheck.execution.run import JOURNAL

    resumed = rec.environment.get("resumed")
    if resumed:
        echo(f"resumed: {resumed['reused']} of {resumed['cases']} cases reused from "
              f"{out / JOURNAL}, {resumed['cases'] - resumed['reused']} run")


def _reduce(opts: options.Options, chosen: dict[str, Any], rec: Record, collection: Collection,
            total: float | None) -> None:
    """Reduce ``rec``'s failing rows in place, saying how each goes on stderr."""
    from trtcheck.reduce.reducer import Limits, reduce_rows

    limits = Limits(opts.reduce_row_budget, opts.reduce_attempts, opts.keep_real_values, total)
    say = (lambda line: echo(line, err=True)) if opts.verbosity >= 0 else (lambda line: None)
    rec.rows = reduce_rows(rec.rows, collection.cases, opts, chosen, limits, rec.environment, say)


AB_EPILOG = """\b
Checks out REF's tree as a git worktree in a temporary folder and runs the
zoo under PATHS of both sides in fresh processes, alternating base, head, head,
base, ...; each process compiles and times every selected row once. A row is
slower when its change is beyond --threshold and significant across processes
(Welch's one-sided t test on per-process log figures, at a level corrected for
every row and every look); rows still undecided get more processes, up to
--max-processes or the --ab-budget. The head's configuration applies; the base
supplies only its zoo files. Prediction backends (lowering, emulate) have no
latency: their statuses alone are compared.
\b
Exit codes as 'trtcheck run': with --fail-on regression also 1 for a row
judged slower; a row with not enough evidence never fails the job.
"""
# What trtcheck ab takes of run's options (its own, --fail-on among them, are declared for AB).
_AB_LEAVES = ("baseline", "shard", "resume", "reduce", "reduce_budget", "keep_real_values",
              "fail_on", "metric", "threshold", "isolate", "workers", "cache_dir", "engine_cache")
_AB_TAKES = tuple(s.key for s in settings.for_command(settings.RUN) if s.key not in _AB_LEAVES)


@cli.command("ab", epilog=AB_EPILOG)
@click.option("--base", "base_ref", required=True, metavar="REF",
              help="The commit to compare with (a branch, tag or hash; HEAD~1).")
@click.option("--head", "head_ref", metavar="REF",
              help="The commit measured against it [the working tree].")
@paths_arg
@settings.click_options(settings.RUN, only=_AB_TAKES)
@settings.click_options(settings.AB)
def ab_cmd(base_ref: str, head_ref: str | None, paths: tuple[Path, ...], **given: Any) -> int:
    """Measure the zoo under PATHS at the base commit and at the head in one job, process
    against process, and report each row's change; exits as 'trtcheck run' would."""
    from trtcheck.core.traits import needs_choice, traits_table
    from trtcheck.execution.ab import run_ab
    from trtcheck.render import write_reports
    from trtcheck.render.terminal import render_summary
    from trtcheck.results import record

    opts = cascade.resolve(paths, **given)
    if not opts.isolate or opts.workers > 1:
        raise UsageError("trtcheck ab runs one fresh worker process at a time: leave out "
                         "--no-isolate and --workers")
    if needs_choice(opts.backends, opts.torch_tensorrt):
        from trtcheck import backends

        opts = backends.choose(opts)
    _say_config_warnings(opts)
    if opts.backend_note and opts.verbosity >= 0:
        echo(opts.backend_note, err=True)
    _check_writable(opts.out)
    say = (lambda line: echo(line, err=True)) if opts.verbosity >= 0 else (lambda line: None)
    with record.locked(opts.out):
        rec = run_ab(opts, traits_table(opts.backends), base_ref, head_ref, say)
        written = write_reports(rec, opts.out, strict_xfail=opts.strict_xfail,
                                link=github.link_for(rec))
    if opts.verbosity >= 0:
        _say_baseline(rec)
    echo(render_summary(rec, strict_xfail=opts.strict_xfail, failing_only=opts.verbosity < 0))
    if opts.verbosity >= 0:
        echo(f"reports: {', '.join(str(p) for p in written)}")
    return _publish(_verdict(rec, opts.strict_xfail), opts.out, rec, opts.strict_xfail)


@cli.command("list")
@paths_arg
@settings.click_options(settings.SELECT)
def list_cmd(paths: tuple[Path, ...], **given: Any) -> int:
    """Print the cases under PATHS without running them."""
    from trtcheck.execution.run import collect
    from trtcheck.render.text import plain

    opts = cascade.resolve(paths, **given, reads_baseline=False)
    collection = collect(opts)
    for case in collection.cases:
        tags = f"  [{', '.join(case.spec.tags)}]" if case.spec.tags else ""
        echo(plain(f"{case.case_id}{tags}"))
    for row in collection.problems:
        echo(f"{row.status}: {plain(row.location or row.file)}: {plain(row.message)}", err=True)
    if not collection.cases and not collection.problems:
        echo(f"trtcheck: nothing to list: {NO_CASE}", err=True)
        return Exit.EMPTY
    return 1 if collection.problems else 0


@cli.command("analyze")
@paths_arg
@settings.click_options(settings.ANALYZE)
@click.option("-v", "--verbose", count=True, help="Print each case's complex ops and predictions.")
def analyze_cmd(paths: tuple[Path, ...], verbose: int, **given: Any) -> int:
    """Predict each case's complex, int64 and float64 paths, without compiling (CPU)."""
    from trtcheck.execution.run import analyze, collect
    from trtcheck.render.analysis import render_analysis
    from trtcheck.results import record

    opts = cascade.resolve(paths, **given, device="cpu", quiet=1, reads_baseline=False)
    _check_writable(opts.out)
    with output_to(opts.out / "analyze.log"):
        rec = analyze(opts, collect(opts))
    record.save(rec, opts.out / "analysis.json")
    echo(render_analysis(rec, verbose=verbose > 0))
    echo(f"analysis: {opts.out / 'analysis.json'}")
    return _verdict(rec, strict_xfail=False)


@cli.command("fetch")
@click.argument("package", type=click.Choice(["torch-tensorrt"]), metavar="PACKAGE")
@click.argument("versions", nargs=-1)
def fetch_cmd(package: str, versions: tuple[str, ...]) -> int:
    """Fetch PACKAGE's Python code (torch-tensorrt; VERSIONS, default: the release for the
    installed torch) into trtcheck's cache, for the lowering backend on an offline runner.

    Only the Python files are kept, under $TRTCHECK_CACHE (default: the user cache directory);
    TensorRT's libraries are never installed and site-packages is never touched."""
    from trtcheck.backends.lowering import code as ttrt_code

    for version in versions or (None,):
        where = ttrt_code.fetch(version)
        echo(f"{package} {where.name}: {where}")
    return 0


@cli.command("report")
@click.argument("results", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path),
              help="Where to write the reports [the record's directory].")
def report_cmd(results: Path, out: Path | None) -> int:
    """Re-render junit.xml, report.md, report.html and results.json from a results.json or results.jsonl,
    or from a report directory (its results.json, else the journal of a run that stopped)."""
    from trtcheck.results import record

    results = _record_file(results)
    return _write(record.load(results), out or results.parent)


@cli.command("history")
@click.argument("records", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="Where to write history.html.")
def history_cmd(records: tuple[Path, ...], out: Path) -> int:
    """Draw each row over commits from RECORDS (results.json of successive commits, or report
    directories, in any order) into OUT/history.html."""
    from trtcheck.errors import RecordError
    from trtcheck.render.history import render_history
    from trtcheck.results import history, record

    read, unread = [], []
    # a path given twice (a shell glob and a name, say) is read, or warned about, once
    for path in _unique(records):
        try:
            read.append((str(path), record.load(_record_file(path))))
        except (RecordError, UsageError) as exc:
            if str(exc) not in unread:
                echo(f"warning: {exc}", err=True)
                unread.append(str(exc))
    if not read:
        raise UsageError("no record could be read: nothing to draw")
    _check_writable(out)
    page = out / "history.html"
    try:
        record.write_atomic(page, render_history(history.order(read), unread=unread))
    except OSError as exc:
        raise OutputError(f"cannot write {page}: {exc.strerror or exc}") from None
    echo(f"history: {page} ({len(read)} records)")
    return 0


def _unique(paths: Sequence[Path]) -> list[Path]:
    """``paths`` in order, each file once however it was named."""
    seen: set[Path] = set()
    out = []
    for path in paths:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


def _record_file(path: Path) -> Path:
    """A record file, or a report directory's results.json (else its journal)."""
    if not path.is_dir():
        return path
    found = next((path / name for name in ("results.json", "results.jsonl")
                  if (path / name).is_file()), None)
    if found is None:
        raise UsageError(f"{path} is a directory without results.json or results.jsonl: "
                         "give a report directory, or a record file")
    return found


@cli.command("merge")
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="Where to write the combined reports.")
def merge_cmd(results: tuple[Path, ...], out: Path) -> int:
    """Combine the results.json of several shards (--shard I/N) into one set of reports.

    Refuses (exit 2) records that cannot be combined (other versions, device kind, or any
    setting that changes rows: backends, --torch-tensorrt, profiles, variants, tolerances,
    timing, --nan, ...) and shards that overlap; a missing shard becomes an error row."""
    from trtcheck.config.settings import ROW_SETTINGS
    from trtcheck.results.merge import merge

    return _write(merge(results, ROW_SETTINGS), out)


def _write(rec: Record, out_dir: Path) -> int:
    """Write every report of ``rec`` into ``out_dir`` and print the summary ``run`` prints; the
    exit code its rows give."""
    from trtcheck.render import write_reports
    from trtcheck.render.terminal import render_summary
    from trtcheck.results import record

    strict = bool(rec.options.get("strict_xfail", False))
    _check_writable(out_dir)
    with record.locked(out_dir):
        written = write_reports(rec, out_dir, strict_xfail=strict, link=github.link_for(rec))
    echo(render_summary(rec, strict_xfail=strict))
    echo(f"reports: {', '.join(str(p) for p in written)}")
    return _publish(_verdict(rec, strict), out_dir, rec, strict)


@cli.command("diff")
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("head", type=click.Path(path_type=Path), required=False)
@click.option("--out", type=click.Path(path_type=Path),
              help="Also write HEAD's reports, with the changes, into this directory.")
@settings.click_options(settings.DIFF)
def diff_cmd(base: Path, head: Path | None, out: Path | None, **gate: object) -> int:
    """Print HEAD's changes against BASE (two results.json) without running anything; exits
    as the run of HEAD would have with --baseline BASE.

    Two records of 'trtcheck ab' are judged by its rule over processes (the head side of each),
    and so is one alone (its base against its head); two records of 'trtcheck run' by the
    weaker rule over runs, as --baseline does."""
    from trtcheck.render import render_changes, write_reports
    from trtcheck.render.terminal import render_headline
    from trtcheck.results import ab, baseline, record

    before = record.load(base)
    rec = record.load(head) if head is not None else before
    chosen = cascade.saved_gate(rec.options, **gate)
    if head is None and before.ab is None:
        raise UsageError(f"{base} is not a record of trtcheck ab: give a base and a head record")
    if before.ab is not None and rec.ab is not None:
        diff = ab.rejudge(before, rec if head is not None else None, metric=chosen.metric,
                          threshold=chosen.threshold)
    else:
        diff = baseline.compare(before, rec, metric=chosen.metric, threshold=chosen.threshold)
    rec.baseline = diff.to_dict()
    rec.options = {**rec.options, "gate": dataclasses.asdict(chosen)}  # what the verdict reads
    strict = bool(rec.options.get("strict_xfail", False))
    echo(render_changes(rec))
    if out is not None:
        _check_writable(out)
        written = write_reports(rec, out, strict_xfail=strict, link=github.link_for(rec))
        echo(f"reports: {', '.join(str(p) for p in written)}")
    echo(render_headline(rec, strict_xfail=strict))
    return _verdict(rec, strict)


def _say_baseline(rec: Record) -> None:
    """The baseline's warnings and how many rows regressed against it."""
    from trtcheck.render.changes import STATUSES_ONLY, count_line, decision_lines, statuses_only
    from trtcheck.render.text import plain
    from trtcheck.results import ab, baseline
    from trtcheck.results.ab import side_label

    diff = baseline.read(rec.baseline)
    if diff is None:
        return
    for warning in diff.warnings:
        echo(f"warning: {plain(warning)}", err=True)
    labels = [side_label(rec.ab, side) for side in ab.SIDES]
    if labels[0] and labels[1]:
        same = " (same tree: both sides ran the same code)" if rec.ab and rec.ab.get("same_tree") \
            else ""
        echo(plain(f"base: {labels[0]}; head: {labels[1]}{same}"))
    for line in decision_lines(diff):
        echo(plain(line))
    if statuses_only(diff):
        echo(STATUSES_ONLY)
    echo(f"against the {'base' if diff.rule == baseline.PROCESSES else 'baseline'}: "
         f"{count_line(diff)}")


def _check_writable(out: Path) -> None:
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


def _publish(code: int, out: Path | None, rec: Record | None, strict_xfail: bool) -> int:
    """Under GitHub Actions, annotate the failing rows and write the step outputs; ``code``."""
    if github.active():
        from trtcheck.render.annotations import render_annotations

        for line in render_annotations(rec, strict_xfail=strict_xfail) if rec else []:
            echo(line)
        github.write_outputs(code, out, rec, strict_xfail=strict_xfail)
    return code


def _verdict(rec: Record, strict_xfail: bool) -> int:
    """The job's exit code (:func:`trtcheck.results.verdict.job_verdict`, under the gate the
    record's options hold), after one line on stderr when it was interrupted or tested nothing."""
    from trtcheck.results.verdict import job_verdict
    from trtcheck.status import Verdict

    result = job_verdict(rec, strict_xfail=strict_xfail)
    if result.verdict is Verdict.INTERRUPTED:
        echo("trtcheck: interrupted: reports cover the cases that finished", err=True)
    elif result.verdict is Verdict.EMPTY:
        echo(f"trtcheck: nothing tested: {result.why}", err=True)
    return result.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: returns the exit code instead of exiting, so it can be called in-process."""
    with github.withheld():  # before any zoo code: --no-isolate runs it in this process
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    for collision in distribution.collisions():
        echo(collision.warning(), err=True)
    try:
        result = cli.main(args=list(argv) if argv is not None else None,
                          prog_name="trtcheck", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return _publish(exc.exit_code, None, None, False)
    except click.exceptions.Abort:
        echo("aborted", err=True)
        return Exit.INTERRUPTED
    except TrtcheckError as exc:
        echo(f"trtcheck: error: {exc}", err=True)
        return _publish(exc.exit_code, None, None, False)
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
