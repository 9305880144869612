"""``tensorrt``: Torch-TensorRT's dynamo path (``torch_tensorrt.dynamo.compile``), for real, on CUDA.

Torch-TensorRT's compile settings changed a lot between releases, and ``dynamo.compile`` takes
``**kwargs``, so a setting a release does not know is silently ignored. The version logic lives
in small pure functions (:func:`adapt_settings`, :func:`call_arguments`, :func:`drop_unaccepted`,
:func:`supports_complex_inputs`, :func:`complex_rewrite`, :func:`cache_settings`,
:func:`cache_outcome`) so it can be tested without TensorRT;
every setting that is mapped, dropped or does nothing is recorded in the evidence's ``notes``.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import logging
import operator
import os
import re
import sys
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import ModuleType
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.utils import _pytree as pytree

from trtcheck.backends.base import Backend, Compiled, CompileJob
from trtcheck.config.options import Profile
from trtcheck.errors import Unsupported, did_you_mean, last_line
from trtcheck.results.rows import Evidence
from trtcheck.tensors import op_name

Version = tuple[int, int]

NOT_INSTALLED = "torch_tensorrt is not installed (pip install trtcheck[tensorrt])"

# Profile fields that Torch-TensorRT also knows as settings: the profile's value is the one
# passed, because trtcheck picks tolerances from the profile (truncate_double).
_PROFILE_FIELDS = {
    "truncate_double": "truncate_double",
    "truncate_long_and_double": "truncate_double",
    "require_full_compilation": "require_full_compilation",
    "min_block_size": "min_block_size",
}
# Settings whose values are dtypes; a TOML config can only spell them as names ("float16").
_DTYPE_SETTINGS = frozenset({"enabled_precisions", "autocast_low_precision_type"})
# Ops Torch-TensorRT inserts between its engines and the caller: truncate_double's casts
# (conversion/truncate_double.py) and complex I/O views (_compiler._insert_complex_io_adapters).
_BOUNDARY_OPS = frozenset({"aten._to_copy.default", "aten.to.dtype", "aten.view_as_real.default",
                           "aten.view_as_complex.default"})
# What Torch-TensorRT 2.14 logs when PyTorch's complex decomposition cannot run and it falls back
# to its own rewrite (lowering/passes/complex_decomposition_adapter.py).
_DECOMPOSITION_FALLBACK = "falling back to the legacy complex_graph_detection pass"
# The deprecation warning 2.10-2.12 give on every compile: their check reads **kwargs, where the
# named parameter use_explicit_typing never is (dynamo/_compiler.py, "if not kwargs.get(...)").
_EXPLICIT_TYPING_WARNING = "`use_explicit_typing` is deprecated"
# Torch-TensorRT's own default; trtcheck's profiles pass 1 (see adapt_settings).
TTRT_MIN_BLOCK_SIZE = 5
# Keys that dynamo.compile reads from **kwargs in some releases rather than naming as parameters.
_READ_FROM_KWARGS = frozenset(
    {"debug", "refit", "make_refittable", "truncate_long_and_double", "enable_cross_compile_for_windows"}
)


def parse_version(text: str) -> Version:
    """``(major, minor)`` of a version string such as ``2.13.0+cu130`` or ``2.14.0.dev20260101``."""
    match = re.match(r"(\d+)\.(\d+)", text)
    if match is None:
        raise ValueError(f"cannot read a version from {text!r}")
    return int(match[1]), int(match[2])


def _text(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def supports_complex_inputs(version: Version) -> bool:
    """Whether ``dynamo.compile`` accepts complex input tensors (its ``prepare_inputs`` does from 2.12)."""
    return version >= (2, 12)


def complex_rewrite(version: Version, torch_version: Version, use_decomposition: bool = True,
                    fell_back: bool = False) -> str:
    """Which complex-to-real rewrite a release applies to complex subgraphs; ``fell_back``: the
    compile logged that PyTorch's complex decomposition could not run (2.14)."""
    if version < (2, 8):
        return "no complex rewrite"
    if version < (2, 12):
        return "complex_graph_rewrite, mul only"
    if fell_back:
        return "complex_graph_rewrite, fallen back from PyTorch's complex decomposition"
    if version >= (2, 14) and torch_version >= (2, 14) and use_decomposition:
        return "PyTorch's complex decomposition"
    return "complex_graph_rewrite"


