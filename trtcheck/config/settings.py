"""Every setting, declared once: its key, type, default, help, config key, command-line flag,
Action input, the :class:`~trtcheck.config.options.Options` field it resolves into and whether
it changes rows. The click options, the config schema, the docs' reference table, the check of
action.yml's inputs, the fields' defaults in ``Options``, the record's options, the resume check
and merge's comparison are all made from :data:`SETTINGS`.

No torch here: ``--help`` reads this module."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from trtcheck.core.profiles import DEPLOY_FORMATS
from trtcheck.core.traits import NAMES
from trtcheck.status import NARROWING, OUTPUT_CHANGE

FAIL_ON = ("failures", "regression", OUTPUT_CHANGE, NARROWING)
GATE_METRICS = ("speedup", "latency")
NAN_POLICIES = ("warn", "fail")  # trtcheck.results.nonfinite says what each does
FALLBACKS = ("emulate", "none")
CACHE_MODES = ("shared", "private")  # a compile cache shared by an ab job, or one per process
# Each backend's compile cache in ``trtcheck ab`` unless compile_cache says otherwise: shared,
# so that identical graphs on both sides run the same compiled code and a process does not
# pay a full compile (docs/ab.md, "The compile cache").
CACHE_DEFAULTS = {"inductor": "shared", "tensorrt": "shared"}
CHOICE_OF_TORCH_TENSORRT = "PATH|VERSION"

# The commands whose options come from here; ``select`` is what every command that collects a
# zoo takes (run, list, analyze, reduce, ab).
RUN, SELECT, ANALYZE, DIFF, REDUCE, AB = "run", "select", "analyze", "diff", "reduce", "ab"
# The commands that run cases: a setting takes all three unless its entry names fewer.
RUNS = (RUN, AB, REDUCE)
# The pytest plugin (``pytest --trtcheck``): it takes the settings whose entry names it, each
# under its flag with the ``--trtcheck-`` prefix; selection, workers and the exit code are pytest's.
PYTEST = "pytest"
_COLLECTS = (RUN, ANALYZE, SELECT, REDUCE, AB)

SAME = object()  # Setting.undecided: Options holds the default itself


@dataclass(frozen=True)
class Setting:
    """One setting.

    ``type``: bool, int, float, str, Path, list (of str), dict (a table), a tuple of strings (an
    enumeration) or a tuple of types; ``default`` None means decided later (from the device,
    say). ``config``: whether the config file may set it (under ``key``). ``flag``: its option
    (``--isolate/--no-isolate`` for a switch), or None; ``short`` a one-letter alias.
    ``multiple``: the flag repeats, and one value may list several, comma-separated
    (:func:`listed`); ``count``: the flag counts. ``action``: the Action input
    that maps to the flag. ``commands``: which commands take the flag (run, ab and reduce unless
    it names fewer; ``select`` for every command that collects a zoo). ``field``: the
    :class:`~trtcheck.config.options.Options` field it resolves into (None: ``key``).
    ``rows``: whether it changes which rows a run has or what they hold, so that a resumed run
    and merged shards must share it. ``undecided``: what ``Options`` holds when built without
    resolving, for a default decided later (None, ``auto``)."""

    key: str
    type: Any
    default: Any
    help: str
    config: bool = True
    flag: str | None = None
    short: str | None = None
    multiple: bool = False
    count: bool = False
    metavar: str | None = None
    action: str | None = None
    commands: tuple[str, ...] = RUNS
    field: str | None = None
    rows: bool = False
    undecided: Any = SAME

    @property
    def attr(self) -> str:
        """The ``Options`` field it resolves into."""
        return self.field or self.key

    @property
    def env(self) -> str | None:
        """The environment variable the Action's step passes its input in, if any."""
        return f"TRTCHECK_{self.action.upper().replace('-', '_')}" if self.action else None

    @property
    def name(self) -> str:
        """How messages name it: its flag, else its config key."""
        return self.flag.split("/")[0] if self.flag else f"config key {self.key}"

    @property
    def choices(self) -> tuple[str, ...]:
        """The words it takes, for an enumeration; else empty."""
        words = isinstance(self.type, tuple) and all(isinstance(t, str) for t in self.type)
        return self.type if words else ()

    @property
    def switch(self) -> bool:
        return self.type is bool and self.flag is not None and "/" in self.flag


