"""Command line: ``trtcheck run``, ``list``, ``report``. Only this module exits."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from trtcheck import __version__, backends, baseline, github, options, record
from trtcheck.cases import Case
from trtcheck.errors import INTERRUPTED, TrtcheckError, UsageError
from trtcheck.options import SETTINGS
from trtcheck.record import Record
from trtcheck.render import render_changes, write_reports
from trtcheck.render.analysis import render_analysis
from trtcheck.render.annotations import render_annotations
from trtcheck.render.terminal import render_summary
from trtcheck.render.text import plain
from trtcheck.rows import Row
from trtcheck.run import Collection, analyze, collect, run
from trtcheck.status import is_failure

paths_arg = click.argument("paths", nargs=-1, required=True,
                           type=click.Path(path_type=Path))


def _selection(f):  # type: ignore[no-untyped-def]
    for decorator in reversed((
        paths_arg,
        click.option("--variant", "variants", multiple=True, help=SETTINGS["variants"].help),
        click.option("-k", "keyword", help="Select cases by expression, like pytest -k."),
        click.option("--config", "config", type=click.Path(path_type=Path),
                     help="Config file (default: nearest trtcheck.toml or pyproject.toml)."),
    )):
        f = decorator(f)
    return f


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="trtcheck")
def cli() -> None:
    """Check a PyTorch model zoo against Torch-TensorRT and eager PyTorch."""


@cli.command("run")
@_selection
@click.option("--backend", "backends_", multiple=True, help=SETTINGS["backends"].help)
@click.option("--profile", "profiles", multiple=True, help=SETTINGS["run_profiles"].help)
@click.option("--out", type=click.Path(path_type=Path), help=SETTINGS["out"].help)
@click.option("--device", help=SETTINGS["device"].help)
@click.option("--isolate/--no-isolate", default=None, help=SETTINGS["isolate"].help)
@click.option("--timeout", type=float, help=SETTINGS["timeout"].help)
@click.option("--memory-limit", "memory_limit_mb", type=int, help=SETTINGS["memory_limit_mb"].help)
@click.option("--resume", is_flag=True, help="Skip cases already recorded in OUT/results.jsonl.")
@click.option("--baseline", "baseline_", type=click.Path(path_type=Path),
              help=SETTINGS["baseline"].help)
@click.option("--fail-on", "fail_on", type=click.Choice(options.FAIL_ON),
              help=SETTINGS["fail_on"].help)
@click.option("-q", "--quiet", count=True, help="Less output.")
@click.option("-v", "--verbose", count=True, help="More output.")
def run_cmd(paths: tuple[Path, ...], variants: tuple[str, ...], keyword: str | None,
            config: Path | None, backends_: tuple[str, ...], profiles: tuple[str, ...],
            out: Path | None, device: str | None, isolate: bool | None, timeout: float | None,
            memory_limit_mb: int | None, resume: bool, baseline_: Path | None,
            fail_on: str | None, quiet: int, verbose: int) -> int:
    """Run every case of the zoo under PATHS and write reports."""
    opts = backends.choose(_resolve(
        paths, config, variants, keyword, backends_=backends_, profiles=profiles, out=out,
        device=device, isolate=isolate, timeout=timeout, memory_limit_mb=memory_limit_mb,
        resume=resume, verbosity=verbose - quiet, baseline=baseline_, fail_on=fail_on))
    base = record.load(opts.baseline) if opts.baseline else None  # a bad baseline stops us early
    if opts.backend_note and opts.verbosity >= 0:
        click.echo(opts.backend_note, err=True)
    chosen = {name: backends.get(name) for name in opts.backends}
    _check_writable(opts.out)
    collection = collect(opts)
    say = _Progress(opts.verbosity, len(collection.cases))
    say.collection(collection)
    rec, interrupted = run(opts, chosen, collection, say.case)
    if base is not None:
        rec.baseline = baseline.compare(base, rec, metric=opts.gate.metric,
                                        threshold=opts.gate.threshold).to_dict()
    written = write_reports(rec, opts.out, strict_xfail=opts.strict_xfail)
    if opts.verbosity >= 0:
        click.echo(render_summary(rec, strict_xfail=opts.strict_xfail))
        _say_baseline(rec)
        click.echo(f"reports: {', '.join(str(p) for p in written)}")
    if interrupted:
        click.echo("trtcheck: interrupted: reports cover the cases that finished", err=True)
        return _publish(INTERRUPTED, opts.out, rec, opts.strict_xfail)
    return _publish(exit_code(rec, opts.strict_xfail, opts.gate), opts.out, rec, opts.strict_xfail)


@cli.command("list")
@_selection
def list_cmd(paths: tuple[Path, ...], variants: tuple[str, ...], keyword: str | None,
             config: Path | None) -> int:
    """Print the cases under PATHS without running them."""
    opts = _resolve(paths, config, variants, keyword)
    collection = collect(opts)
    for case in collection.cases:
        tags = f"  [{', '.join(case.spec.tags)}]" if case.spec.tags else ""
        click.echo(plain(f"{case.case_id}{tags}"))
    for row in collection.problems:
        click.echo(f"error: {plain(row.location or row.file)}: {plain(row.message)}", err=True)
    return 1 if collection.problems else 0


@cli.command("analyze")
@_selection
@click.option("--out", type=click.Path(path_type=Path), help=SETTINGS["out"].help)
@click.option("-v", "--verbose", count=True, help="Print each case's complex ops and predictions.")
def analyze_cmd(paths: tuple[Path, ...], variants: tuple[str, ...], keyword: str | None,
                config: Path | None, out: Path | None, verbose: int) -> int:
    """Predict each case's complex, int64 and float64 paths, without compiling (CPU)."""
    opts = _resolve(paths, config, variants, keyword, out=out, device="cpu", verbosity=-1)
    _check_writable(opts.out)
    rec = analyze(opts, collect(opts))
    record.save(rec, opts.out / "analysis.json")
    click.echo(render_analysis(rec, verbose=verbose > 0))
    click.echo(f"analysis: {opts.out / 'analysis.json'}")
    return exit_code(rec, strict_xfail=False)


