"""The stand-in's catalogue of layers: each declared once, by :func:`layer`.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`). A layer class registers, in one decorator,
its ``LayerType``, the ``INetworkDefinition.add_*`` methods that record it (each with the adapter
from that method's signature to the class's constructor), the attributes holding its refittable
weights and their ``WeightsRole``, the attributes it models (a converter may set those, and the
layer's ``infer`` and ``run`` read them) and those it leaves out for a stated reason (they change
nothing it predicts), and the name ``tensorrt`` exports it by (its class name). Setting any other
attribute of a layer is a prediction gap naming the attribute and the layer
(:class:`.network.StandInIgnores`): the stand-in would otherwise keep it and predict without it.
:mod:`trtcheck.backends.lowering.trt.layers` imports every layer module: that import list is the
catalogue. What is not in it is missing, and says so (:func:`.network.lacks`): a ``tensorrt.IXLayer`` or
``INetworkDefinition.add_x`` the stand-in does not have raises ``AttributeError`` naming what it has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from trtcheck.backends.lowering.trt.modes import outside_modes
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor

L = TypeVar("L", bound=type[ILayer])
# An add_* method's arguments made into the layer: (layer class, network, *args, **kwargs) -> layer.
Adapter = Callable[..., ILayer]


def construct(cls: type[ILayer], network: INetworkDefinition, *args: Any, **kwargs: Any) -> ILayer:
    """The adapter of an ``add_*`` method whose signature is the class's constructor's."""
    return cls(network, *args, **kwargs)


def tensors(*names: str) -> Adapter:
    """The adapter of an ``add_*`` method that takes only the layer's input tensors, ``names``
    (as TensorRT's Python API names its parameters), positionally or by keyword."""

    def adapt(cls: type[ILayer], network: INetworkDefinition, *args: ITensor, **kwargs: ITensor) -> ILayer:
        given = dict(zip(names, args, strict=False)) | kwargs
        return cls(network, [given[name] for name in names])

    return adapt


@dataclass(frozen=True)
class Entry:
    """One registered layer class: what it is to TensorRT's API."""

    cls: type[ILayer]
    kind: Any  # its LayerType
    adders: tuple[str, ...]  # the INetworkDefinition methods that record it (none: added otherwise)
    roles: tuple[tuple[str, Any], ...]  # (attribute, WeightsRole) of its refittable weights
    attributes: frozenset[str]  # the attributes it models
    ignored: Mapping[str, str]  # attributes it accepts and leaves out, each with why that changes nothing

    @property
    def export(self) -> str:
        """Its name on the ``tensorrt`` module."""
        return self.cls.__name__


LAYERS: dict[type[ILayer], Entry] = {}


def layer(kind: Any, *adders: str | tuple[str, Adapter], roles: Iterable[tuple[str, Any]] = (),
          attributes: Iterable[str] = (), ignored: Mapping[str, str] | None = None) -> Callable[[L], L]:
    """Register a layer class: its ``LayerType`` ``kind``; the ``add_*`` methods recording it, each a
    name (its adapter :func:`construct`) or ``(name, adapter)``; ``roles``, the ``(attribute,
    WeightsRole)`` pairs of its refittable weights; ``attributes``, those it models (its weights'
    included); ``ignored``, attributes it accepts and does not model, each with why that changes
    nothing it predicts. Its properties with setters are modelled by being properties."""

    def register(cls: L) -> L:
        cls.kind = kind
        names = []
        for each in adders:
            name, adapt = (each, construct) if isinstance(each, str) else each
            network_method(_adder(name, cls, adapt))
            names.append(name)
        roles_ = tuple(roles)
        modelled = frozenset(attributes) | {attribute for attribute, _ in roles_}
        cls.modelled = modelled | frozenset(ignored or {})
        LAYERS[cls] = Entry(cls, kind, tuple(names), roles_, modelled, dict(ignored or {}))
        return cls

    return register


def _adder(name: str, cls: type[ILayer], adapt: Adapter) -> Callable[..., ILayer]:
    def add(self: INetworkDefinition, *args: Any, **kwargs: Any) -> ILayer:
        return self.add(adapt(cls, self, *args, **kwargs))

    add.__name__ = add.__qualname__ = name
    add.__doc__ = f"``INetworkDefinition.{name}``: record a :class:`{cls.__name__}`."
    return add


F = TypeVar("F", bound=Callable[..., Any])


def network_method(fn: F) -> F:
    """Put ``fn`` on ``INetworkDefinition`` under its name, run outside the caller's torch modes
    (``add_loop``, ``add_if_conditional`` and each layer's ``add_*``)."""
    setattr(INetworkDefinition, fn.__name__, outside_modes(fn))
    return fn


def exports() -> dict[str, type[ILayer]]:
    """Every registered layer class by the name ``tensorrt`` exports it as."""
    return {e.export: e.cls for e in LAYERS.values()}
