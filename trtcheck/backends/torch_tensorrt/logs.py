"""What Torch-TensorRT's loggers say while it compiles, gathered from the logging module: the one
way trtcheck reads them, what TensorRT logged at ERROR among them."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from trtcheck.errors import last_line


class Messages(list[str]):
    """Messages logged, and the exceptions some were logged with (``exc_info``)."""

    def __init__(self) -> None:
        super().__init__()
        self.exceptions: list[str] = []  # each as its first line
        self.raised: list[BaseException] = []  # the same exceptions themselves


class _Messages(logging.Handler):
    def __init__(self, level: int) -> None:
        super().__init__(level)
        self.messages = Messages()

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
        if record.exc_info and record.exc_info[1] is not None:
            self.messages.exceptions.append(last_line(record.exc_info[1], cut=True))
            self.messages.raised.append(record.exc_info[1])


@contextlib.contextmanager
def logged(name: str, level: int, on: bool = True) -> Iterator[Messages]:
    """The messages logger ``name`` emits at ``level`` and above meanwhile (``""``: every
    logger's, through the root), none when not ``on``."""
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