def check_inputs(version: Version, installed: str, job: CompileJob) -> None:
    """Raise :class:`Unsupported` for inputs the release's ``dynamo.compile`` refuses."""
    if not supports_complex_inputs(version) and any(
            isinstance(x, torch.Tensor) and x.is_complex()
            for x in pytree.tree_leaves((job.args, job.kwargs))):
        raise Unsupported(f"complex inputs need Torch-TensorRT >= 2.12 (installed {installed})")


def adapt_settings(version: Version, profile: Profile) -> tuple[dict[str, Any], list[str]]:
    """The settings to pass to ``dynamo.compile`` of Torch-TensorRT ``version`` for ``profile``,
    and one note for each setting that was mapped, dropped or does nothing there."""
    v = _text(version)
    extra = dict(profile.settings)
    notes: list[str] = []
    for key, field_name in _PROFILE_FIELDS.items():
        if key in extra:
            value, wanted = extra.pop(key), getattr(profile, field_name)
            if value != wanted:
                notes.append(f"settings.{key} = {value!r} dropped: the profile's "
                             f"{field_name} = {wanted!r} is passed")

    settings: dict[str, Any] = {"require_full_compilation": profile.require_full_compilation,
                                "min_block_size": profile.min_block_size}
    if version >= (2, 3):
        settings["truncate_double"] = profile.truncate_double
        if profile.int64 == "int32":
            notes.append(f'int64 = "int32" does not apply: Torch-TensorRT {v} runs int64 natively and has '
                         "no setting that narrows it (truncate_long_and_double only truncates float64 "
                         "from 2.3)")
    else:
        asked = [name for name, on in (("truncate_double", profile.truncate_double),
                                       ('int64 = "int32"', profile.int64 == "int32")) if on]
        settings["truncate_long_and_double"] = bool(asked)
        if asked:
            notes.append(f"Torch-TensorRT {v} has no truncate_double: {' and '.join(asked)} passed as "
                         "truncate_long_and_double, which truncates int64 to int32 and float64 to "
                         "float32 together")
    if profile.coverage != "broad":
        notes.append(f'coverage = "{profile.coverage}" is an emulate setting and does not apply: '
                     f"Torch-TensorRT {v} applies its own complex rewrite (see the path)")

    if (2, 10) <= version < (2, 13) and "use_explicit_typing" not in extra and not _f32_only(
            _dtypes("enabled_precisions", extra.get("enabled_precisions", {torch.float32}))):
        # 2.10-2.12 default use_explicit_typing to True and then assert that enabled_precisions
        # is float32 alone (dynamo/_compiler.py: "use_explicit_typing was set to True, ...").
        settings["use_explicit_typing"] = False
        notes.append(f"use_explicit_typing = False passed: Torch-TensorRT {v} defaults it to True, "
                     "where enabled_precisions other than float32 raise an AssertionError")
    for key, value in extra.items():
        if key == "use_explicit_typing" and version < (2, 6):
            notes.append(f"use_explicit_typing dropped: added in Torch-TensorRT 2.6 (installed {v})")
        elif key == "use_explicit_typing" and version >= (2, 13):
            notes.append("use_explicit_typing dropped: removed in Torch-TensorRT 2.13, where every "
                         "network is strongly typed")
        elif key == "enabled_precisions" and version >= (2, 13):
            notes.append("enabled_precisions dropped: silently ignored from Torch-TensorRT 2.13 "
                         "(strongly typed networks take precisions from the model's dtypes)")
        else:
            if key == "use_explicit_typing" and version >= (2, 10):
                notes.append("use_explicit_typing is deprecated from Torch-TensorRT 2.10 "
                             "(on by default there)")
            settings[key] = _dtypes(key, value) if key in _DTYPE_SETTINGS else value
    return settings, notes


def _f32_only(precisions: Any) -> bool:
    """Whether ``enabled_precisions`` passes 2.10-2.12's explicit-typing check: float32 (or fp4) alone."""
    allowed = {torch.float32, getattr(torch, "float4_e2m1fn_x2", torch.float32)}
    values = precisions if isinstance(precisions, (set, frozenset, list, tuple)) else {precisions}
    return len(values) == 1 and next(iter(values)) in allowed


def _dtypes(key: str, value: Any) -> Any:
    """Dtype names from a config file as torch dtypes; a collection stays a collection."""
    if isinstance(value, (list, tuple, set, frozenset)):
        return {_dtypes(key, v) for v in value}
    if isinstance(value, str):
        dtype = getattr(torch, value.removeprefix("torch."), None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"settings.{key}: {value!r} is not a torch dtype")
        return dtype
    return value


