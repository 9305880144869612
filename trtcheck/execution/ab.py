"""``trtcheck ab``: a pull request's base and head measured in one job, process against process.

The base ref's tree is checked out as a git worktree in a temporary folder (the head is the
working tree, or another ref checked out the same way); the head's options apply to both, the
base supplies only its zoo files. Fresh processes alternate base, head, head, base, … (the
order reverses every other pair, so that neither side always runs first or last); each
collects the zoo, compiles and times every selected row once, in an order shuffled with a
recorded seed, and exits. After ``start`` processes a side every gated row is judged
(:mod:`trtcheck.results.ab`); the rows still undecided get ``STEP`` more processes a side at a
time, up to ``cap`` or until the time budget is spent.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from trtcheck import forkserver
from trtcheck.backends import preloads
from trtcheck.config.ab import STEP
from trtcheck.config.options import Options
from trtcheck.core.traits import Kind, traits_of
from trtcheck.errors import UsageError
from trtcheck.execution.isolate import WORKER, IsolatedExecutor
from trtcheck.execution.probe import describe, git
from trtcheck.execution.run import Collection, collect
from trtcheck.forkserver import ForkServer
from trtcheck.measure import outputs
from trtcheck.results import ab
from trtcheck.results.ab import Decision, Level
from trtcheck.results.baseline import OUTPUT_CHANGED
from trtcheck.results.kernelsets import differing, kernel_sets
from trtcheck.results.metrics import MAX_REL
from trtcheck.results.processes import SIDES, ProcessFigure, side_dict
from trtcheck.results.record import Record
from trtcheck.results.rows import Analysis, BackendTraits, Row, RowKey
from trtcheck.results.verdict import in_report_order

Say = Callable[[str], None]


@dataclass(frozen=True)
class Tree:
    """One side: the ref it names (None: the working tree), its commit and tree hash, where its
    files are, and the zoo paths in it."""

    side: str
    ref: str | None
    commit: str | None
    tree: str | None
    root: Path
    paths: tuple[Path, ...]
    dirty: bool = False  # the working tree, with changes not committed on ``commit``


@dataclass
class Process:
    """One fresh process of the job: its side, the cases it ran in their order, the seed of
    that order, how long it took, and its rows."""

    index: int
    side: str
    seed: int
    cases: list[str]
    duration_s: float = 0.0
    rows: list[Row] = field(default_factory=list)
    problems: list[Row] = field(default_factory=list)
    analyses: dict[str, Any] = field(default_factory=dict)
    wall_parts: dict[str, float] = field(default_factory=dict)  # seconds, adding up to duration_s
    collected: list[str] = field(default_factory=list)  # its case ids in the zoo's order
    # each case's digests of its seeded inputs and eager's outputs (trtcheck.measure.outputs)
    eager: dict[str, dict[str, str]] = field(default_factory=dict)

    def in_case_order(self) -> list[Row]:
        """The process's rows in the zoo's case order, whatever order they ran in: the problems
        of files that could not be collected first, as ``trtcheck run`` gives them."""
        rank = {case_id: i for i, case_id in enumerate(self.collected)}
        return self.problems + sorted(self.rows, key=lambda r: rank.get(r.case_id, len(rank)))

    def code_hash(self) -> str | None:
        """A hash of the code every row of the process generated (None: no backend said)."""
        hashes = sorted(h for r in self.rows if (h := r.evidence.details.get("code_hash")))
        return hashlib.sha256("\n".join(hashes).encode()).hexdigest()[:16] if hashes else None

    def to_dict(self) -> dict[str, Any]:
        return {"process": self.index, "side": self.side, "seed": self.seed,
                "cases": list(self.cases), "duration_s": round(self.duration_s, 3),
                "wall_parts_s": {k: round(v, 3) for k, v in self.wall_parts.items()},
                "code_hash": self.code_hash()}


def side_of(index: int) -> str:
    """base, head, head, base, base, head, head, base, …"""
    return SIDES[index % 4 in (1, 2)]


def top_level(path: Path) -> Path:
    """The root of the git working tree holding ``path``; UsageError outside one."""
    where = path if path.is_dir() else path.parent
    try:
        return Path(git(where, "rev-parse", "--show-toplevel")).resolve()
    except UsageError:
        raise UsageError(f"trtcheck ab compares two commits of a git repository: {path} is not "
                         "in one") from None


def commit_of(top: Path, ref: str) -> str:
    try:
        return git(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except UsageError:
        raise UsageError(f"--base/--head {ref!r} names no commit of {top}") from None


@contextmanager
def checkout(top: Path, side: str, ref: str | None, paths: tuple[Path, ...],
             into: Path) -> Iterator[Tree]:
    """The tree of ``ref`` as a git worktree under ``into`` (the working tree itself for None,
    its tree hash known only when nothing in it is changed), removed afterwards; its zoo paths
    are ``paths`` at the same place relative to the root."""
    if ref is None:
        commit = git(top, "rev-parse", "HEAD")
        dirty = bool(git(top, "status", "--porcelain"))
        yield Tree(side, None, commit, None if dirty else git(top, "rev-parse", "HEAD^{tree}"),
                   top, paths, dirty)
        return
    commit = commit_of(top, ref)
    where = into / side
    git(top, "worktree", "add", "--detach", "--quiet", str(where), commit)
    try:
        moved = tuple(where / p.relative_to(top) for p in paths)
        yield Tree(side, ref, commit, git(top, "rev-parse", f"{commit}^{{tree}}"), where,
                   tuple(p for p in moved if p.exists()))
    finally:
        with suppress(UsageError):  # removed below in any case
            git(top, "worktree", "remove", "--force", str(where))
        shutil.rmtree(where, ignore_errors=True)


def cache_setup(opts: Options, process: int, caches: Path) -> tuple[Options, dict[str, str]]:
    """A process's options and environment for each backend's compile cache: one folder for
    the job (shared) or one of the process's own (private)."""
    def folder(backend: str) -> Path:
        mode = opts.ab.cache(backend)
        return caches / (f"{backend}-shared" if mode == "shared" else f"{backend}-p{process}")

    inductor = folder("inductor")
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(inductor),
           "TRITON_CACHE_DIR": str(inductor / "triton")}
    if any((t := traits_of(b)) and t.on_tensorrt for b in opts.backends):
        opts = replace(opts, engine_cache=True, cache_dir=folder("tensorrt"))
    return opts, env


