"""The zoo protocol: the ``@trtcheck.model`` decorator and what it records."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from trtcheck.errors import did_you_mean

VARIANTS = ("default", "float32", "float64", "complex64", "complex128", "int32", "int64")

Factory = Callable[[str], Any]


@dataclass(frozen=True)
class ModelSpec:
    """One ``@trtcheck.model`` declaration."""

    name: str
    factory: Factory
    variants: tuple[str, ...]
    tags: tuple[str, ...] = ()
    rtol: float | None = None
    atol: float | None = None
    xfail: str | Mapping[str, str] | None = None
    dynamic_shapes: Any = None
    strict: bool = False
    doc: str = ""
    line: int = 0

    def xfail_reason(self, variant: str, backend: str) -> str | None:
        """The declared reason this variant or backend is expected to fail, if any."""
        if self.xfail is None:
            return None
        if isinstance(self.xfail, str):
            return self.xfail
        return self.xfail.get(variant) or self.xfail.get(backend)

    def dynamic_shapes_for(self, variant: str) -> Any:
        if callable(self.dynamic_shapes):
            return self.dynamic_shapes(variant)
        return self.dynamic_shapes


@dataclass
class _Collector:
    specs: list[ModelSpec] = field(default_factory=list)


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
    decorator is applied, so loops and helper functions may declare families.
    """
    checked = _check_variants(variants)
    if xfail is not None and not isinstance(xfail, (str, Mapping)):
        raise TypeError("xfail must be a reason string or a mapping of variant/backend to reason")

    def register(factory: Factory) -> Factory:
        code = getattr(factory, "__code__", None)
        spec = ModelSpec(
            name=name or factory.__name__,
            factory=factory,
            variants=checked,
            tags=tuple(tags),
            rtol=rtol,
            atol=atol,
            xfail=dict(xfail) if isinstance(xfail, Mapping) else xfail,
            dynamic_shapes=dynamic_shapes,
            strict=strict,
            doc=((factory.__doc__ or "").strip().splitlines() or [""])[0],
            line=code.co_firstlineno if code else 0,
        )
        if _active:
            _active[-1].specs.append(spec)
        return factory

    return register(fn) if fn is not None else register