def cache_settings(version: Version, cache_dir: str | None) -> tuple[dict[str, Any], list[str]]:
    """The settings that turn on Torch-TensorRT's engine cache in a release, and notes.

    Torch-TensorRT saves and reuses only refittable engines: from 2.6 (and in 2.9, 2.12, 2.13,
    2.14, read from their ``_compiler.py``/``conversion/_conversion.py``) it skips the cache with
    a warning unless ``immutable_weights = False``; 2.5, which added the cache, spelled it
    ``make_refittable = True``. ``timing_cache_path`` is kept beside the engines, so one cached
    directory restores both."""
    v = _text(version)
    if version < (2, 5):
        return {}, [f"engine cache not used: added in Torch-TensorRT 2.5 (installed {v})"]
    settings: dict[str, Any] = {"cache_built_engines": True, "reuse_cached_engines": True}
    if version < (2, 6):
        settings["make_refittable"] = True
    else:
        settings["immutable_weights"] = False
    if cache_dir is not None:
        settings["engine_cache_dir"] = cache_dir
        settings["timing_cache_path"] = os.path.join(cache_dir, "timing_cache.bin")
    where = cache_dir or "Torch-TensorRT's default directory"
    return settings, [f"engine cache on ({where}): engines are built refittable, which "
                      f"Torch-TensorRT {v} needs to save and reuse them"]


# What Torch-TensorRT logs about its engine cache (conversion/_conversion.py, 2.12 to 2.14).
_CACHE_HIT = "Found the cached engine"
_CACHE_SAVED = "was successfully inserted into cache"
_CACHE_SKIPPED = ("will not be reused from cache", "will not be cached", "engine cache will not be used")
_CACHE_LOGGER = "torch_tensorrt.dynamo.conversion._conversion"


def cache_outcome(messages: Sequence[str]) -> tuple[dict[str, int], list[str]]:
    """How many engines came from the cache and how many were saved to it, read from
    Torch-TensorRT's log messages, and a note for each reason it gave for skipping the cache."""
    counts = {"from_cache": sum(_CACHE_HIT in m for m in messages),
              "saved": sum(_CACHE_SAVED in m for m in messages)}
    skipped = dict.fromkeys(f"Torch-TensorRT: {m}" for m in messages
                            if any(s in m for s in _CACHE_SKIPPED))
    return counts, list(skipped)


class _Messages(logging.Handler):
    def __init__(self, level: int) -> None:
        super().__init__(level)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _logged(name: str, level: int, on: bool = True) -> Iterator[list[str]]:
    """The messages a Torch-TensorRT logger emits at ``level`` and above meanwhile (none when
    not ``on``)."""
    handler = _Messages(level)
    logger = logging.getLogger(name)
    if not on:
        yield handler.messages
        return
    previous = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > level:
        logger.setLevel(level)
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


def drop_unaccepted(settings: Mapping[str, Any], parameters: Collection[str],
                    version: Version) -> tuple[dict[str, Any], list[str]]:
    """Drop settings that ``dynamo.compile`` neither names nor reads from ``**kwargs``:
    it would accept and silently ignore them."""
    kept: dict[str, Any] = {}
    notes: list[str] = []
    for key, value in settings.items():
        if key in parameters or key in _READ_FROM_KWARGS:
            kept[key] = value
            continue
        hint = did_you_mean(key, parameters)
        notes.append(f"{key} dropped: not a parameter of torch_tensorrt.dynamo.compile in "
                     f"Torch-TensorRT {_text(version)}, which would silently ignore it{hint}")
    return kept, notes


def call_arguments(version: Version, args: tuple[Any, ...], kwargs: Mapping[str, Any],
                   device: str) -> dict[str, Any]:
    """The inputs (and device) part of the ``dynamo.compile`` call for a release."""
    v = _text(version)
    if version >= (2, 5):
        if not args and version < (2, 6):
            raise Unsupported(f"a model with keyword inputs only needs Torch-TensorRT >= 2.6 (installed {v})")
        call: dict[str, Any] = {"arg_inputs": list(args), "kwarg_inputs": dict(kwargs)}
    elif kwargs:
        raise Unsupported(f"keyword inputs need Torch-TensorRT >= 2.5 (installed {v})")
    else:
        call = {"inputs": list(args)}
    if version < (2, 3):
        call["output_format"] = "graph_module"  # 2.2 returns an ExportedProgram by default
    index = torch.device(device).index
    if index is not None:  # Torch-TensorRT cannot parse a bare "cuda"; None means the current device
        call["device"] = f"cuda:{index}"
    return call


