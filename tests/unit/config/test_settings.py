"""Each setting is declared once; the CLI, the config schema, the docs' reference page and the
Action's inputs are made from (or checked against) that declaration."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import click
import pytest
import yaml

from tests.helpers import REPO
from trtcheck.cli import cli
from trtcheck.config import cascade, settings
from trtcheck.config.options import Gate, Options
from trtcheck.config.settings import SETTINGS
from trtcheck.errors import ConfigError
from trtcheck.execution.run import RESUME_MUST_MATCH

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
# Inputs of the Action that are not trtcheck settings: what it installs, where the reports go,
# and the comment's own inputs.
ACTION_OWN_INPUTS = {"paths", "args", "extras", "python", "install-torch", "torch-index-url",
                     "cache", "summary", "artifact", "comment", "comment-header", "comment-author",
                     "ab-base", "allow-pull-request-target",
                     "github-token"}


def _flags(command: str) -> dict[str, str]:
    """Each option's destination -> its flags, as click registered them."""
    found = {}
    for param in cli.commands[command].params:
        if isinstance(param, click.Option):
            found[param.name] = "/".join(param.opts + param.secondary_opts)
    return found


@pytest.mark.parametrize("command", ["run", "list", "analyze", "diff", "ab", "reduce"])
def test_every_flag_of_a_command_is_a_declared_setting(command: str) -> None:
    declared = {s.key: s for s in settings.for_command(
        {"list": settings.SELECT}.get(command, command))}
    flags = _flags(command)
    for key, s in declared.items():
        assert key in flags, f"{command}: {s.flag} is declared but not an option"
        assert set(flags[key].split("/")) >= set(s.flag.split("/")), (key, flags[key])
    own = {"analyze": {"help", "out", "verbose"}, "diff": {"help", "out", "verbose"},
           "ab": {"help", "base_ref", "head_ref"}}.get(command, {"help"})
    assert set(flags) - set(declared) <= own, f"{command} has undeclared options"


def test_the_config_schema_is_the_declaration(tmp_path: Path) -> None:
    for s in SETTINGS:
        assert (s.key in settings.CONFIG_SCHEMA) == s.config
    (tmp_path / "trtcheck.toml").write_text('shard = "1/2"\n')
    with pytest.raises(ConfigError, match="unknown key 'shard'"):  # command line only
        cascade.resolve((tmp_path,))


def test_the_reference_page_is_generated_from_the_declaration(tmp_path: Path) -> None:
    page = tmp_path / "reference.md"
    shutil.copy(REPO / "docs" / "reference.md", page)
    assert not settings.write_reference(page), \
        "docs/reference.md is stale: run python -m trtcheck.config.settings docs/reference.md"
    text = page.read_text()
    for s in SETTINGS:
        if s.config or s.flag:
            assert f"`{s.key}`" in text or (s.flag or "") in text, s.key


def test_a_drifted_docs_row_is_caught(tmp_path: Path) -> None:
    page = tmp_path / "reference.md"
    text = (REPO / "docs" / "reference.md").read_text().replace("`--timeout S`", "`--timeout SECONDS`")
    page.write_text(text)
    assert settings.write_reference(page)


def test_action_inputs_map_to_the_declared_flags() -> None:
    inputs = set(ACTION["inputs"])
    mapped = {s.action: s for s in SETTINGS if s.action}
    assert inputs - ACTION_OWN_INPUTS <= set(mapped), \
        f"inputs not declared as settings: {sorted(inputs - ACTION_OWN_INPUTS - set(mapped))}"
    run_step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "run")
    env = {v: k for k, v in run_step["env"].items()}
    for name, s in mapped.items():
        assert name in inputs, f"setting {s.key} names Action input {name}, which action.yml lacks"
        var = env[f"${{{{ inputs.{name} }}}}"]
        flag = s.flag.split("/")[0]
        assert re.search(rf"{re.escape(flag)}\b[^\n]*\${var}\b|\${{?{var}}}?[^\n]*{re.escape(flag)}",
                         run_step["run"]) or re.search(
            rf"for \w+ in \"\$\{{\w+\[@\]\}}\"; do args\+=\({re.escape(flag)} ", run_step["run"]), \
            f"the run step does not pass {name} as {flag}"


def _field_owners() -> dict[str, list[str]]:
    """Each Options (and Gate) field -> the settings that resolve into it."""
    owners: dict[str, list[str]] = {}
    for s in SETTINGS:
        owners.setdefault(s.attr, []).append(s.key)
    return owners


def test_every_setting_resolves_into_a_field_of_options() -> None:
    names = {f.name for f in dataclasses.fields(Options)}
    for s in SETTINGS:
        assert s.attr in names, f"{s.key}: Options has no field {s.attr!r}"