@cli.command("report")
@click.argument("results", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path),
              help="Where to write the reports [the record's directory].")
def report_cmd(results: Path, out: Path | None) -> int:
    """Re-render junit.xml, report.md and results.json from a results.json or results.jsonl."""
    rec = record.load(results)
    strict = bool(rec.options.get("strict_xfail", False))
    out_dir = out or results.parent
    _check_writable(out_dir)
    written = write_reports(rec, out_dir, strict_xfail=strict)
    click.echo(f"reports: {', '.join(str(p) for p in written)}")
    return _publish(exit_code(rec, strict, options.saved_gate(rec.options)), out_dir, rec, strict)


@cli.command("diff")
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("head", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path),
              help="Also write HEAD's reports, with the changes, into this directory.")
@click.option("--fail-on", "fail_on", type=click.Choice(options.FAIL_ON),
              help=SETTINGS["fail_on"].help)
@click.option("--metric", "regression_metric", type=click.Choice(options.GATE_METRICS),
              help=SETTINGS["regression_metric"].help)
@click.option("--threshold", "regression_threshold", type=float,
              help=SETTINGS["regression_threshold"].help)
def diff_cmd(base: Path, head: Path, out: Path | None, **gate: object) -> int:
    """Print HEAD's changes against BASE (two results.json) without running anything; exits
    as the run of HEAD would have with --baseline BASE."""
    before, rec = record.load(base), record.load(head)
    chosen = options.saved_gate(rec.options, **gate)
    rec.baseline = baseline.compare(before, rec, metric=chosen.metric,
                                    threshold=chosen.threshold).to_dict()
    strict = bool(rec.options.get("strict_xfail", False))
    click.echo(render_changes(rec))
    if out is not None:
        _check_writable(out)
        written = write_reports(rec, out, strict_xfail=strict)
        click.echo(f"reports: {', '.join(str(p) for p in written)}")
    return exit_code(rec, strict, chosen)


def _say_baseline(rec: Record) -> None:
    """The baseline's warnings and how many rows regressed against it."""
    diff = baseline.read(rec.baseline)
    if diff is None:
        return
    for warning in diff.warnings:
        click.echo(f"warning: {plain(warning)}", err=True)
    click.echo(f"against the baseline: {len(diff.regressions)} latency regressions, "
               f"{sum(c.status_changed for c in diff.changes)} status changes")


def _resolve(paths: tuple[Path, ...], config: Path | None, variants: tuple[str, ...],
             keyword: str | None, *, backends_: tuple[str, ...] = (),
             profiles: tuple[str, ...] = (), **kw: object) -> options.Options:
    return options.resolve(paths, config_path=config, variants=variants, keyword=keyword,
                           backends=backends_, profiles=profiles, **kw)  # type: ignore[arg-type]


def _check_writable(out: Path) -> None:
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
        for line in render_annotations(rec, strict_xfail=strict_xfail) if rec else []:
            click.echo(line)
        github.write_outputs(code, out, rec, strict_xfail=strict_xfail)
    return code


def exit_code(rec: Record, strict_xfail: bool, gate: options.Gate | None = None) -> int:
    """0 when no row fails; 1 when any row is fail, error, timeout, crash (or strict xpass),
    or, when the gate fails on regressions, any row regressed against the baseline."""
    if any(is_failure(r.status, strict_xfail=strict_xfail) for r in rec.rows):
        return 1
    diff = baseline.read(rec.baseline)
    regressed = gate is not None and gate.fail_on == "regression" and diff and diff.regressions
    return 1 if regressed else 0


class _Progress:
    """One line per case as it finishes."""

    def __init__(self, verbosity: int, total: int) -> None:
        self.verbosity = verbosity
        self.total = total
        self.done = 0

    def collection(self, c: Collection) -> None:
        if self.verbosity >= 0:
            for rel in c.empty_files:
                click.echo(f"note: {plain(rel)}.py declares no models (helpers belong in "
                           "files whose names start with _)", err=True)
            click.echo(f"collected {len(c.cases)} cases"
                       + (f", {len(c.problems)} collection errors" if c.problems else ""))

    def case(self, case: Case | None, rows: list[Row]) -> None:
        if self.verbosity < 0:
            return
        if case is None:
            for row in rows:
                click.echo(f"ERROR {plain(row.location or row.file)}: {plain(row.message)}")
            return
        self.done += 1
        parts = " ".join(f"{r.backend}{'' if r.profile == '-' else ':' + r.profile}={r.status}"
                         for r in rows)
        click.echo(f"[{self.done}/{self.total}] {plain(case.case_id)}  {parts}")
        if self.verbosity >= 1:
            for r in rows:
                if r.message:
                    click.echo(f"    {r.backend}: {plain(r.message)}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: returns the exit code instead of exiting, so it can be called in-process."""
    try:
        result = cli.main(args=list(argv) if argv is not None else None,
                          prog_name="trtcheck", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return _publish(exc.exit_code, None, None, False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return INTERRUPTED
    except TrtcheckError as exc:
        click.echo(f"trtcheck: error: {exc}", err=True)
        return _publish(exc.exit_code, None, None, False)
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
