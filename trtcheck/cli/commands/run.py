"""``trtcheck run``: every case of the zoo, its reports, its exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from trtcheck.cli import common
from trtcheck.config import cascade, options, settings
from trtcheck.core.profiles import BUILTIN_PROFILES
from trtcheck.errors import exit_codes_help

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


@click.command("run", epilog=RUN_EPILOG)
@common.paths_arg
@settings.click_options(settings.RUN)
def run_cmd(paths: tuple[Path, ...], **given: Any) -> int:
    """Run every case of the zoo under PATHS and write reports."""
    resolved = cascade.resolve(paths, **given)
    return run_and_finish(resolved, reduce_total=resolved.reduce_budget if resolved.reduce else None)


def run_and_finish(resolved: options.Options, reduce_total: float | None, *,
                   must_reduce: bool = False) -> int:
    """Run (:func:`trtcheck.execution.job.run_job`), reducing the failing rows when asked
    (``reduce_total``: the seconds all reductions may take together, None for no cap), and
    finish; with ``must_reduce`` (``trtcheck reduce``), exit 2 when no selected row could be
    reduced."""
    from trtcheck.cli.progress import Progress
    from trtcheck.execution import job
    from trtcheck.results import record

    opts = job.prepare(resolved)
    after = None
    if opts.reduce:
        from trtcheck.reduce.reducer import reducing

        after = reducing(reduce_total, common.teller(opts))
    base = record.load(opts.baseline) if opts.baseline else None  # a bad one stops us early
    common.opening(opts)
    common.check_writable(opts.out)
    with record.locked(opts.out):
        rec = job.run_job(opts, lambda c: Progress(opts.verbosity, c), base=base, after=after)
        refuse = None
        if must_reduce and not rec.stopped:  # a stopped run says so, not this
            from trtcheck.reduce.signature import reducible  # torch: the reduction loaded it

            if all(reducible(r) is not None for r in rec.rows):
                refuse = ("trtcheck: nothing to reduce: no selected row failed at compile, run "
                          "or compare (the rows that failed, if any, say why in the reports)")
        return common.finish(rec, opts.out, job=common.RUN, verbosity=opts.verbosity,
                             refuse=refuse)

