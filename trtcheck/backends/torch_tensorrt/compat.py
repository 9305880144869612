"""What each Torch-TensorRT release accepts: versions, settings adapted per release, call
arguments, and the dtype path a release takes. Pure functions, tested without TensorRT; every
setting that is mapped, dropped or does nothing is said in the evidence's ``notes``."""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping, Sequence
from types import ModuleType
from typing import Any

import torch
from torch.utils import _pytree as pytree

from trtcheck.backends.base import CompileJob
from trtcheck.backends.torch_tensorrt.inspection import program_dtypes
from trtcheck.core.profiles import Profile
from trtcheck.errors import Unsupported, did_you_mean
from trtcheck.program.shapes import ShapeRange, map_inputs
from trtcheck.results.rows import Evidence

Version = tuple[int, int]


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


# The deprecation warning 2.10-2.12 give on every compile: their check reads **kwargs, where the
# named parameter use_explicit_typing never is (dynamo/_compiler.py, "if not kwargs.get(...)").
EXPLICIT_TYPING_WARNING = "`use_explicit_typing` is deprecated"


# Torch-TensorRT's own default; trtcheck's profiles pass 1 (see adapt_settings).


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


def profile_not_applicable(version: Version, profile: Profile) -> str | None:
    """Why ``profile`` asks nothing of Torch-TensorRT ``version`` that a profile asking nothing
    would not (its row would repeat that one: the row is skipped), or None. Only int64 = "int32"
    can be so: from 2.3 Torch-TensorRT runs int64 natively and has no setting that narrows it."""
    if profile.int64 != "int32":
        return None
    settings, notes = adapt_settings(version, profile)
    if settings != adapt_settings(version, Profile(profile.name))[0]:
        return None
    why = next((n for n in notes if n.startswith('int64 = "int32" does not apply')), None)
    return why and f"not applicable: {why}; this row would repeat the default settings' row"


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


# What torch.compile's options reach: Torch-TensorRT's parse_dynamo_kwargs keeps the fields of
# its CompilationSettings and the deprecated alias it maps, and silently drops the rest.
_OPTIONS_ALSO = frozenset({"truncate_long_and_double", "debug"})


def drop_unaccepted(settings: Mapping[str, Any], parameters: Collection[str],
                    version: Version, also: Collection[str] = _READ_FROM_KWARGS,
                    what: str = "a parameter of torch_tensorrt.dynamo.compile",
                    ) -> tuple[dict[str, Any], list[str]]:
    """Drop settings that the entry point neither names in ``parameters`` nor reads otherwise
    (``also``; ``what`` names an accepted one): it would accept and silently ignore them. By
    default ``dynamo.compile``'s parameters and what it reads from ``**kwargs``."""
    kept: dict[str, Any] = {}
    notes: list[str] = []
    for key, value in settings.items():
        if key in parameters or key in also:
            kept[key] = value
            continue
        hint = did_you_mean(key, parameters)
        notes.append(f"{key} dropped: not {what} in Torch-TensorRT {_text(version)}, which "
                     f"would silently ignore it{hint}")
    return kept, notes


def torch_compile_options(version: Version, installed: str, job: CompileJob,
                          fields: Collection[str]) -> tuple[dict[str, Any], list[str]]:
    """The options ``torch.compile(model, backend="tensorrt", options=...)`` gets for a job
    (the profile's settings adapted to the release, as for ``dynamo.compile``, less what its
    ``CompilationSettings`` ``fields`` do not hold) and notes; Unsupported for inputs the
    release refuses."""
    check_inputs(version, installed, job)
    settings, notes = adapt_settings(version, job.profile)
    if settings.get("require_full_compilation"):
        notes.append("require_full_compilation does nothing on the torch.compile front-end: "
                     "Torch-TensorRT sets it to False there (a graph break leaves PyTorch "
                     "between graphs whatever it says)")
    if job.ranges:
        notes.append("dynamic shapes: the compiled module is called at each declared shape, "
                     "where Dynamo recompiles as it needs (no torch_tensorrt.Input is passed)")
    settings, dropped = drop_unaccepted(settings, fields, version, _OPTIONS_ALSO,
                                        "a torch.compile option (a CompilationSettings field)")
    return settings, notes + dropped


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


# The keys of dynamo.compile's inputs.
INPUT_KEYS = ("arg_inputs", "kwarg_inputs", "inputs")


