"""``pytest --trtcheck PATHS``: the zoo under PATHS as pytest items, one per row.

Registered through the ``pytest11`` entry point, so every pytest run in an environment with
trtcheck installed loads this module: without ``--trtcheck`` it adds its options and nothing
else (no hook of its session is registered, nothing of trtcheck's beyond the settings table is
imported). With it, :class:`~trtcheck.pytest_plugin.session.Plugin` is registered and does the
work: trtcheck's collection and worker, pytest's selection, parallelism and reports, and
trtcheck's own reports written at the end."""

from __future__ import annotations

import pytest

from trtcheck.pytest_plugin import options

PLUGIN = "trtcheck-session"


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add(parser)


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption(options.ON):
        return
    from trtcheck.pytest_plugin.session import Plugin

    config.pluginmanager.register(Plugin(config), PLUGIN)