def run_process(tree: Tree, opts: Options, backends: Mapping[str, BackendTraits],
                process: Process, wanted: set[str] | None, work: Path, log: Path,
                server: ForkServer | None = None) -> Process:
    """One fresh worker (forked by ``server`` where it forks): collect ``tree``'s zoo, run the
    ``wanted`` cases (all: None) in an order shuffled with the process's seed, and stop it; its
    compile caches and eager outputs are under the job's ``work`` folder."""
    # The first process of each side gives the side's rows, with every check; the others
    # give figures and their comparison with eager, without the export where no backend
    # compiles from it, the analysis and the dtype drift check (a second compile).
    popts, env = cache_setup(replace(opts, paths=tree.paths, figures_only=process.index >= 2,
                                     kernels=True,
                                     eager_outputs=eager_folder(work, process.index)),
                             process.index, work / "caches")
    executor = IsolatedExecutor(popts, backends, log, env, server=server)
    try:
        collection: Collection = collect(popts, executor)
        cases = [c for c in collection.cases if wanted is None or c.case_id in wanted]
        process.collected = [c.case_id for c in cases]
        random.Random(process.seed).shuffle(cases)
        process.cases = [c.case_id for c in cases]
        process.problems = list(collection.problems)
        for case in cases:
            for item in executor.rows(case):
                if isinstance(item, Analysis):
                    process.analyses[item.case_id] = item.data
                else:
                    process.rows.append(item)
    finally:
        executor.close()
        end = time.monotonic()
    process.duration_s = end - executor.timeline.marks[0][0]
    process.wall_parts = executor.timeline.parts(end)
    process.eager = outputs.read_digests(popts.eager_outputs)
    return process


def eager_folder(work: Path, process: int) -> Path:
    """Where a process keeps its eager digests and, the first of each side, its outputs."""
    return work / "eager" / f"p{process}"


def figure(row: Row, process: Process) -> ProcessFigure:
    lat = None if row.prediction else row.latency
    device = lat.backend_device or lat.backend if lat is not None else None
    eager = process.eager.get(row.case_id)
    return ProcessFigure(process.index, str(row.status), lat.speedup if lat is not None else None,
                         device.median_ms if device is not None else None,
                         row.evidence.details.get("code_hash"), kernel_entry(row),
                         MAX_REL.of_row(row.outputs),
                         f"{eager['inputs']}/{eager['outputs']}" if eager else None)