def as_input(shape_range: ShapeRange) -> bool:
    """Whether a dynamic input is passed as a Torch-TensorRT ``Input`` of its shapes: where that
    ``Input`` takes its dtype. Its dtype enum has no complex member, so a complex input is passed
    as its example tensor, as Torch-TensorRT's dynamic-shape guide does for an exported program;
    the engine then takes the input's range from the program's own symbolic shapes."""
    return not shape_range.dtype.is_complex


def dynamic_inputs(job: CompileJob) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The job's inputs with each dynamic one passed as an ``Input`` (:func:`as_input`) as its
    :class:`ShapeRange`, which :func:`torch_tensorrt_inputs` makes a Torch-TensorRT ``Input`` of
    min, opt and max shapes."""
    ranges = {name: r for name, r in job.ranges.items() if as_input(r)}
    if not ranges:
        return job.args, job.kwargs
    return map_inputs(job.program, (job.args, job.kwargs),
                      lambda name, tensor: ranges.get(name, tensor))


def torch_tensorrt_inputs(call: Mapping[str, Any], ttrt: ModuleType) -> dict[str, Any]:
    """``call`` with each :class:`ShapeRange` made a ``torch_tensorrt.Input`` of its shapes."""
    def make(leaf: Any) -> Any:
        if not isinstance(leaf, ShapeRange):
            return leaf
        return ttrt.Input(min_shape=leaf.min_shape, opt_shape=leaf.opt_shape,
                          max_shape=leaf.max_shape, dtype=leaf.dtype)

    return {k: pytree.tree_map(make, v) if k in INPUT_KEYS else v for k, v in call.items()}


def shape_notes(ranges: Mapping[str, ShapeRange]) -> list[str]:
    """What the evidence says of the dynamic inputs passed."""
    return [f"dynamic input {name} passed as torch_tensorrt.Input(min_shape={r.min_shape}, "
            f"opt_shape={r.opt_shape}, max_shape={r.max_shape})" if as_input(r) else
            f"dynamic input {name} passed as its example tensor, {r.opt_shape} "
            f"{str(r.dtype).removeprefix('torch.')} (Torch-TensorRT's Input has no complex dtype; "
            "the engine takes its range from the exported program's symbolic shapes), and run at "
            f"{r.min_shape} and {r.max_shape}" for name, r in ranges.items()]


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


def compiled_evidence(version: Version, installed: str, job: CompileJob,
                      call: Mapping[str, Any], settings: Mapping[str, Any], *, engines: int,
                      fallbacks: list[str], boundaries: list[Any], notes: list[str],
                      fell_back: bool = False, passed: Mapping[str, Any] | None = None,
                      versions: Mapping[str, Any] | None = None,
                      details: Mapping[str, Any] | None = None,
                      dtypes: Collection[str] | None = None, steps: Sequence[str] = (),
                      remark: str = "") -> Evidence:
    """What one release's compile of ``job`` shows, the same for every backend and front-end
    that runs it: the dtype path, what ran where, the notes, the settings it was called with
    beside its inputs (and ``passed``), and the versions. ``dtypes``: the dtypes the compiled
    graphs hold, by name (None: the exported program's); ``steps``: the path's first steps
    (the front-end's graphs); ``remark``: what the row's message carries."""
    given = {k: v for k, v in call.items() if k not in INPUT_KEYS}
    given.update(settings, **(passed or {}))
    held = (program_dtypes(job.program) if dtypes is None else
            {getattr(torch, d.removeprefix("torch.")) for d in dtypes})
    return Evidence(
        remark=remark,
        path=[*steps, *path_steps(version, parse_version(torch.__version__), settings,
                                  held, engines, fallbacks, fell_back=fell_back)],
        fallbacks=fallbacks,
        boundaries=boundaries,
        engines=engines,
        notes=notes,
        settings={k: plain_setting(v) for k, v in given.items()},
        versions={"torch_tensorrt": installed, **(versions or {})},
        details=dict(details or {}),
    )


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


def release_call(version: Version, installed: str,
                 job: CompileJob) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """What one release's ``dynamo.compile`` gets for a job: its call arguments, its settings,
    and notes on what was mapped or does nothing; Unsupported for inputs the release refuses."""
    check_inputs(version, installed, job)
    call = call_arguments(version, *dynamic_inputs(job), job.device)
    settings, notes = adapt_settings(version, job.profile)
    return call, settings, [*notes, *shape_notes(job.ranges)]
