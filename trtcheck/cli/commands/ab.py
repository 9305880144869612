"""``trtcheck ab``: the base and the head measured in one job, process against process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from trtcheck.cli import common
from trtcheck.config import cascade, settings
from trtcheck.errors import UsageError

AB_EPILOG = """\b
Checks out REF's tree as a git worktree in a temporary folder and runs the
zoo under PATHS of both sides in fresh processes, alternating base, head, head,
base, ...; each process compiles and times every selected row once. A row is
slower when its change is beyond --threshold and significant across processes
(Welch's one-sided t test on per-process log figures, at a level corrected for
every row and every look); rows still undecided get more processes, up to
--max-processes or the --ab-budget. The head's configuration applies; the base
supplies only its zoo files. Prediction backends (lowering, emulate) have no
latency: their statuses alone are compared. Each case's eager outputs on its
seeded inputs are compared too: a row whose outputs changed is named.
\b
Exit codes as 'trtcheck run': with --fail-on regression also 1 for a row
judged slower, with --fail-on output-change for a row whose eager outputs
changed; a row with not enough evidence never fails the job. The headline
counts the failing rows the head broke apart from those failing on the base.
"""


@click.command("ab", epilog=AB_EPILOG)
@click.option("--base", "base_ref", required=True, metavar="REF",
              help="The commit to compare with (a branch, tag or hash; HEAD~1).")
@click.option("--head", "head_ref", metavar="REF",
              help="The commit measured against it [the working tree].")
@common.paths_arg
@settings.click_options(settings.AB)
def ab_cmd(base_ref: str, head_ref: str | None, paths: tuple[Path, ...], **given: Any) -> int:
    """Measure the zoo under PATHS at the base commit and at the head in one job, process
    against process, and report each row's change; exits as 'trtcheck run' would."""
    from trtcheck.core.traits import traits_table
    from trtcheck.execution import job
    from trtcheck.execution.ab import run_ab
    from trtcheck.results import record

    opts = cascade.resolve(paths, **given)
    if not opts.isolate or opts.workers > 1:
        raise UsageError("trtcheck ab runs one fresh worker process at a time: leave out "
                         "--no-isolate and --workers")
    opts = job.prepare(opts)
    common.opening(opts)
    common.check_writable(opts.out)
    with record.locked(opts.out):
        rec = run_ab(opts, traits_table(opts.backends), base_ref, head_ref, common.teller(opts))
        return common.finish(rec, opts.out, job=common.AB, verbosity=opts.verbosity)
