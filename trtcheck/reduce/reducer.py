"""Reduce a run's failing rows: record each row's graph, shrink it on the row's backend and
profile, write its bundle, and check the bundle in a fresh ``trtcheck run``."""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from trtcheck.backends import lowering_label
from trtcheck.backends.lowering.code import (
    VERSION,
    CodeUnavailable,
    default_release,
    locate,
    torch_minor,
)
from trtcheck.backends.torch_tensorrt.compat import adapt_settings, parse_version
from trtcheck.config.options import Options
from trtcheck.core.profiles import BUILTIN_PROFILES, Profile
from trtcheck.core.traits import BackendRef, Kind, traits_of
from trtcheck.execution.case import in_full
from trtcheck.execution.job import After
from trtcheck.execution.run import Collection, OneAtATime
from trtcheck.process import child_env, python_command
from trtcheck.program.export import export
from trtcheck.reduce import bundle, history
from trtcheck.reduce.graph import (
    NotAGraph,
    Recorded,
    Subgraph,
    count_nodes,
    record,
    replay,
    slug,
    subgraph,
)
from trtcheck.reduce.shrink import Exhausted, Search, shrink
from trtcheck.reduce.signature import Signature, reducible, signature
from trtcheck.results.record import Record
from trtcheck.results.rows import DEPLOY_STAGES, NO_PROFILE, Row
from trtcheck.status import FAILING, Status
from trtcheck.tensors import StateSnapshot, clone, leaves_with_paths, same_values
from trtcheck.zoo import discover
from trtcheck.zoo.cases import Case, build
from trtcheck.zoo.discover import ImportFailure, ZooFile

REPRO_DIR = "repro"
Say = Callable[[str], None]
Values = tuple[list[torch.Tensor], dict[str, torch.Tensor]]  # a subgraph's inputs and buffers


@dataclass(frozen=True)
class Limits:
    """How much one reduction may spend, and whether the bundle may carry the real values."""

    budget_s: float = 120.0  # a row
    attempts: int = 200  # candidates tried, a row
    keep_real_values: bool = False
    total_s: float | None = None  # every row of a run together (``run --reduce``)


class Candidates:
    """Runs candidates on one backend and profile: each written as a zoo file and run one at a
    time by the run's executor (its worker, its backends and its timeout), under options of
    their own; the row's tolerances kept."""

    def __init__(self, opts: Options, backends: Mapping[str, Any], executor: OneAtATime,
                 work: Path) -> None:
        self.opts = opts
        self.backends = backends
        self.executor = executor
        self.work = work
        self.count = 0

    def run(self, sub: Subgraph, case: Case, values: Values | None = None) -> Row:
        self.count += 1
        folder = self.work / f"c{self.count:04d}"
        folder.mkdir(parents=True)
        path, _ = write_zoo(folder, sub, case, values, about=f"A candidate of {case.case_id}.")
        return self.row(path, case)

    def row(self, path: Path, case: Case) -> Row:
        found = discover.load(ZooFile(path.parent, path))
        if not isinstance(found, discover.Discovered) or not found.specs:
            raise RuntimeError(f"the generated zoo file {path} did not load: "
                               f"{getattr(found, 'message', 'no model')}")
        candidate = Case(found.file, found.specs[0], case.variant)
        if self.executor.opts is not self.opts:
            self.executor.configure(self.opts, self.backends)
        rows = [item for item in self.executor.rows(candidate) if isinstance(item, Row)]
        return rows[0]


def write_zoo(folder: Path, sub: Subgraph, case: Case, values: Values | None,
              about: str) -> tuple[Path, str]:
    """The subgraph as a zoo file and its ``inputs.pt`` in ``folder`` (eager's values unless
    ``values`` gives others): the file, and the module's source it holds."""
    inputs, weights = values or (sub.inputs, sub.weights)
    bundle.save_data(folder / bundle.DATA, inputs, weights)
    count = sum(n.op == "call_function" for n in sub.module.graph.nodes)
    module = bundle.module_source(sub, f"{_nodes(count)} reduced from {case.case_id}.")
    path = folder / bundle.ZOO_FILE
    path.write_text(bundle.zoo_source(module, _identifier(case.spec.name), case.variant,
                                      (case.spec.rtol, case.spec.atol), about), encoding="utf-8")
    return path, module


def _nodes(count: int) -> str:
    return f"{count} node" + ("" if count == 1 else "s")


