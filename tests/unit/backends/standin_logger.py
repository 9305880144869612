"""A TensorRT logger for the stand-in's tests: it keeps what it is told."""

from __future__ import annotations

from trtcheck.backends.lowering.trt.types import ILogger, Severity


class Recorder(ILogger):
    """A TensorRT logger that keeps what it is told."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[tuple[Severity, str]] = []

    def log(self, severity: Severity, msg: str) -> None:
        self.messages.append((severity, msg))