@dataclass(frozen=True)
class Partition:
    """How a compiled module splits between TensorRT and PyTorch."""

    engines: int
    fallbacks: list[str]  # ops that run in PyTorch
    boundaries: list[str]  # casts and complex views Torch-TensorRT put around its engines


def partition_summary(module: Any) -> Partition:
    """Read a compiled module: Torch-TensorRT names TensorRT engines ``_run_on_acc_*`` and PyTorch
    submodules ``_run_on_gpu_*``; ops in the top-level graph also run in PyTorch.

    Only a ``_run_on_acc_*`` child that is not a GraphModule is an engine (a converted TensorRT
    module); one that is still a GraphModule (a dryrun) runs in PyTorch, its ops as fallbacks.
    The lowering host replaces each dryrun block with its own engine module before reading the
    partition, so that its predicted engines count here the same way."""
    if not isinstance(module, torch.fx.GraphModule):
        return Partition(0, [], [])
    engines, inner = 0, []
    for name, child in module.named_children():
        if name.startswith("_run_on_acc") and not isinstance(child, torch.fx.GraphModule):
            engines += 1
        elif isinstance(child, torch.fx.GraphModule):
            inner.append(child.graph)
    # Around engines, the top level holds the casts (truncate_double) and complex I/O views
    # (2.12+) that Torch-TensorRT inserts; with no engine, it is the user's whole graph. 2.14 on
    # torch >= 2.14 leaves view_as_real of a complex input to a _run_on_gpu_* block of its own,
    # as TensorRT has no converter for it: a boundary there too.
    ops = [_ops(module.graph), *(_ops(graph) for graph in inner)]
    boundaries = set().union(*(found & _BOUNDARY_OPS for found in ops)) if engines else set()
    fallbacks = set().union(*ops) - boundaries
    return Partition(engines, sorted(fallbacks), sorted(boundaries))


def engine_memory(module: Any) -> dict[str, int | None] | None:
    """The device memory of a compiled module's TensorRT engines, outside PyTorch's allocator;
    None when it has no engine.

    ``plan_bytes``: the engines' serialized plans (their weights, which TensorRT loads onto the
    device), from each ``_run_on_acc_*`` module's ``serialized_engine`` (Torch-TensorRT 2.12 to
    2.14, both runtimes). ``activation_bytes``: what an execution context needs besides
    (``ICudaEngine.device_memory_size_v2``), only where the runtime holds the ``ICudaEngine`` in
    Python: ``engine`` of 2.12's ``PythonTorchTensorRTModule``, ``engine.cuda_engine`` from 2.13;
    the C++ runtime does not expose it (None)."""
    if not isinstance(module, torch.nn.Module):
        return None
    engines = [child for name, child in module.named_children() if name.startswith("_run_on_acc")]
    if not engines:
        return None
    plans = [getattr(e, "serialized_engine", None) for e in engines]
    activations = [_activation_bytes(e) for e in engines]
    return {"plan_bytes": sum(len(p) for p in plans if isinstance(p, (bytes, bytearray))),
            "activation_bytes": (None if any(a is None for a in activations)
                                 else sum(a for a in activations if a is not None))}


def _activation_bytes(engine_module: Any) -> int | None:
    engine = getattr(engine_module, "engine", None)
    try:  # a TorchScript class (the C++ runtime) raises its own error for an unknown attribute
        cuda_engine = getattr(engine, "cuda_engine", engine)
        size = getattr(cuda_engine, "device_memory_size_v2", None)
    except Exception:
        return None
    return size if isinstance(size, int) else None


def _ops(graph: torch.fx.Graph) -> set[str]:
    return {op_name(node.target) for node in graph.nodes
            if node.op == "call_function" and node.target is not operator.getitem}


def path_steps(version: Version, torch_version: Version, settings: Mapping[str, Any],
               dtypes: Collection[torch.dtype], engines: int, fallbacks: Collection[str],
               fell_back: bool = False) -> list[str]:
    """The dtype path a compiled program took, in short steps for the report's path column."""
    steps = []
    if any(d.is_complex for d in dtypes):
        rewrite = complex_rewrite(version, torch_version,
                                  bool(settings.get("use_complex_decomposition", True)), fell_back)
        steps.append(f"complex → real ({rewrite})")
    truncate = settings.get("truncate_double", settings.get("truncate_long_and_double", False))
    if truncate and (torch.float64 in dtypes or torch.complex128 in dtypes):
        steps.append("float64 → float32")
    if torch.int64 in dtypes:
        long_to_int = version < (2, 3) and settings.get("truncate_long_and_double")
        steps.append("int64 → int32" if long_to_int else "int64 native")
    steps.append(f"{engines} TensorRT engine{'s' * (engines != 1)}" if engines else "no TensorRT engine")
    if fallbacks:
        steps.append("PyTorch fallback")
    return steps


