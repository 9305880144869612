"""A TensorRT logger for the stand-in's tests: it keeps what it is told; and a network built with it."""

from __future__ import annotations

from trtcheck.backends.lowering.trt import engine
from trtcheck.backends.lowering.trt.network import INetworkDefinition
from trtcheck.backends.lowering.trt.types import ILogger, Severity


class Recorder(ILogger):
    """A TensorRT logger that keeps what it is told."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[tuple[Severity, str]] = []

    def log(self, severity: Severity, msg: str) -> None:
        self.messages.append((severity, msg))


def network() -> tuple[engine.Builder, INetworkDefinition, Recorder]:
    """A builder logging to a :class:`Recorder`, a strongly typed network of it, and the logger."""
    logger = Recorder()
    builder = engine.Builder(logger)
    return builder, builder.create_network(1 << 1), logger