def kernel_entry(row: Row) -> dict[str, Any]:
    """A row's ``process_kernels`` entry: eager's and the backend's fingerprints, or why there
    are none (trtcheck.measure.kernels)."""
    found = row.evidence.details.get("kernels")
    if not found:
        return {"reason": "not timed, so no kernels taken" if row.latency is None or row.prediction
                else "no kernels taken"}
    prints = {who: found[who].get("fingerprint") for who in ("eager", "backend")}
    if any(prints.values()):
        return prints
    return {"reason": "; ".join(dict.fromkeys(found[who].get("reason", "")
                                              for who in ("eager", "backend")))}


@dataclass
class Job:
    """The processes of one ``ab`` job, and what they gave."""

    opts: Options
    backends: Mapping[str, BackendTraits]
    trees: Mapping[str, Tree]
    work: Path
    say: Say
    seed: int
    server: ForkServer | None = None
    processes: list[Process] = field(default_factory=list)

    def run(self, count: int, wanted: set[str] | None) -> None:
        """``count`` more processes, continuing the alternation."""
        for _ in range(count):
            index = len(self.processes)
            side = side_of(index)
            process = Process(index, side, self.seed + index, [])
            tree = self.trees[side]
            if tree.paths:
                run_process(tree, self.opts, self.backends, process, wanted,
                            self.work, self.opts.out / "worker.log", self.server)
            if self.server is not None and self.server.refused:
                self.say(f"ab: processes start a new interpreter from now on: {self.server.refused}")
                self.server = None
            self.processes.append(process)
            most = sorted(process.wall_parts.items(), key=lambda kv: -kv[1])[:2]
            self.say(f"ab: process {index + 1} ({side}{', ' + tree.ref if tree.ref else ''}): "
                     f"{len(process.rows)} rows in {process.duration_s:.1f} s"
                     + (f" ({', '.join(f'{k} {v:.1f} s' for k, v in most)})" if most else ""))

    def figures(self) -> dict[RowKey, dict[str, list[ProcessFigure]]]:
        found: dict[RowKey, dict[str, list[ProcessFigure]]] = {}
        for p in self.processes:
            for row in p.rows:
                found.setdefault(row.key, {s: [] for s in SIDES})[p.side].append(
                    figure(row, p))
        return found

    def kernel_names(self) -> dict[RowKey, dict[str, dict[str, list[str]]]]:
        """Each row's kernel sets (by fingerprint): the names of eager's and the backend's
        kernels, from the first process that ran each."""
        found: dict[RowKey, dict[str, dict[str, list[str]]]] = {}
        for p in self.processes:
            for row in p.rows:
                key = figure(row, p).kernel_set
                kernels = row.evidence.details.get("kernels") or {}
                if key is not None:
                    found.setdefault(row.key, {}).setdefault(key, {
                        who: list((kernels.get(who) or {}).get("names") or [])
                        for who in ("eager", "backend")})
        return found

    def eager_differences(self, figures: ab.Figures) -> dict[str, str]:
        """How each case's eager outputs differ, head against base, where their digests do
        (:func:`trtcheck.results.ab.eager_change`): from the values the first process of each
        side kept, in words."""
        firsts = {side: next((p for p in self.processes if p.side == side), None)
                  for side in SIDES}
        found: dict[str, str] = {}
        for key, per in figures.items():
            change = ab.eager_change(per, "")
            if key.case_id in found or change is None or change[0] != OUTPUT_CHANGED:
                continue
            kept = [outputs.values_file(eager_folder(self.work, p.index), key.case_id)
                    for p in firsts.values() if p is not None]
            if len(kept) == 2:
                found[key.case_id] = outputs.difference(*kept)
        return found

    def record(self, side: str) -> Record:
        """A side's record: the rows and analyses of its first process."""
        first = next((p for p in self.processes if p.side == side), None)
        tree = self.trees[side]
        env = describe(self.opts.device, tree.root)
        env["git_commit"] = tree.commit
        rows = first.in_case_order() if first else []
        return Record(env, self.opts.to_dict(), rows, dict(first.analyses) if first else {})