def test_a_field_that_holds_one_setting_takes_its_default_from_the_table() -> None:
    owners = _field_owners()
    gate_keys = {f.name: f.metadata.get("setting") for f in dataclasses.fields(Gate)}
    assert set(gate_keys.values()) == set(owners["gate"])  # each gate setting is a Gate field
    for f in dataclasses.fields(Options):
        keys = owners.get(f.name, [])
        if len(keys) == 1:
            assert f.metadata.get("setting") == keys[0], \
                f"Options.{f.name} declares its own default: use setting({keys[0]!r})"
    # and what setting() made agrees with the table (or the value a later decision replaces)
    plain = Options(paths=())
    for s in SETTINGS:
        held = getattr(plain, s.attr)
        if len(owners[s.attr]) > 1 or s.attr in ("profiles", "known_profiles", "tolerances",
                                                 "timing"):
            continue  # several settings, or a table made into objects: checked above
        expected = s.default if s.undecided is settings.SAME else s.undecided
        expected = tuple(expected) if isinstance(expected, list) else expected
        assert held == (Path(expected) if s.type is Path and expected else expected), s.key


def test_a_setting_without_a_field_in_options_is_an_error(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    extra = settings.Setting("unheard_of", bool, False, "A setting Options lacks.")
    monkeypatch.setattr(cascade, "SETTINGS", (*SETTINGS, extra))
    monkeypatch.setattr(cascade, "BY_KEY", {**settings.BY_KEY, extra.key: extra})
    with pytest.raises(TypeError, match="unheard_of"):
        cascade.resolve((tmp_path,))


def test_the_resume_check_and_merge_compare_every_recorded_row_setting() -> None:
    recorded = Options(paths=()).to_dict()
    assert set(settings.ROW_SETTINGS) <= set(recorded), "a row setting the record does not keep"
    assert set(RESUME_MUST_MATCH) == {"paths", *settings.ROW_SETTINGS}
    for key in ("nan", "torch_tensorrt", "dtype_drift", "engine_cache", "timing", "backends"):
        assert key in settings.ROW_SETTINGS
    for key in ("out", "workers", "timeout", "fail_on", "reduce", "cache_dir"):
        assert key not in settings.ROW_SETTINGS


def test_a_new_setting_reaches_the_cli_the_config_the_record_and_the_docs(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The count docs/architecture.md gives: its Setting, and its Options field."""
    from trtcheck.config import options

    new = settings.Setting("shiny", bool, False, "A setting only this test declares.",
                           flag="--shiny/--no-shiny", rows=True)
    table, by_key = (*SETTINGS, new), {**settings.BY_KEY, new.key: new}
    schema = {**settings.CONFIG_SCHEMA, new.key: bool}
    for module in (settings, cascade):
        monkeypatch.setattr(module, "SETTINGS", table)
        monkeypatch.setattr(module, "BY_KEY", by_key)
        monkeypatch.setattr(module, "CONFIG_SCHEMA", schema)
    monkeypatch.setattr(options, "BY_KEY", by_key)
    with_field = dataclasses.make_dataclass(
        "WithShiny", [("shiny", bool, options.setting("shiny"))], bases=(Options,), frozen=True)
    monkeypatch.setattr(cascade, "Options", with_field)

    @click.command()
    @settings.click_options(settings.RUN)
    def probe(**given: object) -> dict[str, object]:
        return given

    assert probe.main(["--shiny"], standalone_mode=False)["shiny"] is True  # the CLI
    assert "`--shiny` / `--no-shiny` | `shiny` |" in settings.reference_table()  # the docs
    assert cascade.resolve((tmp_path,)).to_dict()["shiny"] is False  # the record, by default
    (tmp_path / "trtcheck.toml").write_text("shiny = true\n")
    assert cascade.resolve((tmp_path,)).to_dict()["shiny"] is True  # the config file
    assert cascade.resolve((tmp_path,), shiny=False).shiny is False  # the command line wins


@pytest.mark.parametrize("commands", [settings.RUNS, (settings.RUN, settings.REDUCE)])
def test_a_table_only_setting_reaches_every_command_its_entry_names(
        monkeypatch: pytest.MonkeyPatch, commands: tuple[str, ...]) -> None:
    """run, ab and reduce read which flags they take from the table alone: a new run setting
    reaches all three, and one whose entry leaves a command out is refused by it."""
    extra = {"commands": commands} if commands != settings.RUNS else {}
    new = settings.Setting("shiny", bool, False, "A setting only this test declares.",
                           flag="--shiny/--no-shiny", **extra)
    monkeypatch.setattr(settings, "SETTINGS", (*SETTINGS, new))
    for command in settings.RUNS:
        @click.command()
        @settings.click_options(command)
        def probe(**given: object) -> dict[str, object]:
            return given

        if command in commands:
            assert probe.main(["--shiny"], standalone_mode=False)["shiny"] is True, command
        else:
            with pytest.raises(click.NoSuchOption):
                probe.main(["--shiny"], standalone_mode=False)
    # the commands themselves are built by the same call, with nothing of their own beside it
    for command in settings.RUNS:
        assert set(_flags(command)) - {"help", "base_ref", "head_ref"} == {
            s.key for s in settings.for_command(command) if s.key != "shiny"}


def test_the_actions_environment_names_are_the_declared_ones() -> None:
    passed = {value.removeprefix("${{ inputs.").removesuffix(" }}"): name
              for step in ACTION["runs"]["steps"] for name, value in (step.get("env") or {}).items()
              if str(value).startswith("${{ inputs.")}
    declared = {s.action: s for s in SETTINGS if s.action}
    checked = [key for key in passed if key in declared]
    assert checked, "no Action input passed in the environment is a setting"
    for key in checked:
        assert passed[key] == declared[key].env, (key, passed[key])