def _identifier(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out if out and not out[0].isdigit() else f"m_{out}"


@dataclass(frozen=True)
class Pending:
    """A bundle written and waiting for its check in a fresh process: the folder, the ``run``
    arguments that check it, its case id in that run, and what makes its reduction from the
    fresh rows of that case (and why there are none, where the fresh run wrote no results)."""

    folder: Path
    command: tuple[str, ...]
    fresh_id: str
    finish: Callable[[list[Row], str | None], dict[str, Any]]


def random_like(values: Iterable[torch.Tensor], seed: int = 0) -> list[torch.Tensor]:
    """Random tensors of the same dtype and shape: normal for floating and complex, integers
    within the real ones' range, booleans at even odds."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for value in values:
        v = value.detach().cpu()
        if v.is_floating_point() or v.is_complex():
            out.append(torch.randn(v.shape, dtype=v.dtype, generator=gen))
        elif v.dtype == torch.bool:
            out.append(torch.rand(v.shape, generator=gen) < 0.5)
        elif v.numel():
            lo, hi = int(v.min()), int(v.max())
            out.append(torch.randint(lo, hi + 1, v.shape, dtype=v.dtype, generator=gen))
        else:
            out.append(v.clone())
    return out


class Reducer:
    """Reduces rows of one run; one :class:`Candidates` per backend and profile, all run by
    ``executor``, the run's."""

    def __init__(self, opts: Options, backends: Mapping[str, Any], executor: OneAtATime,
                 limits: Limits, env: Mapping[str, Any], say: Say = lambda text: None) -> None:
        self.opts = opts
        self.backends = backends
        self.executor = executor
        self.limits = limits
        self.say = say
        self.out = opts.out / REPRO_DIR
        self.tmp = tempfile.TemporaryDirectory(prefix="trtcheck-reduce-")
        self.runners: dict[tuple[str, str], Candidates] = {}
        self.started = time.monotonic()
        self.env = env  # the run's environment, as its record holds it
        self._histories: dict[str, tuple[str, ...]] = {}  # by backend: the releases checked

    def close(self) -> None:
        self.tmp.cleanup()

    def _profile(self, row: Row) -> Profile | None:
        """The profile the row ran under: the run's of that name; for a backend that ignores
        profiles (``-``), the default one, which its candidates ignore too."""
        name = "default" if row.profile == NO_PROFILE else row.profile
        chosen = {p.name: p for p in (*BUILTIN_PROFILES.values(), *self.opts.profiles)}
        return chosen.get(name)

    def _runner(self, row: Row, profile: Profile) -> Candidates:
        key = (row.backend, profile.name)
        if key not in self.runners:
            # the executor's options: a pool's first worker keeps its own device
            # candidates deploy only where the row failed at the deploy stage
            opts = replace(self.executor.opts, backends=(row.backend,), profiles=(profile,),
                           deploy=row.stage in DEPLOY_STAGES,
                           timing=bundle.QUICK, workers=1, devices=self.executor.opts.devices[:1],
                           out=Path(self.tmp.name) / slug(f"{row.backend}-{profile.name}"))
            opts.out.mkdir(parents=True, exist_ok=True)
            self.runners[key] = Candidates(opts, {row.backend: self.backends[row.backend]},
                                           self.executor, opts.out)
        return self.runners[key]

    def reduce(self, case: Case, row: Row) -> dict[str, Any] | Pending:
        """The row's reduction: why not and how far it got, or its bundle written and waiting
        for :meth:`check`."""
        why = reducible(row)
        if why:
            return {"reduced": False, "why": why}
        budget = self.limits.budget_s
        if self.limits.total_s is not None:
            budget = min(budget, self.limits.total_s - (time.monotonic() - self.started))
            if budget <= 0:
                return {"reduced": False,
                        "why": f"the run's reduce budget of {self.limits.total_s:g} s was spent"}
        profile = self._profile(row)
        if profile is None:
            return {"reduced": False, "why": f"its profile {row.profile!r} is not one this run "
                                             "knows"}
        why = profile.front_end.cannot_reduce(row.evidence.details)
        if why:
            return {"reduced": False, "why": why}
        started = time.monotonic()
        values = signature(row).mismatch in ("values", "nonfinite")
        try:
            rec, eager_differs = _record(case, twice=values)
        except Exception as exc:  # the row stays as it is; the reason is shown with it
            return {"reduced": False, "why": f"its exported graph could not be recorded: {exc}"}
        random = _randomness(rec, eager_differs) if values else None
        if random:
            return {"reduced": False, "random": True, "why": random}
        runner = self._runner(row, profile)
        name = f"{case.case_id} [{row.backend}/{row.profile}]"

        def trial(sub: Subgraph) -> Row:
            return runner.run(sub, case)

        target = signature(row)  # a mismatch's op is found while shrinking
        search = Search(rec, trial, target, budget, self.limits.attempts,
                        progress=lambda text: self.say(f"reduce {name}: {text}"))
        whole = rec.names
        self.say(f"reduce {name}: {len(whole)} nodes, {target.describe()}")
        try:
            if not search.fails(whole, op=False):
                got = search.rejected[-1][0] if search.rejected else None
                gives = ("is no graph of tensors" if got is None else "passes" if got.status ==
                         Status.PASS.value else f"gives a different failure, {got.describe()},")
                return {"reduced": False, "original_nodes": len(whole),
                        "why": f"its exported graph, run on {row.backend}/{row.profile} as a module "
                               f"of its own, {gives} where the row gave {target.describe()}, so "
                               "no cut of it shows the row's failure"}
            shrink(search)
            stopped = None
        except Exhausted as exc:
            stopped = str(exc)
        except NotAGraph as exc:
            return {"reduced": False, "why": str(exc)}
        if search.best_row is None:
            return {"reduced": False, "why": stopped or "no candidate failed the same way"}
        if search.target.mismatch and not search.target.op:  # stopped before the op was found
            search.target = search.signature_of(search.best, search.best_row)
        return self._bundle(case, row, profile, rec, search, search.target, stopped,
                            time.monotonic() - started)

    def _bundle(self, case: Case, row: Row, profile: Profile, rec: Recorded, search: Search,
                target: Signature, stopped: str | None, seconds: float) -> Pending:
        sub = subgraph(rec, search.best)
        values, held, note = self._values(case, row, profile, rec, search, target, sub)
        folder = self.out / slug(f"{case.case_id}-{row.backend}-{row.profile}")
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.iterdir():
            if stale.is_file():
                stale.unlink()
        about = (f"{_nodes(len(search.best))} of {case.case_id} that fail on {row.backend} under "
                 f"profile {row.profile} as the whole model does: {target.describe()}.")
        _, module = write_zoo(folder, sub, case, values, about)
        (folder / "trtcheck.toml").write_text(bundle.config_source(profile, self.opts.tolerances),
                                              encoding="utf-8")
        shown = shlex.join(["trtcheck", "run", bundle.ZOO_FILE, *self._command(row)[1:]])
        command = self._command(row, self._history(row))
        ran = self._ran(row, profile)
        settings = row_settings(ran, profile)
        tolerances = [bundle.Tolerance(leaf.get("rtol", 5e-3), leaf.get("atol", 5e-3))
                      for leaf in search.best_row.outputs]
        deployed = next((e["format"] for e in row.evidence.deploy
                         if e.get("status") in ("fail", "error")), None)
        (folder / bundle.REPRO).write_text(bundle.repro_source(module, settings, tolerances,
                                                               shown, about, ran, profile.name,
                                                               deployed),
                                           encoding="utf-8")

        # What the fresh rows are read with, taken now so that the graph need not wait with them.
        sinks, ops = rec.sinks(search.best), {n: rec.op(n) for n in rec.ordered(search.best)}
        original_nodes, reduced_nodes, code = len(rec.names), count_nodes(sub.export()), sub.code()
        reduced_ops = list(ops.values())
        described = ([_describe(f"x{i}", t) for i, t in enumerate(sub.inputs)],
                     [_describe(k, t) for k, t in sub.weights.items()])
        best_row, tried = search.best_row, search.tried

        def finish(fresh: list[Row], unchecked: str | None) -> dict[str, Any]:
            """The bundle's ``ISSUE.md`` and ``summary.json`` from its fresh rows, and the
            row's reduction."""
            if unchecked:
                self.say(f"reduce {case.case_id}: the fresh process wrote no results ({unchecked})")
            mine = self._pick(fresh, row)
            got = signature(mine, sinks, ops) if mine is not None else None
            reproduced = got is not None and target.same(got)
            releases = {self._release(r): _outcome(target, signature(r, sinks, ops))
                        for r in fresh}
            line = history.line(releases) if releases else None
            # the bundle fails, but not as the row did: another bug, never offered as the row's
            different = got if got is not None and not reproduced and got.status in (
                Status.FAIL.value, Status.ERROR.value) else None
            shown_row = mine if mine is not None and reproduced else best_row
            issue = bundle.Issue(
                case.case_id, shown_row, target, original_nodes, reduced_nodes, code, reduced_ops,
                *described, note, self.env, ran, profile.name, settings,
                releases if len(releases) > 1 else {}, shown, line, different)
            (folder / "ISSUE.md").write_text(bundle.issue_text(issue), encoding="utf-8")
            summary = {
                "case_id": case.case_id, "backend": row.backend, "profile": row.profile,
                "original_nodes": original_nodes, "reduced_nodes": reduced_nodes,
                "signature": target.to_dict(), "seconds": round(seconds, 2),
                "reproduced": reproduced, "unchecked": unchecked, "attempts": tried,
                "complete": stopped is None, "stopped": stopped, "values": held,
                "releases": releases, "history": line,
                "fixed_in": history.fixed_in(releases) if reproduced else None,
                "different": ({"row": target.to_dict(), "bundle": different.to_dict()}
                              if different else None),
            }
            bundle.write_json(folder / "summary.json", summary)
            rel = folder.relative_to(self.opts.out).as_posix()
            return {"reduced": True, "bundle": rel, **{k: summary[k] for k in (
                "original_nodes", "reduced_nodes", "seconds", "reproduced", "unchecked", "attempts",
                "complete", "stopped", "values", "releases", "history", "fixed_in")},
                    "signature": target.describe(),
                    **({"different": different.describe()} if different else {}),
                    "files": sorted(p.name for p in folder.iterdir() if p.is_file())}

        fresh_id = f"{Path(bundle.ZOO_FILE).stem}::{_identifier(case.spec.name)}[{case.variant}]"
        return Pending(folder, tuple(command), fresh_id, finish)

    def check(self, pending: Mapping[int, Pending]) -> dict[int, dict[str, Any]]:
        """Each pending bundle checked in a fresh ``trtcheck run``, and its reduction. Bundles
        checked by the same arguments and config (rows of one backend and profile) share one
        fresh process, which starts Python, torch and each release's code once for them all;
        where that process writes no results, each of its bundles is checked again alone, so
        that one bundle that kills it does not leave the others unchecked."""
        groups: list[list[int]] = []
        for i, p in pending.items():
            config = (p.folder / "trtcheck.toml").read_text(encoding="utf-8")
            group = next((g for g in groups if pending[g[0]].command == p.command
                          and (pending[g[0]].folder / "trtcheck.toml").read_text(encoding="utf-8")
                          == config and all(pending[j].fresh_id != p.fresh_id for j in g)), None)
            if group is None:
                groups.append([i])
            else:
                group.append(i)
        done: dict[int, dict[str, Any]] = {}
        for group in groups:
            folders = [pending[i].folder for i in group]
            self.say(f"reduce: checking {', '.join(map(str, folders))} in a fresh process")
            fresh, unchecked = _fresh_rows(folders, list(pending[group[0]].command), self.opts)
            if unchecked and len(group) > 1:
                for i in group:
                    self.say(f"reduce: checking {pending[i].folder} in a fresh process of its own")
                    done[i] = _finished(pending[i], *_fresh_rows([pending[i].folder],
                                                                 list(pending[i].command),
                                                                 self.opts))
                continue
            for i in group:
                done[i] = _finished(pending[i], fresh, unchecked)
        return done

    def _values(self, case: Case, row: Row, profile: Profile, rec: Recorded, search: Search,
                target: Signature, sub: Subgraph) -> tuple[Values, str, str]:
        """The values the bundle holds, what they are (``random``, ``example``, ``real``) and its
        note on them: random inputs and buffers where the failure reproduces with them; else the
        case's own example inputs and what the graph computes from them through random weights
        (where random inputs make eager fail or fail another way); the real values only on
        request."""
        runner = self._runner(row, profile)
        names = sorted(rec.weights)
        weights = dict(zip(names, random_like([rec.values[n] for n in names], seed=1), strict=True))
        try:
            example = subgraph(rec, search.best, replay(rec, weights))
        except Exception:  # random weights that the graph cannot run on: random values only
            example = None
        buffers = example.weights if example else dict(zip(
            sub.weights, random_like(sub.weights.values(), seed=1), strict=True))
        fake = (random_like(sub.inputs), buffers)
        got = search.signature_of(search.best, runner.run(sub, case, fake))
        if target.same(got):
            return fake, "random", ("Inputs and buffers are random values of the same dtype and "
                                    "shape as the model's: the failure reproduces with them.")
        why = (f"with random inputs eager itself fails ({got.describe()})"
               if got.status == Status.ERROR.value and got.stage in ("eager", "export", "build")
               else f"random inputs give {got.describe()} instead")
        own = ("the case's own example inputs (those its zoo file's factory returns) and the values "
               "the graph computes from them through random weights, since " + why)
        if example is not None:
            shown = (example.inputs, example.weights)
            if target.same(search.signature_of(search.best, runner.run(sub, case, shown))):
                return shown, "example", (f"Inputs are {own}; buffers are random values of the "
                                          "same dtype and shape as the model's weights.")
        if self.limits.keep_real_values:
            return (sub.inputs, sub.weights), "real", (
                "Inputs and buffers are the model's real values (kept on request: the failure "
                "does not reproduce with random ones). Review them before posting this.")
        if example is not None:
            return (example.inputs, example.weights), "example", (
                f"Inputs are {own}; buffers are random. The failure needs the model's real "
                "weights, which this bundle does not carry (`--keep-real-values` keeps them).")
        return fake, "random", (
            "Inputs and buffers are random values of the same dtype and shape; the failure needs "
            "the model's real values, which this bundle does not carry (`--keep-real-values` "
            "keeps them).")

    def _ran(self, row: Row, profile: Profile) -> bundle.Ran:
        """What compiled the row, at which level, through which front-end, and the release
        whose settings it took."""
        ref = BackendRef.parse(row.backend)
        kind = ref.traits.kind if ref.traits else None
        versions = row.evidence.versions
        if kind is Kind.LOWERED:
            return bundle.Ran(row.backend, self._release(row),
                              bundle.GRAPH if self.opts.lowering_dryrun else bundle.CONVERTERS,
                              frontend=profile.frontend)
        release = (ref.release or versions.get("torch_tensorrt") or self.env.get("torch_tensorrt")
                   or default_release(torch_minor()))
        if ref.traits and ref.traits.on_tensorrt:
            return bundle.Ran(row.backend, release, bundle.MEASURED,
                              versions.get("tensorrt") or self.env.get("tensorrt"), profile.frontend)
        return bundle.Ran(row.backend, release,
                          bundle.EMULATED if kind is Kind.EMULATED else bundle.PYTORCH,
                          frontend=profile.frontend)

    def _history(self, row: Row) -> tuple[str, ...]:
        """The releases a lowering row's bundle also runs on, for its history: ``releases``
        where given, else every release known or cached, each whose code can be had (fetched
        as needed; offline, the cached ones); none for another backend."""
        traits = BackendRef.parse(row.backend).traits
        if traits is None or traits.kind is not Kind.LOWERED or not VERSION.fullmatch(
                self._release(row)):  # a folder or wheel that names no release: none to add to
            return ()
        if row.backend not in self._histories:
            found = []
            for version in history.candidates(self.opts.releases):
                why = history.available(version)
                if why:
                    self.say(f"reduce: no history on Torch-TensorRT {version}: {why}")
                else:
                    found.append(version)
            self._histories[row.backend] = tuple(found)
        return self._histories[row.backend]

    def _pick(self, rows: list[Row], row: Row) -> Row | None:
        """The fresh row on the reduced row's backend and release (``lowering`` stands for its
        one release)."""
        exact = [r for r in rows if r.backend == row.backend]
        if exact:
            return exact[0]
        name = BackendRef.parse(row.backend).name
        same = [r for r in rows if BackendRef.parse(r.backend).name == name]
        if len(same) > 1:
            same = [r for r in same if self._release(r) == self._release(row)]
        return same[0] if len(same) == 1 else None

    def _release(self, row: Row) -> str:
        """The Torch-TensorRT release a lowering row ran (its label; else the one named; else
        the one ``lowering`` finds with none named; else the backend's name)."""
        label = BackendRef.parse(row.backend).release or row.evidence.versions.get("torch_tensorrt")
        if not label and len(self.opts.torch_tensorrt) == 1:
            label = lowering_label(self.opts.torch_tensorrt[0])
        if not label and not self.opts.torch_tensorrt:
            try:
                label = locate(None).version
            except CodeUnavailable:
                label = None
        return label or row.backend

    def _command(self, row: Row, more: tuple[str, ...] = ()) -> list[str]:
        """``run`` arguments that reproduce the row's backend (every release, for bisection),
        and run ``more`` releases besides (the row's own then named too)."""
        base = BackendRef.parse(row.backend).name
        args = ["run", "--backend", base]
        if row.profile != NO_PROFILE:
            args += ["--profile", row.profile]
        named = list(self.opts.torch_tensorrt)
        if more and not named:
            named = [self._release(row)]
        named += [v for v in more if v not in {lowering_label(n) for n in named}]
        for spec in named:
            args += ["--torch-tensorrt", spec]
        if self.opts.device != "cpu":
            args += ["--device", self.opts.device]
        lowered = (traits := traits_of(base)) is not None and traits.kind is Kind.LOWERED
        if lowered and self.opts.lowering_dryrun:  # the level it was reduced at
            args.append("--lowering-dryrun")
        if row.stage not in DEPLOY_STAGES:  # a failure before the round trip needs none
            args.append("--no-deploy")
        return args


def row_settings(ran: bundle.Ran, profile: Profile) -> dict[str, Any]:
    """Every ``dynamo.compile`` setting of ``ran``'s release for ``profile``, as objects (their
    ``repr`` is the source ``repro.py`` passes): what the backends pass for a row."""
    try:
        version = parse_version(ran.release or "")
    except ValueError:  # a release named by a folder that is no version: today's release's
        version = parse_version(default_release(torch_minor()))
    return adapt_settings(version, profile)[0]


def _describe(name: str, value: torch.Tensor) -> str:
    return f"{name}: {str(value.dtype).removeprefix('torch.')} {list(value.shape)}"


def _record(case: Case, *, twice: bool = False) -> tuple[Recorded, bool]:
    """The case's recorded graph and, with ``twice``, whether eager gives another result on a
    second call with the same inputs and state (randomness in the model); each call gets its
    own copy of the inputs and the module's buffers are put back after it."""
    full = in_full(case)  # collected in the collector process: its factory is imported here
    if isinstance(full, ImportFailure):
        raise RuntimeError(f"{full.location}: {full.message}")
    built = build(full)
    built = replace(built, module=built.module.eval())
    differs = False
    with torch.no_grad():
        if twice:
            state = StateSnapshot(built.module)
            results = []
            for _ in range(2):
                results.append(built.module(*clone(built.args), **clone(built.kwargs)))
                state.restore()
            differs = not _same(*results)
        program = export(case, built)
    return record(program, built.args, built.kwargs), differs


def _same(a: Any, b: Any) -> bool:
    """Whether two eager results hold the same values, leaf by leaf (NaN equal to NaN)."""
    first, second = leaves_with_paths(a), leaves_with_paths(b)
    return len(first) == len(second) and all(
        p == q and (not isinstance(x, torch.Tensor)
                    or (isinstance(y, torch.Tensor) and same_values(x, y)))
        for (p, x), (q, y) in zip(first, second, strict=True))


def _randomness(rec: Recorded, eager_differs: bool) -> str | None:
    """Why a row's wrong values come from randomness in the model, not from its backend: eager
    itself giving another result on each call, named by the ops that draw new random values on
    every call (``randn_like``, ``dropout`` in training) where there are some; None when eager
    gives the same result twice (an op tagged random that draws nothing, such as
    ``scaled_dot_product_attention`` with no dropout, is no cause)."""
    if not eager_differs:
        return None
    seeded = sorted({str(n.target) for n in rec.nodes if n.op == "call_function"
                     and torch.Tag.nondeterministic_seeded in getattr(n.target, "tags", ())})
    if seeded:
        return (f"randomness in the model: {', '.join(seeded)} draw{'s' if len(seeded) == 1 else ''}"
                " new random values on every call, so no backend can match eager's values; "
                "seed them or leave them out of the checked model (not a backend bug)")
    return ("randomness in the model: eager itself gives another result on each call with "
            "the same inputs, so no backend can match it (not a backend bug)")


def _finished(pending: Pending, fresh: list[Row], unchecked: str | None) -> dict[str, Any]:
    """The pending bundle's reduction from the fresh rows of its case; trtcheck's own error in
    finishing it is said as :func:`reduce_rows` says one in reducing."""
    try:
        return pending.finish([r for r in fresh if r.case_id == pending.fresh_id], unchecked)
    except Exception as exc:
        return _own_error(exc)


def _own_error(exc: Exception) -> dict[str, Any]:
    return {"reduced": False, "why": "the reduction stopped on trtcheck's own error: "
            f"{type(exc).__name__}: {exc}"}


def _fresh_rows(folders: list[Path], command: list[str], opts: Options
                ) -> tuple[list[Row], str | None]:
    """The bundles' rows from one ``trtcheck run`` of them in a new process (started as every
    trtcheck child is, so that a ``trtcheck/`` folder in the current directory cannot shadow the
    package), and, where that run wrote no results, why: its exit code and the last line it
    printed. The run isolates its cases as a user's does: a bundle that crashes costs its own
    row, and torch is imported in its worker only, not in the run's process as well."""
    limit = opts.timeout * len(folders) + 120
    with tempfile.TemporaryDirectory(prefix="trtcheck-bundle-") as out:
        args = python_command("trtcheck", command[0], *map(str, folders), *command[1:], "--out", out,
                              "--timeout", f"{opts.timeout:g}", "-q", child=False)
        try:
            proc = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  errors="replace", timeout=limit, check=False, env=child_env())
        except subprocess.TimeoutExpired:
            return [], f"it ran past {limit:g} s"
        results = Path(out) / "results.json"
        if not results.is_file():
            printed = [line.strip() for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
            return [], f"exit code {proc.returncode}" + (f": {printed[-1]}" if printed else "")
        data = json.loads(results.read_text(encoding="utf-8"))
    return [Row.from_dict(r) for r in data.get("rows", [])], None


def _outcome(target: Signature, got: Signature) -> str:
    """What one release's fresh row gave the bundle, in ``summary.json``'s words (the frame's
    line left out: it moves between releases)."""
    if target.across_releases().same(got.across_releases()):
        return history.SAME
    if got.status == Status.PASS.value:
        return history.PASS
    return got.describe()


def reduce_rows(rows: list[Row], cases: Iterable[Case], opts: Options,
                backends: Mapping[str, Any], executor: OneAtATime, limits: Limits,
                env: Mapping[str, Any], say: Say = lambda text: None) -> list[Row]:
    """``rows`` with a reduction on each failing row that has a graph to cut (bundles under
    ``opts.out/repro/``), its candidates run by ``executor`` (the run's); statuses stay as they
    are: reduction never changes a verdict. ``env`` is the run's environment
    (``Record.environment``), which the issue texts cite."""
    by_id = {case.case_id: case for case in cases}
    todo = [i for i, row in enumerate(rows) if reducible(row) is None and row.case_id in by_id
            and row.backend in backends]
    # every other failing row keeps its status and says in one line why it was not reduced
    out = [replace(row, reduction={"reduced": False, "why": reducible(row) or (
               "its case was not collected in this run" if row.case_id not in by_id
               else f"its backend {row.backend} was not loaded in this run")})
           if row.status in FAILING and i not in todo else row for i, row in enumerate(rows)]
    if not todo:
        return out
    reducer = Reducer(opts, backends, executor, limits, env, say)
    try:
        pending: dict[int, Pending] = {}
        for i in todo:
            try:
                reduction = reducer.reduce(by_id[rows[i].case_id], rows[i])
            except Exception as exc:  # trtcheck's own fault: the row keeps its status and says so
                reduction = _own_error(exc)
            if isinstance(reduction, Pending):
                pending[i] = reduction
            else:
                out[i] = replace(rows[i], reduction=reduction)
        for i, reduction in reducer.check(pending).items():
            out[i] = replace(rows[i], reduction=reduction)
    finally:
        reducer.close()
    return out


def reducing(total: float | None, say: Say) -> After:
    """The step a ``run --reduce`` or ``reduce`` job takes after its cases
    (:data:`trtcheck.execution.job.After`): each failing row of the record reduced in place,
    ``total`` the seconds all reductions may take together (None: no cap), ``say`` hearing how
    each goes."""
    def after(opts: Options, backends: Mapping[str, Any], rec: Record,
              collection: Collection, executor: OneAtATime) -> None:
        limits = Limits(opts.reduce_row_budget, opts.reduce_attempts, opts.keep_real_values, total)
        rec.rows = reduce_rows(rec.rows, collection.cases, opts, backends, executor, limits,
                               rec.environment, say)

    return after