SETTINGS: tuple[Setting, ...] = (
    Setting("backends", list, [], "Backend to run (repeatable, or a list: eager,inductor): "
            + ", ".join(NAMES)
            + " [tensorrt where it runs, else lowering where Torch-TensorRT's code is found or "
              "fetched, else emulate].", flag="--backend", multiple=True, metavar="NAME",
            action="backends", rows=True, commands=(*RUNS, PYTEST)),
    Setting("torch_tensorrt", list, [], "The Torch-TensorRT code the lowering backend runs: a "
            "wheel, an unpacked release or a version (repeatable: one set of lowering@VERSION "
            "rows per release) [the installed one, else the release for this torch].",
            flag="--torch-tensorrt", multiple=True, metavar=CHOICE_OF_TORCH_TENSORRT, rows=True,
            commands=(*RUNS, PYTEST)),
    Setting("lowering_dryrun", bool, False, "The lowering backend stops at Torch-TensorRT's "
            "dryrun: its lowering and partitioning only, each TensorRT block run by PyTorch, "
            "faster and blind to the converters and the engine [false: the release's real compile "
            "through the TensorRT stand-in].", flag="--lowering-dryrun", rows=True,
            commands=(*RUNS, PYTEST)),
    Setting("run_profiles", list, ["default"], "Settings profile (repeatable) [default].",
            flag="--profile", multiple=True, metavar="NAME", action="profiles", field="profiles",
            rows=True, commands=(*RUNS, PYTEST)),
    Setting("variants", list, [], "Only these variants (repeatable) [all].", flag="--variant",
            multiple=True, metavar="NAME", action="variants", commands=(SELECT, PYTEST), rows=True),
    Setting("keyword", str, None, "Select cases by expression, like pytest -k: substrings of the "
            "case id or tags, with and, or, not, parentheses.", config=False, flag="-k",
            metavar="EXPR", commands=(SELECT,), rows=True),
    Setting("config", Path, None, "Config file [the nearest trtcheck.toml, or pyproject.toml "
            "with [tool.trtcheck], at or above the first path].", config=False, flag="--config",
            metavar="FILE", action="config", commands=(SELECT, PYTEST), field="config_file"),
    Setting("out", Path, "trtcheck-report", "Report directory [trtcheck-report].", flag="--out",
            metavar="DIR", action="out", commands=(*RUNS, ANALYZE, PYTEST)),
    Setting("device", str, "auto", "cpu, cuda, cuda:N, a list of GPUs cuda:0,cuda:1 (one worker "
            "each) or auto [auto: cuda when available].", flag="--device", metavar="DEV",
            action="device", rows=True, undecided=("cpu",), commands=(*RUNS, PYTEST),
            field="devices"),
    Setting("isolate", bool, True, "Run each case in a worker subprocess [isolate]; --no-isolate "
            "runs them in-process, for debugging (no timeouts).", flag="--isolate/--no-isolate",
            commands=(RUN, REDUCE, PYTEST)),
    Setting("workers", int, None, "Isolated workers running cases at once [1; on CUDA one per "
            "listed GPU, never two cases timed on one GPU].", flag="--workers", metavar="N",
            undecided=1, commands=(RUN,)),
    Setting("shard", str, None, "Run only the I-th of N shards of the cases (from 1), for a CI "
            "matrix; 'trtcheck merge' combines the shards' results.", config=False,
            flag="--shard", metavar="I/N", rows=True, commands=(RUN,)),
    Setting("baseline", Path, None, "A results.json of the base branch: report each row's "
            "changes against it, and --shard balances cases by its recorded stage times [none: "
            "shards by count].", flag="--baseline", metavar="FILE", action="baseline",
            commands=(RUN,)),
    Setting("cache_dir", Path, None, "Torch-TensorRT engine cache directory; turns the engine "
            "cache on [none].", flag="--cache-dir", metavar="DIR", commands=(RUN, PYTEST)),
    Setting("engine_cache", bool, None, "Torch-TensorRT's engine cache: build engines "
            "refittable, save and reuse them [on when cache_dir is set].",
            flag="--cache/--no-cache", rows=True, undecided=False, commands=(RUN, PYTEST)),
    Setting("timeout", (int, float), None, "Seconds per case before it is stopped (time spent "
            "waiting for another trtcheck on the device not counted), and per zoo file's import "
            "[900 on CUDA, 300 on CPU].", flag="--timeout", metavar="S",
            commands=(SELECT, PYTEST), undecided=300.0),
    Setting("memory_limit_mb", int, None, "Address-space limit of the worker, in MiB (CPU runs "
            "only) [none].", flag="--memory-limit", metavar="MIB",
            field="memory_limit", commands=(RUN, AB, PYTEST)),
    Setting("resume", bool, False, "Skip cases already recorded in OUT/results.jsonl, and say "
            "how many; other options than the run it resumes exit 2, naming the first.",
            config=False, flag="--resume", commands=(RUN,)),
    Setting("fail_on", FAIL_ON, ["failures"], "What fails the run, repeatable: failures, exit 1 "
            "on failing rows (always); regression, also on regressions of the gated figure "
            "(--metric) against --baseline (trtcheck ab: against the base); output-change "
            "(trtcheck ab), also on a row whose model's own eager outputs changed, head against "
            "base; narrowing, also on a passing row whose int64 or float64 values an engine "
            "narrows (exact only within a range, which every report names) [failures].",
            flag="--fail-on", multiple=True, action="fail-on",
            commands=(RUN, DIFF, AB), field="gate"),
    Setting("metric", GATE_METRICS, "speedup", "The figure gated: speedup, the speedup over "
            "eager (the backend normalised by eager in the same process); latency, the backend's "
            "absolute time (GPU time on CUDA), for dedicated runners. The other is judged and "
            "shown, never gated [speedup].", flag="--metric", commands=(RUN, DIFF, AB),
            field="gate"),
    Setting("threshold", (int, float, str), 0.07, "A row regresses when its gated figure worsens "
            "by more than this, a fraction (0.07) or a percentage (7%), and beyond both runs' "
            "intervals (trtcheck ab: significantly, across processes); a bare number of 1 or "
            "more is refused [0.07].", flag="--threshold", metavar="FRACTION|N%",
            commands=(RUN, DIFF, AB), field="gate"),
    Setting("ab_processes", int, 6, "trtcheck ab: fresh processes per side before the first "
            "decision [6].", flag="--processes", metavar="N", commands=(AB,), field="ab"),
    Setting("ab_max_processes", int, 15, "trtcheck ab: processes per side at most; rows still "
            "undecided get more, 3 a side at a time, up to this [15].", flag="--max-processes",
            metavar="N", commands=(AB,), field="ab"),
    Setting("ab_budget_s", (int, float), 300, "trtcheck ab: seconds after which no more processes "
            "are started for undecided rows (the first ones always run) [300].",
            flag="--ab-budget", metavar="S", commands=(AB,), field="ab"),
    Setting("ab_alpha", (int, float), 0.05, "trtcheck ab: the chance, over the whole zoo and every "
            "look, that identical code flags a row slower [0.05].", flag="--alpha",
            metavar="P", commands=(AB,), field="ab"),
    Setting("ab_seed", int, None, "trtcheck ab: the seed of the order of rows in each process "
            "[random, recorded].", config=False, flag="--seed", metavar="N", commands=(AB,),
            field="ab"),
    Setting("ab_fork", bool, True, "trtcheck ab: fork each measurement process from a server "
            "that has imported torch, inductor and trtcheck once, each still fresh where it "
            "counts (its own CUDA context, allocator, kernel choices and compile state); "
            "--no-fork starts a new interpreter for each [true].", flag="--fork/--no-fork",
            commands=(AB,), field="ab"),
    Setting("compile_cache", list, [], "trtcheck ab: BACKEND=shared (one compile cache for the "
            "job) or BACKEND=private (one per process), repeatable [inductor=shared, "
            "tensorrt=shared].", flag="--compile-cache", multiple=True,
            metavar="BACKEND=MODE", commands=(AB,), field="ab"),
    Setting("allow_empty", bool, False, "Exit 0, not 5, when no case is selected [false].",
            flag="--allow-empty", commands=(RUN, AB)),
    Setting("allow_skipped", bool, False, "Exit 0, not 5, when every row is skipped [false].",
            flag="--allow-skipped", commands=(RUN, AB)),
    Setting("nan", NAN_POLICIES, "warn", "NaN or Inf in eager's or the backend's output: warn "
            "(matching ones pass, marked ⚠, the counts in every report) or fail every such row "
            "[warn].", flag="--nan", action="nan", rows=True, commands=(RUN, AB, PYTEST)),
    Setting("fallback", FALLBACKS, None, "No backend named and lowering's code neither cached "
            "nor fetchable: emulate runs instead (every report's headline says so), or none: "
            "exit 2 with the fix [none when CI is set, else emulate].", flag="--fallback",
            undecided="emulate", commands=(RUN, AB, PYTEST)),
    Setting("reduce", bool, False, "After the run, reduce each failing row to the smallest graph "
            "that fails the same way, a bundle each under OUT/repro/ (the verdict stays the "
            "run's) [false].", flag="--reduce/--no-reduce", action="reduce", commands=(RUN,)),
    Setting("reduce_budget", (int, float), 600, "Seconds every reduction of a run may take "
            "together, with --reduce [600].", flag="--reduce-budget", metavar="S",
            commands=(RUN,)),
    Setting("reduce_row_budget", (int, float), 120, "Seconds one row's reduction may take [120].",
            flag="--budget", metavar="S", commands=(REDUCE,)),
    Setting("reduce_attempts", int, 200, "Candidate graphs one row's reduction may try [200].",
            flag="--attempts", metavar="N", commands=(REDUCE,)),
    Setting("keep_real_values", bool, False, "Where neither random values nor the case's example "
            "inputs through random weights reproduce a failure, bundles keep the model's real "
            "ones; they may be private: review before sharing [false].", flag="--keep-real-values",
            commands=(RUN, REDUCE)),
    Setting("releases", list, [], "The Torch-TensorRT releases each lowering bundle's repro also "
            "runs on, for its history across releases (repeatable) [every release trtcheck knows "
            "or has cached, fetched as needed; offline, the cached ones].", flag="--releases",
            multiple=True, metavar="VERSION", commands=(RUN, REDUCE)),
    Setting("time_predictions", bool, False, "Time the rows of prediction backends (lowering, "
            "emulate) too: PyTorch running a rewritten graph, shown apart, never a speedup "
            "[false].", flag="--time-predictions", rows=True, commands=(RUN, AB, PYTEST)),
    Setting("strict_xfail", bool, False, "An xpass (a declared expected failure that passed) "
            "fails the run [false].", rows=True),
    Setting("dtype_drift", bool, True, "After the comparison, call the compiled module once more "
            "with int32/int64 and float32/float64 inputs swapped [true].", rows=True),
    Setting("deploy", bool, True, "After the comparison, save each compiled row as "
            "torch_tensorrt.save does and load it in a fresh process that imports only torch and "
            "torch_tensorrt, then compare it with eager again [true].",
            flag="--deploy/--no-deploy", rows=True, commands=(*RUNS, PYTEST)),
    Setting("deploy_formats", list, [], "The format the deploy stage saves in (repeatable): "
            + ", ".join(DEPLOY_FORMATS) + " [each profile's deploy key, exported_program].",
            flag="--deploy-format", multiple=True, metavar="FORMAT", rows=True,
            commands=(*RUNS, PYTEST)),
    # The profiles a run uses are recorded whole, under run_profiles' field.
    Setting("profiles", dict, {}, "Settings profiles of your own, by name.",
            field="known_profiles"),
    Setting("tolerances", dict, {}, "Tolerances by effective dtype.", rows=True),
    Setting("timing", dict, {}, "Latency measurement settings.", rows=True),
    Setting("quiet", int, 0, "Less output: only the failing rows and the verdict.", config=False,
            flag="-q", count=True, field="verbosity"),
    Setting("verbose", int, 0, "More output: also a line per stage, and each row's message.",
            config=False, flag="-v", count=True, field="verbosity"),
)
BY_KEY: Mapping[str, Setting] = {s.key: s for s in SETTINGS}
# Config keys renamed, each still read (with a warning) under its old name.
RENAMED: Mapping[str, str] = {"regression_metric": "metric", "regression_threshold": "threshold"}
# The record's options that change rows, each with how messages name it: a resumed run must
# share them with the run it resumes, and merged records with each other.
ROW_SETTINGS: Mapping[str, str] = {s.attr: s.name for s in SETTINGS if s.rows}
CONFIG_SCHEMA: Mapping[str, Any] = {s.key: (str if s.type is Path else (str, list)
                                     if s.multiple and isinstance(s.type, tuple) else s.type)
                                    for s in SETTINGS if s.config}