def program_dtypes(program: ExportedProgram) -> set[torch.dtype]:
    return {leaf.dtype for node in program.graph.nodes
            for leaf in pytree.tree_leaves(node.meta.get("val"))
            if isinstance(leaf, torch.Tensor)}


def output_dtypes(program: ExportedProgram) -> list[torch.dtype | None]:
    """The dtype of each of the program's user outputs, in the order a call returns them."""
    vals = {node.name: node.meta.get("val") for node in program.graph.nodes}
    return [getattr(vals.get(name), "dtype", None) for name in program.graph_signature.user_outputs]


def unadapted_complex(expected: list[torch.dtype | None], actual: list[Any], cause: str) -> list[str]:
    """A note for each output that should be complex and came back as its real ``(..., 2)`` layout."""
    notes = []
    for i, (dtype, leaf) in enumerate(zip(expected, actual, strict=False)):
        if (dtype is not None and dtype.is_complex and isinstance(leaf, torch.Tensor)
                and leaf.dtype == dtype.to_real() and leaf.dim() > 0 and leaf.shape[-1] == 2):
            notes.append(f"Torch-TensorRT returned {str(leaf.dtype).removeprefix('torch.')} (..., 2) "
                         f"for a {str(dtype).removeprefix('torch.')} output out[{i}]: {cause}")
    return notes


def _partitioned(module: Any) -> bool:
    return any(name.startswith("_run_on_") for name, _ in getattr(module, "named_children", list)())


def retyped_inputs(module: Any) -> list[str]:
    """Complex inputs of a graph returned unpartitioned (fewer TensorRT-convertible ops than
    min_block_size) that the complex rewrite already turned into ``(..., 2)`` placeholders."""
    if not isinstance(module, torch.fx.GraphModule) or _partitioned(module):
        return []
    return [n.name.removesuffix("_unpacked_complex") for n in module.graph.nodes
            if n.op == "placeholder" and n.name.endswith("_unpacked_complex")]


def _unadapted_cause(module: Any) -> str:
    if _partitioned(module):
        return ("its complex I/O adapters add view_as_complex only to an output taken straight from "
                "a block, not to one that leaves a TensorRT block through getitem (a block with "
                "several outputs)")
    return ("the graph came back unpartitioned (fewer TensorRT-convertible ops than min_block_size), "
            "after the complex rewrite and before the complex I/O adapters")


class CheckedOutputs:
    """The compiled module; its first call notes complex outputs that came back as ``(..., 2)``
    real tensors. The outputs are returned as Torch-TensorRT gave them, so the row fails the
    dtype check, as a caller of the compiled module would."""

    def __init__(self, module: Callable[..., Any], expected: list[torch.dtype | None],
                 notes: list[str]) -> None:
        self.module = module
        self.expected: list[torch.dtype | None] | None = expected
        self.notes = notes  # the evidence's notes, which the row carries

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        outputs = self.module(*args, **kwargs)
        if self.expected is not None:
            expected, self.expected = self.expected, None
            self.notes += unadapted_complex(expected, pytree.tree_leaves(outputs),
                                            _unadapted_cause(self.module))
        return outputs


