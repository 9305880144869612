"""``tensorrt``: Torch-TensorRT's dynamo path (``torch_tensorrt.dynamo.compile``), for real, on CUDA.

Torch-TensorRT's compile settings changed a lot between releases, and ``dynamo.compile`` takes
``**kwargs``, so a setting a release does not know is silently ignored. What each release
accepts lives in :mod:`~trtcheck.backends.torch_tensorrt.compat` and what a compiled module shows
in :mod:`~trtcheck.backends.torch_tensorrt.inspection`, both pure and tested without TensorRT;
this module calls the release, reads its logs (:func:`cache_outcome`) and checks the first call.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import io
import logging
import sys
import warnings
from collections.abc import Callable, Sequence
from functools import cached_property
from types import ModuleType
from typing import Any

import torch

from trtcheck.backends.base import Backend, Compiled, CompileJob, Deployable
from trtcheck.backends.deploy import (
    TENSORRT_ENGINES,
    Loader,
    loader_for,
    save,
)
from trtcheck.backends.lowering.code import CodeSource
from trtcheck.backends.torch_tensorrt.compat import (
    EXPLICIT_TYPING_WARNING,
    Version,
    cache_settings,
    compiled_evidence,
    drop_unaccepted,
    parse_version,
    profile_not_applicable,
    release_call,
    torch_compile_options,
    torch_tensorrt_inputs,
)
from trtcheck.backends.torch_tensorrt.conversion import (
    STANDIN_BUILDER,
    TENSORRT_BUILDER,
    TRT_LOGGER,
    Conversion,
)
from trtcheck.backends.torch_tensorrt.inspection import (
    CheckedOutputs,
    engine_memory,
    output_dtypes,
    partition_summary,
    retyped_inputs,
)
from trtcheck.backends.torch_tensorrt.logs import logged
from trtcheck.backends.torch_tensorrt.torch_compile import (
    TorchCompile,
    evidence_fields,
    shape_calls,
)
from trtcheck.core.profiles import Profile
from trtcheck.core.traits import TRAITS
from trtcheck.errors import BuildRefused, last_line

NOT_INSTALLED = "torch_tensorrt is not installed (pip install \"torch-trtcheck[tensorrt]\")"


# What Torch-TensorRT 2.14 logs when PyTorch's complex decomposition cannot run and it falls back
# to its own rewrite (lowering/passes/complex_decomposition_adapter.py).
_DECOMPOSITION_FALLBACK = "falling back to the legacy complex_graph_detection pass"


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


def _builder() -> str:
    """Who builds the engines: TensorRT's builder, or the stand-in's where it stands in for
    TensorRT (the ``tensorrt`` backend's contract tests)."""
    return STANDIN_BUILDER if getattr(sys.modules.get("tensorrt"), "BEHAVES", False) else TENSORRT_BUILDER


def _parameters(fn: Callable[..., Any]) -> frozenset[str] | None:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return frozenset(p.name for p in params
                     if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


class TensorRTBackend(Backend):
    """Compile with ``torch_tensorrt.dynamo.compile``, settings adapted to the installed release."""

    traits = TRAITS["tensorrt"]

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

    def not_applicable(self, profile: Profile) -> str | None:
        ttrt, _ = self._imported
        return super().not_applicable(profile) or (
            profile_not_applicable(parse_version(str(ttrt.__version__)), profile) if ttrt else None)

    def unavailable_reason(self, device: str) -> str | None:
        # The device first: installing Torch-TensorRT is no advice where there is no GPU.
        return super().unavailable_reason(device) or self._imported[1]

    def compile(self, job: CompileJob) -> Compiled:
        ttrt, reason = self._imported
        if ttrt is None:
            raise RuntimeError(reason)
        installed = str(ttrt.__version__)
        version = parse_version(installed)
        # How the model reaches the compiler: its exported program, or the module itself.
        compile = self._compile_module if job.profile.front_end.compiles_module else \
            self._compile_program
        return compile(ttrt, version, installed, job)

    def _compile_program(self, ttrt: ModuleType, version: Version, installed: str,
                         job: CompileJob) -> Compiled:
        """The export front-end: ``dynamo.compile`` of the exported program."""
        call, settings, notes = release_call(version, installed, job)
        settings = _with_cache(version, job, settings, notes)
        parameters = _parameters(ttrt.dynamo.compile)
        if parameters is not None:
            settings, dropped = drop_unaccepted(settings, parameters, version)
            notes += dropped

        caching = bool(settings.get("cache_built_engines") or settings.get("reuse_cached_engines"))
        if job.deploy:
            self._deploy_loader.prestart()  # its imports beside the compile
        conversion = Conversion()
        with (warnings.catch_warnings(record=True) as caught,
              logged(_CACHE_LOGGER, logging.INFO, caching) as cache_log,
              logged("torch_tensorrt", logging.WARNING) as warned,
              logged(TRT_LOGGER, logging.ERROR) as refused):
            warnings.simplefilter("always")
            try:
                with conversion.watching():
                    module = ttrt.dynamo.compile(job.program, **torch_tensorrt_inputs(call, ttrt),
                                                 **settings)
            except Exception as exc:
                explained = conversion.refusal(list(dict.fromkeys(refused)), _builder())
                if explained is None:
                    raise
                raise BuildRefused(explained) from exc
        fell_back = [line for line in dict.fromkeys(warned) if _DECOMPOSITION_FALLBACK in line]
        cached, skipped = cache_outcome(cache_log)
        notes += skipped
        user_typing = "use_explicit_typing" in job.profile.settings
        notes += list(dict.fromkeys(
            f"Torch-TensorRT warned: {w.message}" for w in caught
            if issubclass(w.category, (DeprecationWarning, FutureWarning))
            and (user_typing or EXPLICIT_TYPING_WARNING not in str(w.message))))
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
        trt = sys.modules.get("tensorrt")
        engine_bytes = engine_memory(module)
        expected = output_dtypes(job.program)
        fn = CheckedOutputs(module, expected, notes) if any(
            d is not None and d.is_complex for d in expected) else module
        deployable = Deployable(lambda path, fmt: save(ttrt, module, path, fmt, call),
                                lambda: self._deploy_loader, level=TENSORRT_ENGINES)
        # Timed as a user calls it: the module dynamo.compile returned, not trtcheck's check.
        return Compiled(fn, timed=module, deploy=deployable, evidence=compiled_evidence(
            version, installed, job, call, settings, engines=split.engines,
            fallbacks=split.fallbacks, boundaries=split.boundaries, notes=notes,
            fell_back=bool(fell_back), versions={"tensorrt": getattr(trt, "__version__", None)},
            details={**({"engine_memory": engine_bytes} if engine_bytes else {}),
                     **({"engine_cache": cached} if caching else {})},
        ), memory=sum(v for v in engine_bytes.values() if v) if engine_bytes else None)

    def _compile_module(self, ttrt: ModuleType, version: Version, installed: str,
                        job: CompileJob) -> Compiled:
        """The torch_compile front-end: the user's module compiled by Dynamo and the release's
        registered backend, called at each declared shape so that its compiles (and
        recompiles) land in the compile stage."""
        options = [f.name for f in dataclasses.fields(ttrt.dynamo.CompilationSettings)]
        settings, notes = torch_compile_options(version, installed, job, options)
        settings = _with_cache(version, job, settings, notes)
        caching = bool(settings.get("cache_built_engines") or settings.get("reuse_cached_engines"))
        compiling = TorchCompile(job.model, settings)
        with logged(_CACHE_LOGGER, logging.INFO, caching) as cache_log:
            compiling.run(shape_calls(job))
        found = compiling.evidence()
        cached, skipped = cache_outcome(cache_log)
        trt = sys.modules.get("tensorrt")
        return Compiled(compiling.fn, evidence=compiled_evidence(
            version, installed, job, {}, settings, **evidence_fields(found),
            notes=notes + found["notes"] + skipped,
            versions={"tensorrt": getattr(trt, "__version__", None)},
            details={**found["details"], **({"engine_cache": cached} if caching else {})}),
            deploy=job.profile.front_end.unsaved)

    @cached_property
    def _deploy_loader(self) -> Loader:
        """The deploy stage's loader of the installed release: its process starts on first
        use, once a run."""
        ttrt, _ = self._imported
        assert ttrt is not None  # asked for by a compiled row only
        return loader_for(CodeSource(str(ttrt.__version__), None, "installed", None,
                                     parse_version(torch.__version__)), behaving=False)

    def deactivate(self) -> None:
        if "_deploy_loader" in self.__dict__:
            self._deploy_loader.close()
            del self.__dict__["_deploy_loader"]


def _with_cache(version: Version, job: CompileJob, settings: dict[str, Any],
                notes: list[str]) -> dict[str, Any]:
    """``settings`` with the engine cache's where the job asks for it; ``notes`` get what that
    changed."""
    if not job.engine_cache:
        return settings
    cache, cache_notes = cache_settings(version, job.cache_dir)
    notes += cache_notes + [f"settings.{k} = {settings[k]!r} passed over the engine cache's "
                            f"{k} = {v!r}" for k, v in cache.items()
                            if k in settings and settings[k] != v]
    return {**cache, **settings}
