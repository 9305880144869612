"""trtcheck's settings as pytest options: each setting whose entry names the ``pytest``
command, under its flag with the ``--trtcheck-`` prefix (``--trtcheck-backend``), so that no
flag collides with pytest's or another plugin's; resolved by the CLI's own cascade (defaults,
``trtcheck.toml`` or ``[tool.trtcheck]``, the command line)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from trtcheck.config.settings import PYTEST, Setting, for_command

if TYPE_CHECKING:
    from trtcheck.config.options import Options

ON = "trtcheck"  # the option that turns the plugin on, ``--trtcheck``
PREFIX = "--trtcheck-"


def flags(s: Setting) -> list[str]:
    """The setting's pytest flags: ``--trtcheck-isolate`` and ``--trtcheck-no-isolate`` for
    the CLI's ``--isolate/--no-isolate``."""
    return [PREFIX + flag.lstrip("-") for flag in (s.flag or "").split("/")]


def _dest(s: Setting) -> str:
    return f"trtcheck_{s.key}"


def _kwargs(s: Setting) -> dict[str, Any]:
    kw: dict[str, Any] = {"dest": _dest(s), "default": None, "help": s.help.replace("%", "%%")}
    if s.type is bool:
        return {**kw, "action": "store_true"}
    kw["action"] = "append" if s.multiple else "store"
    if s.metavar:
        kw["metavar"] = s.metavar
    if s.choices and not s.multiple:  # a repeatable one's list is checked once opened
        kw["choices"] = list(s.choices)
    elif s.type is Path:
        kw["type"] = Path
    elif s.type in (int, float):
        kw["type"] = s.type
    elif s.type == (int, float):
        kw["type"] = float
    return kw


def add(parser: pytest.Parser) -> None:
    """``--trtcheck`` and each setting the pytest command takes, in the table's order."""
    group = parser.getgroup("trtcheck", "trtcheck: the model zoo as test items")
    group.addoption(f"--{ON}", action="store_true", dest=ON, default=False,
                    help="Collect the zoo files under the given paths as trtcheck does, one "
                         "item per row (case, backend, profile), and write trtcheck's reports.")
    for s in for_command(PYTEST):
        if s.switch:
            on, off = flags(s)
            group.addoption(on, **_kwargs(s))
            group.addoption(off, dest=_dest(s), default=None, action="store_false",
                            help=f"The opposite of {on}.")
        else:
            group.addoption(*flags(s), **_kwargs(s))


def given(config: pytest.Config) -> dict[str, Any]:
    """The command line's value of each setting the pytest command takes, by key: None where
    not given, as the cascade expects."""
    return {s.key: config.getoption(_dest(s)) for s in for_command(PYTEST)}


def zoo_paths(config: pytest.Config) -> tuple[Path, ...]:
    """The paths pytest collects (its arguments, else ``testpaths``), without node ids' parts."""
    base = config.invocation_params.dir
    return tuple(dict.fromkeys(base / arg.split("::")[0] for arg in config.args))


def resolve(config: pytest.Config) -> Options:
    """The session's options, resolved once as ``trtcheck run`` resolves them, the default
    backend chosen; a bad value is pytest's usage error, with trtcheck's message."""
    from trtcheck.config import cascade
    from trtcheck.errors import TrtcheckError
    from trtcheck.execution import job

    try:
        return job.prepare(cascade.resolve(zoo_paths(config), **given(config)))
    except TrtcheckError as exc:
        raise pytest.UsageError(f"trtcheck: {exc}") from None