def _parameters(fn: Callable[..., Any]) -> frozenset[str] | None:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return frozenset(p.name for p in params
                     if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def plain_setting(value: Any) -> Any:
    """A JSON-friendly copy of a setting's value for the evidence."""
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(plain_setting(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [plain_setting(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


class TensorRTBackend(Backend):
    """Compile with ``torch_tensorrt.dynamo.compile``, settings adapted to the installed release."""

    name = "tensorrt"
    uses_profiles = True

    @cached_property
    def _imported(self) -> tuple[ModuleType | None, str | None]:
        """``(torch_tensorrt, None)``, or ``(None, why it cannot be used)``; imported once."""
        # A failing torch_tensorrt import prints its diagnosis before raising a plain Exception.
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                module = importlib.import_module("torch_tensorrt")
        except ModuleNotFoundError as exc:
            return None, NOT_INSTALLED if exc.name == "torch_tensorrt" else last_line(exc)
        except Exception as exc:
            return None, last_line(exc)
        if not callable(getattr(getattr(module, "dynamo", None), "compile", None)):
            return None, f"torch_tensorrt {getattr(module, '__version__', '?')} has no dynamo frontend"
        return module, None

    def unavailable_reason(self, device: str) -> str | None:
        _, reason = self._imported
        if reason is None and torch.device(device).type != "cuda":
            reason = f"TensorRT needs a CUDA device; this run uses {device}"
        return reason

    def compile(self, job: CompileJob) -> Compiled:
        ttrt, reason = self._imported
        if ttrt is None:
            raise RuntimeError(reason)
        installed = str(ttrt.__version__)
        version = parse_version(installed)
        check_inputs(version, installed, job)
        call = call_arguments(version, job.args, job.kwargs, job.device)
        settings, notes = adapt_settings(version, job.profile)
        if job.engine_cache:
            cache, cache_notes = cache_settings(version, job.cache_dir)
            notes += cache_notes + [f"settings.{k} = {settings[k]!r} passed over the engine cache's "
                                    f"{k} = {v!r}" for k, v in cache.items()
                                    if k in settings and settings[k] != v]
            settings = {**cache, **settings}
        parameters = _parameters(ttrt.dynamo.compile)
        if parameters is not None:
            settings, dropped = drop_unaccepted(settings, parameters, version)
            notes += dropped

        caching = bool(settings.get("cache_built_engines") or settings.get("reuse_cached_engines"))
        with (warnings.catch_warnings(record=True) as caught,
              _logged(_CACHE_LOGGER, logging.INFO, caching) as logged,
              _logged("torch_tensorrt", logging.WARNING) as warned):
            warnings.simplefilter("always")
            module = ttrt.dynamo.compile(job.program, **call, **settings)
        fell_back = [line for line in dict.fromkeys(warned) if _DECOMPOSITION_FALLBACK in line]
        cached, skipped = cache_outcome(logged)
        notes += skipped
        user_typing = "use_explicit_typing" in job.profile.settings
        notes += list(dict.fromkeys(
            f"Torch-TensorRT warned: {w.message}" for w in caught
            if issubclass(w.category, (DeprecationWarning, FutureWarning))
            and (user_typing or _EXPLICIT_TYPING_WARNING not in str(w.message))))
        notes += [f"Torch-TensorRT fell back from PyTorch's complex decomposition: {line}"
                  for line in fell_back]

        split = partition_summary(module)
        if not split.engines:
            notes.append("no TensorRT engine was built: the whole graph runs in PyTorch")
        if cached["from_cache"]:
            notes.append(f"{cached['from_cache']} of {split.engines} TensorRT engines loaded from "
                         "Torch-TensorRT's engine cache (refitted with this model's weights)")
        retyped = retyped_inputs(module)
        if retyped:
            notes.append(f"Torch-TensorRT returned the graph unpartitioned (fewer TensorRT-convertible "
                         f"ops than min_block_size {settings.get('min_block_size')}) after its complex "
                         f"rewrite retyped the complex inputs {', '.join(retyped)} to float (..., 2), "
                         "with no complex I/O adapters: complex inputs are misread and complex outputs "
                         "come back as float (..., 2)")
        passed = {k: v for k, v in call.items() if k not in ("arg_inputs", "kwarg_inputs", "inputs")}
        passed.update(settings)
        trt = sys.modules.get("tensorrt")
        engine_bytes = engine_memory(module)
        expected = output_dtypes(job.program)
        fn = CheckedOutputs(module, expected, notes) if any(
            d is not None and d.is_complex for d in expected) else module
        # Timed as a user calls it: the module dynamo.compile returned, not trtcheck's check.
        return Compiled(fn, timed=module, evidence=Evidence(
            path=path_steps(version, parse_version(torch.__version__), settings,
                            program_dtypes(job.program), split.engines, split.fallbacks,
                            fell_back=bool(fell_back)),
            fallbacks=split.fallbacks,
            boundaries=split.boundaries,
            engines=split.engines,
            notes=notes,
            settings={k: plain_setting(v) for k, v in passed.items()},
            versions={"torch_tensorrt": installed, "tensorrt": getattr(trt, "__version__", None)},
            details={**({"engine_memory": engine_bytes} if engine_bytes else {}),
                     **({"engine_cache": cached} if caching else {})},
        ), memory=sum(v for v in engine_bytes.values() if v) if engine_bytes else None)