def run_ab(opts: Options, backends: Mapping[str, BackendTraits], base_ref: str,
           head_ref: str | None, say: Say) -> Record:
    """Measure base and head in one job; the head's record, holding both sides
    (``Record.ab``) and the head's changes against the base (``Record.baseline``)."""
    top = top_level(opts.paths[0])
    paths = tuple(p.resolve() for p in opts.paths)
    outside = [p for p in paths if top not in (p, *p.parents)]
    if outside:
        raise UsageError(f"{outside[0]} is outside the repository {top}")
    settings = opts.ab
    seed = settings.seed if settings.seed is not None else random.SystemRandom().randrange(2**31)
    started = time.monotonic()
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    with tempfile.TemporaryDirectory(prefix="trtcheck-ab-") as tmp, \
            warm_parent(opts, say) as server:
        work = Path(tmp)
        with checkout(top, "base", base_ref, paths, work) as base, \
                checkout(top, "head", head_ref, paths, work) as head:
            job = Job(opts, backends, {"base": base, "head": head}, work, say, seed, server)
            predictions = all(b.kind is not Kind.MEASURED for b in backends.values())
            job.run(2 if predictions else 2 * settings.start, None)
            base_rec, head_rec = job.record("base"), job.record("head")
            keys = ab.gated(base_rec, head_rec)
            level = Level(settings.alpha, len(keys),
                          ab.looks(settings.start, settings.cap, STEP))
            decisions = _sequential(job, keys, level, started) if keys else {}
            figures, names = job.figures(), job.kernel_names()
            differences = job.eager_differences(figures)
    head_rec.environment["started"] = started_at
    head_rec.environment["duration_s"] = round(time.monotonic() - started, 3)
    head_rec.ab = {
        "sides": {t.side: {"ref": t.ref or "working tree", "commit": t.commit, "tree": t.tree,
                           "dirty": t.dirty,
                           "zoo_paths": [str(p.relative_to(t.root)) for p in t.paths]}
                  for t in (base, head)},
        "same_tree": base.tree is not None and base.tree == head.tree,
        "seed": seed,
        "settings": settings.to_dict(),
        "statuses_only": not keys,
        "level": level.to_dict(),
        "processes": [p.to_dict() for p in job.processes],
        "base_rows": [r.to_dict() for r in base_rec.rows],
        "eager_differences": differences,
        "rows": [{"case_id": k.case_id, "backend": k.backend, "profile": k.profile,
                  **{side: side_dict(per[side]) for side in SIDES},
                  "kernel_sets": _kernel_sets(per, names.get(k, {}), opts.gate.metric),
                  "decision": decisions[k].to_dict() if k in decisions else None}
                 for k, per in figures.items()],
    }
    in_report_order(head_rec)  # before the changes against the base, which follow its rows
    diff = ab.to_diff(base_rec, head_rec, decisions, figures, metric=opts.gate.metric,
                      threshold=opts.gate.threshold, level=level, differences=differences)
    head_rec.baseline = diff.to_dict()
    return head_rec


@contextmanager
def warm_parent(opts: Options, say: Say) -> Iterator[ForkServer | None]:
    """The job's fork server, importing torch, trtcheck's worker and what the backends preload
    while the trees are checked out; None where the processes start a new interpreter each."""
    why = forkserver.unavailable() if opts.ab.fork else "--no-fork"
    if why:
        say(f"ab: each process starts a new interpreter: {why}")
        yield None
        return
    opts.out.mkdir(parents=True, exist_ok=True)
    with (opts.out / "worker.log").open("a", encoding="utf-8", errors="replace") as log:
        server = ForkServer(("torch", WORKER, *preloads(opts.backends)), log)
    say("ab: processes fork from a parent that imports torch, inductor and trtcheck once")
    try:
        yield server
    finally:
        server.close()
def _kernel_sets(per: Mapping[str, list[ProcessFigure]], names: Mapping[str, Any],
                 metric: str) -> list[dict[str, Any]]:
    """A row's kernel sets as results.json holds them, each with the kernel names that tell it
    from the others (none when one set ran throughout)."""
    sets = kernel_sets(per["base"], per["head"], metric)
    apart = differing(names) if len(sets) > 1 else {}
    return [{**k.to_dict(), "differing_names": apart.get(k.fingerprint, {})} for k in sets]


def _sequential(job: Job, keys: list[RowKey], level: Level,
                started: float) -> dict[RowKey, Decision]:
    """:func:`trtcheck.results.ab.sequential`, whose extra processes run here within the
    time budget."""
    settings = job.opts.ab

    def measure_more(undecided: list[RowKey], more: int) -> bool:
        recent = job.processes[-2 * STEP:]
        estimate = 2 * more * sum(p.duration_s for p in recent) / max(1, len(recent))
        if time.monotonic() - started + estimate > settings.budget_s:
            job.say(f"ab: {len(undecided)} rows undecided; no more processes: {2 * more} more "
                    f"would pass the {settings.budget_s:g} s budget")
            return False
        job.say(f"ab: {len(undecided)} rows undecided: {more} more processes a side")
        job.run(2 * more, {k.case_id for k in undecided})
        return True

    return ab.sequential(keys, job.figures, measure_more, start=settings.start,
                         cap=settings.cap, step=STEP, metric=job.opts.gate.metric,
                         threshold=job.opts.gate.threshold, level=level)