def listed(s: Setting, value: Any) -> Any:
    """A command-line value of ``s`` with a repeatable flag's comma-separated lists opened:
    ``--backend eager,inductor`` is ``--backend eager --backend inductor``; any other as given."""
    if not s.multiple or not isinstance(value, (list, tuple)):
        return value
    return [part.strip() for v in value for part in str(v).split(",") if part.strip()]


def for_command(command: str) -> list[Setting]:
    """The settings whose flag the command takes, by their entries (``select`` ones too for the
    commands that collect a zoo), in the table's order."""
    names = {command, SELECT} if command in _COLLECTS else {command}
    return [s for s in SETTINGS if s.flag and names & set(s.commands)]


F = TypeVar("F", bound=Callable[..., Any])


def click_options(command: str) -> Callable[[F], F]:
    """Decorate a click command with the options its settings' entries give ``command``; each
    arrives under its key, None (or an empty tuple) when not given."""
    import click

    taken = for_command(command)

    def option(s: Setting) -> Callable[[F], F]:
        names = [s.flag, *([s.short] if s.short else []), s.key]
        kw: dict[str, Any] = {"help": s.help}
        if s.count:
            kw["count"] = True
        elif s.switch:
            kw["default"] = None
        elif s.type is bool:
            kw.update(is_flag=True, default=None)
        else:
            kw["multiple"] = s.multiple
            kw["metavar"] = s.metavar
            if s.choices and s.multiple:  # a list (listed) is checked once opened
                kw["metavar"] = "|".join(s.choices)
            elif s.choices:
                kw["type"] = click.Choice(s.choices)
            elif s.type is Path:
                kw["type"] = click.Path(path_type=Path)
            elif s.type in (int, float):
                kw["type"] = s.type
            elif s.type == (int, float):
                kw["type"] = float
        return click.option(*names, **kw)

    def decorate(f: F) -> F:
        for s in reversed(taken):
            f = option(s)(f)
        return f

    return decorate


