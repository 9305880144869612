from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch

from trtcheck import backends
from trtcheck.config import cascade, options
from trtcheck.core.profiles import Tolerance
from trtcheck.errors import ConfigError, UsageError


def resolve(paths, **kw) -> options.Options:
    return cascade.resolve(tuple(paths), **kw)


def test_defaults_without_config(tmp_path: Path) -> None:
    opts = resolve([tmp_path])
    assert opts.backends == ()  # left to backends.choose, which knows what runs here
    chosen = backends.choose(opts)
    assert chosen.backends in (("tensorrt",), ("lowering",), ("emulate",)) and chosen.backend_note
    assert [p.name for p in opts.profiles] == ["default"]
    assert opts.tolerances["float64"].rtol < 6e-8 < opts.tolerances["float32"].rtol
    assert opts.device == ("cuda" if torch.cuda.is_available() else "cpu")


def test_nearest_pyproject_above_the_zoo(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.trtcheck]\nbackends = ["inductor"]\nstrict_xfail = true\n'
        '[tool.trtcheck.tolerances.float32]\nrtol = 1e-4\n'
        '[tool.trtcheck.timing]\nrepeats = 3\n')
    zoo = tmp_path / "models" / "zoo"
    zoo.mkdir(parents=True)
    opts = resolve([zoo])
    assert opts.backends == ("inductor",)
    assert opts.strict_xfail is True
    assert opts.tolerances["float32"] == Tolerance(rtol=1e-4, atol=5e-3)
    assert opts.timing.repeats == 3
    assert opts.config_file == tmp_path / "pyproject.toml"
    # The command line wins over the config file.
    assert resolve([zoo], backends=("eager",)).backends == ("eager",)


def test_trtcheck_toml_and_profiles(tmp_path: Path) -> None:
    (tmp_path / "trtcheck.toml").write_text(
        'run_profiles = ["default", "fast"]\n'
        '[profiles.fast]\ntruncate_double = true\nint64 = "int32"\n')
    opts = resolve([tmp_path])
    assert [p.name for p in opts.profiles] == ["default", "fast"]
    fast = opts.profiles[1]
    assert fast.truncate_double and fast.int64 == "int32" and fast.coverage == "broad"


def test_the_torch_compile_profile_and_a_profile_of_ones_own_on_that_front_end(
        tmp_path: Path) -> None:
    """The built-in torch_compile profile is default's settings on the torch.compile front-end;
    a profile of one's own picks the front-end with its frontend key."""
    (tmp_path / "trtcheck.toml").write_text(
        'run_profiles = ["default", "torch_compile", "jit64"]\n'
        '[profiles.jit64]\ntruncate_double = true\nfrontend = "torch_compile"\n')
    default, builtin, own = resolve([tmp_path]).profiles
    assert [p.front_end.name for p in (default, builtin, own)] == [
        "export", "torch_compile", "torch_compile"] and own.truncate_double
    assert replace(builtin, name="default", frontend="export") == default
    assert "torch.compile front-end" in builtin.describe()
    assert "torch.compile" not in default.describe()


@pytest.mark.parametrize("toml, message", [
    ("[profiles.p]\nfrontend = 'jit'", "frontend: 'jit' is not one of 'export', 'torch_compile'"),
    ("backend = ['eager']", "unknown key 'backend'; did you mean 'backends'?"),
    ("[timing]\nrepeat = 3", "unknown key 'repeat'; did you mean 'repeats'?"),
    ("strict_xfail = 'yes'", "strict_xfail: expected bool"),
    ("[profiles.p]\nint64 = 'int16'", "int64: 'int16' is not one of 'native', 'int32'"),
    ("[profiles.p]\nint64 = 'int32'\nrequire_full_compilation = true", "contradicts"),
    ("backends = ['tensorrtt']", "unknown backend 'tensorrtt'"),
    ("[tolerances.float33]\nrtol = 1", "did you mean 'float32'"),
    ("[timing]\nrepeats = 0", "repeats must be >= 1"),
    ("timeout = -1", "timeout: must be positive"),
    ("x = [", "invalid TOML"),
])
def test_config_errors_exit_2(tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / "trtcheck.toml").write_text(toml)
    with pytest.raises(ConfigError, match=None) as err:
        resolve([tmp_path])
    assert message in str(err.value)
    assert err.value.exit_code == 2


def test_memory_limit_is_cpu_only(tmp_path: Path) -> None:
    assert resolve([tmp_path], memory_limit_mb=512, device="cpu").memory_limit == 512 * 2**20
    if torch.cuda.is_available():
        with pytest.raises(ConfigError, match="use it with device cpu"):
            resolve([tmp_path], memory_limit_mb=512, device="cuda")


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist") as err:
        resolve([tmp_path / "nope"])
    assert err.value.exit_code == 2


def test_cuda_without_cuda_is_a_usage_error(tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(UsageError, match="CUDA is not available"):
        resolve([tmp_path], device="cuda")


def test_each_value_names_where_it_came_from(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^--timeout: must be positive, got 0$"):
        resolve([tmp_path], timeout=0.0)
    (tmp_path / "trtcheck.toml").write_text("timeout = -1\n")
    with pytest.raises(ConfigError, match=r"trtcheck.toml.timeout: must be positive"):
        resolve([tmp_path])
    (tmp_path / "trtcheck.toml").write_text('backends = ["emulat"]\n')
    with pytest.raises(ConfigError, match=r"trtcheck.toml: unknown backend 'emulat'; did you mean 'emulate'"):
        resolve([tmp_path])
    with pytest.raises(ConfigError, match=r"^command line: unknown backend 'eagr'; did you mean 'eager'"):
        resolve([tmp_path], backends=("eagr",))


def test_a_repeatable_flag_takes_a_comma_separated_list(tmp_path: Path) -> None:
    from trtcheck.cli.commands.run import run_cmd

    given = run_cmd.make_context("run", [str(tmp_path), "--backend", "eager,emulate", "--backend",
                                         "inductor", "--fail-on", "regression,narrowing"]).params
    opts = resolve([tmp_path], **{k: v for k, v in given.items() if k != "paths"})
    assert opts.backends == ("eager", "emulate", "inductor")
    assert opts.gate.fail_on == ("regression", "narrowing")
    with pytest.raises(ConfigError, match="'sometimes' is not one of"):
        resolve([tmp_path], fail_on=("failures,sometimes",))
