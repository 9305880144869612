"""The zoo protocol: the ``@trtcheck.model`` decorator and what it records."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from trtcheck.core.variants import VARIANTS
from trtcheck.errors import did_you_mean

Factory = Callable[[str], Any]


@dataclass(frozen=True)
class ModelSpec:
    """One ``@trtcheck.model`` declaration."""

    name: str
    factory: Factory | None  # None where only the declaration was collected (in another process)
    variants: tuple[str, ...]
    tags: tuple[str, ...] = ()
    rtol: float | None = None
    atol: float | None = None
    xfail: str | Mapping[str, str] | None = None
    dynamic_shapes: Any = None
    strict: bool = False
    doc: str = ""
    line: int = 0

    def xfail_reason(self, variant: str, backend: str, profile: str,
                     family: str | None = None) -> str | None:
        """The declared reason a row is expected to fail, if any: the most specific key wins,
        ``backend:profile``, then ``profile``, then ``backend``, then ``variant``. ``family`` is
        the backend's name without its release: a row of ``lowering@2.14.0`` also answers to
        ``lowering``."""
        if self.xfail is None:
            return None
        if isinstance(self.xfail, str):
            return self.xfail
        base = family or backend
        for key in (f"{backend}:{profile}", f"{base}:{profile}", profile, backend, base, variant):
            if key in self.xfail:
                return self.xfail[key]
        return None

    def dynamic_shapes_for(self, variant: str) -> Any:
        if callable(self.dynamic_shapes):
            return self.dynamic_shapes(variant)
        return self.dynamic_shapes

    def declared(self) -> ModelSpec:
        """The declaration as it crosses to another process: without the factory and the
        dynamic shapes, which stay where the zoo file was imported."""
        return replace(self, factory=None, dynamic_shapes=None)


@dataclass(frozen=True)
class Invalid:
    """A declaration the decorator rejected: the model's name, where it is declared, and why."""

    name: str
    file: str
    line: int
    message: str


@dataclass
class _Collector:
    specs: list[ModelSpec] = field(default_factory=list)
    invalid: list[Invalid] = field(default_factory=list)


_active: list[_Collector] = []


def collecting() -> _Collector:
    """Start collecting the models declared while a zoo file is imported."""
    collector = _Collector()
    _active.append(collector)
    return collector


def stop_collecting(collector: _Collector) -> None:
    _active.remove(collector)


def _check_variants(variants: Iterable[str]) -> tuple[str, ...]:
    names = tuple(variants) if not isinstance(variants, str) else (variants,)
    if not names:
        raise ValueError("variants must name at least one variant")
    for v in names:
        if v not in VARIANTS:
            raise ValueError(
                f"unknown variant {v!r}{did_you_mean(v, VARIANTS)} (known: {', '.join(VARIANTS)})"
            )
    return names


def _check_tags(tags: Iterable[str]) -> tuple[str, ...]:
    if isinstance(tags, str):  # iterating would make every letter a tag
        raise ValueError(f"tags must be a list of words, got the string {tags!r}: "
                         f"write tags=({tags!r},)")
    checked = tuple(tags)
    for tag in checked:
        if not isinstance(tag, str):
            raise ValueError(f"tags must be strings, got {tag!r}")
    return checked


def _check_tolerance(key: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{key} must be a number, got {value!r} (a {type(value).__name__})")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{key} must be a finite number >= 0, got {value!r}")


def _check_xfail(xfail: Any) -> None:
    if xfail is None or isinstance(xfail, str):
        return
    if not isinstance(xfail, Mapping):
        raise ValueError("xfail must be a reason string, or a mapping from a variant, backend, "
                         f"profile or backend:profile to a reason; got {type(xfail).__name__}")
    for key, reason in xfail.items():
        if not isinstance(key, str) or not isinstance(reason, str):
            raise ValueError(f"xfail must map names to reason strings, got {key!r}: {reason!r}")


def model(
    fn: Factory | None = None,
    *,
    name: str | None = None,
    variants: Iterable[str] = ("default",),
    tags: Iterable[str] = (),
    rtol: float | None = None,
    atol: float | None = None,
    xfail: str | Mapping[str, str] | None = None,
    dynamic_shapes: Any = None,
    strict: bool = False,
) -> Any:
    """Declare a model of the zoo.

    The decorated factory receives a variant name and returns ``(module, args)`` or
    ``(module, args, kwargs)``, built on CPU. The model is registered when the
    decorator is applied, so loops and helper functions may declare families. An invalid
    declaration, while trtcheck collects the zoo, becomes an error row at the decorator's
    line; the file's other models still run.
    """
    caller = sys._getframe(1)
    try:
        checked = _check_variants(variants)
        checked_tags = _check_tags(tags)
        _check_tolerance("rtol", rtol)
        _check_tolerance("atol", atol)
        _check_xfail(xfail)
    except ValueError as exc:
        if not _active:
            raise
        problem = str(exc)

        def reject(factory: Factory) -> Factory:
            _active[-1].invalid.append(Invalid(name or getattr(factory, "__name__", "?"),
                                               caller.f_code.co_filename, caller.f_lineno,
                                               problem))
            return factory

        return reject(fn) if fn is not None else reject

    def register(factory: Factory) -> Factory:
        spec = ModelSpec(
            name=name or factory.__name__,
            factory=factory,
            variants=checked,
            tags=checked_tags,
            rtol=rtol,
            atol=atol,
            xfail=dict(xfail) if isinstance(xfail, Mapping) else xfail,
            dynamic_shapes=dynamic_shapes,
            strict=strict,
            doc=((factory.__doc__ or "").strip().splitlines() or [""])[0],
            line=caller.f_lineno,  # the decorator's line, or the call's for model(factory)
        )
        if _active:
            _active[-1].specs.append(spec)
        return factory

    return register(fn) if fn is not None else register