def reference_table(command: str = RUN) -> str:
    """The docs' table of a command's options: flag, config key, Action input, meaning."""
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| option | config key | Action input | meaning |", "|---|---|---|---|"]
    for s in for_command(command):
        flag = " / ".join(f"`{f}`" for f in (s.flag or "").split("/"))
        if s.metavar:
            flag = f"`{s.flag} {cell(s.metavar)}`"
        elif s.choices:
            flag = f"`{s.flag} {cell('|'.join(s.choices))}`"
        key = f"`{s.key}`" if s.config else ""
        action = f"`{s.action}`" if s.action else ""
        lines.append(f"| {flag} | {key} | {action} | {cell(s.help)} |")
    return "\n".join(lines) + "\n"


def config_table() -> str:
    """The docs' table of the config keys ``trtcheck run`` has no option for."""
    on_run = set(map(id, for_command(RUN)))
    rows = [f"| `{s.key}` | {s.help.replace('|', chr(92) + '|')} |"
            for s in SETTINGS if s.config and id(s) not in on_run]
    return "\n".join(["| config key | meaning |", "|---|---|", *rows]) + "\n"


def write_reference(page: Path) -> bool:
    """Fill the generated blocks of the docs' reference page; whether it changed."""
    text = page.read_text(encoding="utf-8")
    new = text
    for name, table in (("settings", reference_table()), ("config", config_table())):
        head = new.index(f"<!-- {name}:")
        body = new.index("-->", head) + 4
        tail = new.index(f"<!-- /{name} -->", body)
        new = new[:body] + "\n" + table + "\n" + new[tail:]
    if new != text:
        page.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    import sys

    print("updated" if write_reference(Path(sys.argv[1])) else "up to date")
