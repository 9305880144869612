"""Command line: ``trtcheck run``, ``list``, ``analyze``, ``report``, ``merge``. Only this
module exits.

Modules that import torch are imported inside the commands, so that ``--help``, ``--version``
and argument errors answer without loading torch (about 3 s)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from trtcheck import __version__, github, options
from trtcheck.errors import INTERRUPTED, TrtcheckError, UsageError
from trtcheck.options import SETTINGS

if TYPE_CHECKING:
    from trtcheck.cases import Case
    from trtcheck.record import Record
    from trtcheck.rows import Row
    from trtcheck.run import Collection

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
@click.option("--workers", type=int, help=SETTINGS["workers"].help)
@click.option("--shard", metavar="I/N",
              help="Run only the I-th of N shards of the cases (from 1), for a CI matrix; "
                   "'trtcheck merge' combines the shards' results.")
@click.option("--baseline", type=click.Path(path_type=Path), help=SETTINGS["baseline"].help)
@click.option("--cache-dir", type=click.Path(path_type=Path), help=SETTINGS["cache_dir"].help)
@click.option("--cache/--no-cache", "engine_cache", default=None, help=SETTINGS["engine_cache"].help)
@click.option("--timeout", type=float, help=SETTINGS["timeout"].help)
@click.option("--memory-limit", "memory_limit_mb", type=int, help=SETTINGS["memory_limit_mb"].help)
@click.option("--resume", is_flag=True, help="Skip cases already recorded in OUT/results.jsonl.")
@click.option("-q", "--quiet", count=True, help="Less output.")
@click.option("-v", "--verbose", count=True, help="More output.")
def run_cmd(paths: tuple[Path, ...], variants: tuple[str, ...], keyword: str | None,
            config: Path | None, backends_: tuple[str, ...], profiles: tuple[str, ...],
            out: Path | None, device: str | None, isolate: bool | None, workers: int | None,
            shard: str | None, baseline: Path | None, cache_dir: Path | None,
            engine_cache: bool | None, timeout: float | None, memory_limit_mb: int | None,
            resume: bool, quiet: int, verbose: int) -> int:
    """Run every case of the zoo under PATHS and write reports."""
    resolved = _resolve(
        paths, config, variants, keyword, backends_=backends_, profiles=profiles, out=out,
        device=device, isolate=isolate, workers=workers, shard=shard, baseline=baseline,
        cache_dir=cache_dir, engine_cache=engine_cache, timeout=timeout,
        memory_limit_mb=memory_limit_mb, resume=resume, verbosity=verbose - quiet)
    from trtcheck import backends
    from trtcheck.render import write_reports
    from trtcheck.render.terminal import render_summary
    from trtcheck.run import collect, run, start

    opts = backends.choose(resolved)
    if opts.backend_note and opts.verbosity >= 0:
        click.echo(opts.backend_note, err=True)
    chosen = {name: backends.get(name) for name in opts.backends}
    _check_writable(opts.out)
    with contextlib.closing(start(opts, chosen)) as executor:  # workers start while collecting
        collection = collect(opts)
        say = _Progress(opts.verbosity, len(collection.cases))
        say.collection(collection)
        rec, interrupted = run(opts, chosen, collection, say.case, executor)
    written = write_reports(rec, opts.out, strict_xfail=opts.strict_xfail)
    if opts.verbosity >= 0:
        click.echo(render_summary(rec, strict_xfail=opts.strict_xfail))
        click.echo(f"reports: {', '.join(str(p) for p in written)}")
    if interrupted:
        click.echo("trtcheck: interrupted: reports cover the cases that finished", err=True)
        return _publish(INTERRUPTED, opts.out, rec, opts.strict_xfail)
    return _publish(exit_code(rec, opts.strict_xfail), opts.out, rec, opts.strict_xfail)


@cli.command("list")
@_selection
def list_cmd(paths: tuple[Path, ...], variants: tuple[str, ...], keyword: str | None,
             config: Path | None) -> int:
    """Print the cases under PATHS without running them."""
    from trtcheck.render.text import plain
    from trtcheck.run import collect

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
    from trtcheck import record
    from trtcheck.render.analysis import render_analysis
    from trtcheck.run import analyze, collect

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
    from trtcheck import record

    return _write(record.load(results), out or results.parent)


@cli.command("merge")
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="Where to write the combined reports.")
def merge_cmd(results: tuple[Path, ...], out: Path) -> int:
    """Combine the results.json of several shards (--shard I/N) into one set of reports.

    Refuses records that cannot be combined (other versions, device kind, backends, profiles,
    variants, tolerances or timing settings) and shards that overlap; a missing shard becomes
    an error row."""
    from trtcheck.shard import merge

    return _write(merge(results), out)


def _write(rec: Record, out_dir: Path) -> int:
    """Write every report of ``rec`` into ``out_dir``; the exit code its rows give."""
    from trtcheck.render import write_reports

    strict = bool(rec.options.get("strict_xfail", False))
    _check_writable(out_dir)
    written = write_reports(rec, out_dir, strict_xfail=strict)
    click.echo(f"reports: {', '.join(str(p) for p in written)}")
    return _publish(exit_code(rec, strict), out_dir, rec, strict)


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
        from trtcheck.render.annotations import render_annotations

        for line in render_annotations(rec, strict_xfail=strict_xfail) if rec else []:
            click.echo(line)
        github.write_outputs(code, out, rec, strict_xfail=strict_xfail)
    return code


def exit_code(rec: Record, strict_xfail: bool) -> int:
    """0 when no row fails; 1 when any row is fail, error, timeout, crash (or strict xpass)."""
    from trtcheck.status import is_failure

    return 1 if any(is_failure(r.status, strict_xfail=strict_xfail) for r in rec.rows) else 0


class _Progress:
    """One line per case as it finishes."""

    def __init__(self, verbosity: int, total: int) -> None:
        self.verbosity = verbosity
        self.total = total
        self.done = 0

    def collection(self, c: Collection) -> None:
        from trtcheck.render.text import plain

        if self.verbosity >= 0:
            for rel in c.empty_files:
                click.echo(f"note: {plain(rel)}.py declares no models (helpers belong in "
                           "files whose names start with _)", err=True)
            part = (f" (shard {c.shard['index']}/{c.shard['count']} of {c.shard['collected']})"
                    if c.shard else "")
            click.echo(f"collected {len(c.cases)} cases{part}"
                       + (f", {len(c.problems)} collection errors" if c.problems else ""))

    def case(self, case: Case | None, rows: list[Row]) -> None:
        from trtcheck.render.text import plain

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
