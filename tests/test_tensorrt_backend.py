"""The ``tensorrt`` backend.

Three kinds of test:

1. the per-release version logic, as pure functions (no Torch-TensorRT needed);
2. the backend's call into Torch-TensorRT, checked against a STAND-IN of the ``torch_tensorrt``
   API (``StandInTorchTensorRT``). The stand-in is NOT TensorRT: it records the arguments of
   ``dynamo.compile`` and returns the exported program's module, run by PyTorch. It checks the
   call and nothing else; its outputs are never TensorRT measurements;
3. real tests (``@pytest.mark.tensorrt``) that compile with the real Torch-TensorRT on CUDA and
   skip, with the reason, where it cannot run.
"""

from __future__ import annotations

import importlib.machinery
import inspect
import logging
import operator
import sys
import types
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch

from trtcheck.backends.base import CompileJob
from trtcheck.backends.tensorrt import (
    NOT_INSTALLED,
    Partition,
    TensorRTBackend,
    Version,
    adapt_settings,
    cache_outcome,
    cache_settings,
    call_arguments,
    complex_rewrite,
    drop_unaccepted,
    parse_version,
    partition_summary,
    path_steps,
    supports_complex_inputs,
)
from trtcheck.errors import Unsupported
from trtcheck.execute import iter_rows
from trtcheck.options import Options, Profile
from trtcheck.rows import Row
from trtcheck.run import collect
from trtcheck.status import Status

RELEASES: list[Version] = [(2, 5), (2, 8), (2, 10), (2, 12), (2, 13), (2, 14)]
DEFAULT = Profile("default")


class RoPE(torch.nn.Module):
    """The seed's rotary-embedding example: real x, complex64 freqs, output through view_as_real."""

    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        x_complex = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(x_complex * freqs).flatten(2)


class ScatterIds(torch.nn.Module):
    """int64 ids scattered into an int64 table."""

    def forward(self, ids: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.zeros(16, dtype=torch.int64, device=ids.device).scatter(0, index, ids)


def rope_inputs(device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    return (torch.randn(1, 16, 64, device=device),
            torch.randn(1, 16, 32, dtype=torch.complex64, device=device))


def scatter_inputs(device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.tensor([1, -7, 2**40, -(2**35), 5, 2**31], dtype=torch.int64, device=device)
    return ids, torch.tensor([3, 0, 15, 8, 9, 1], dtype=torch.int64, device=device)


def job_for(model: torch.nn.Module, args: tuple[Any, ...], profile: Profile = DEFAULT,
            device: str = "cuda", kwargs: dict[str, Any] | None = None) -> CompileJob:
    kwargs = kwargs or {}
    program = torch.export.export(model, args, kwargs)
    return CompileJob(program, args, kwargs, profile, device)


# 1. Version logic, per release ---------------------------------------------------------------


@pytest.mark.parametrize(("text", "version"), [
    ("2.13.0", (2, 13)), ("2.13.0+cu130", (2, 13)), ("2.14.0.dev20260101+cu130", (2, 14)),
    ("2.5.0", (2, 5)), ("10.16.1.11", (10, 16)),
])
def test_parse_version(text: str, version: Version) -> None:
    assert parse_version(text) == version


def test_parse_version_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="cannot read a version"):
        parse_version("unknown")


@pytest.mark.parametrize(("version", "supported"),
                         zip(RELEASES, [False, False, False, True, True, True], strict=True))
def test_complex_inputs_from_2_12(version: Version, supported: bool) -> None:
    assert supports_complex_inputs(version) is supported


@pytest.mark.parametrize("version", RELEASES)
def test_default_profile_passes_truncate_double_and_notes_nothing(version: Version) -> None:
    settings, notes = adapt_settings(version, DEFAULT)
    assert settings == {"truncate_double": False, "require_full_compilation": False, "min_block_size": 1}
    assert notes == []


@pytest.mark.parametrize("version", RELEASES)
def test_truncate_double_is_passed_by_name_from_2_3(version: Version) -> None:
    settings, notes = adapt_settings(version, Profile("t", truncate_double=True, min_block_size=3,
                                                      require_full_compilation=True))
    assert settings == {"truncate_double": True, "require_full_compilation": True, "min_block_size": 3}
    assert "truncate_long_and_double" not in settings
    assert notes == []


def test_truncate_double_maps_to_truncate_long_and_double_before_2_3() -> None:
    settings, notes = adapt_settings((2, 2), Profile("t", truncate_double=True))
    assert settings == {"truncate_long_and_double": True, "require_full_compilation": False,
                        "min_block_size": 1}
    assert notes == ["Torch-TensorRT 2.2 has no truncate_double: truncate_double passed as "
                     "truncate_long_and_double, which truncates int64 to int32 and float64 to float32 "
                     "together"]


@pytest.mark.parametrize("version", RELEASES)
def test_int64_as_int32_does_not_apply_to_native_int64(version: Version) -> None:
    settings, notes = adapt_settings(version, Profile("i", int64="int32"))
    assert settings["truncate_double"] is False
    assert "truncate_long_and_double" not in settings
    assert len(notes) == 1
    assert notes[0].startswith(f'int64 = "int32" does not apply: Torch-TensorRT {version[0]}.{version[1]} '
                               "runs int64 natively")


def test_int64_as_int32_maps_to_truncate_long_and_double_before_2_3() -> None:
    settings, notes = adapt_settings((2, 2), Profile("i", int64="int32"))
    assert settings["truncate_long_and_double"] is True
    assert 'int64 = "int32" passed as truncate_long_and_double' in notes[0]
    assert "float64 to float32" in notes[0]


@pytest.mark.parametrize(("version", "passed", "note"), [
    ((2, 5), False, "use_explicit_typing dropped: added in Torch-TensorRT 2.6 (installed 2.5)"),
    ((2, 8), True, None),
    ((2, 10), True, "use_explicit_typing is deprecated from Torch-TensorRT 2.10 (on by default there)"),
    ((2, 12), True, "use_explicit_typing is deprecated from Torch-TensorRT 2.10 (on by default there)"),
    ((2, 13), False, "use_explicit_typing dropped: removed in Torch-TensorRT 2.13, where every network "
                     "is strongly typed"),
    ((2, 14), False, "use_explicit_typing dropped: removed in Torch-TensorRT 2.13, where every network "
                     "is strongly typed"),
])
def test_use_explicit_typing_across_releases(version: Version, passed: bool, note: str | None) -> None:
    settings, notes = adapt_settings(version, Profile("e", settings={"use_explicit_typing": True}))
    assert ("use_explicit_typing" in settings) is passed
    assert notes == ([note] if note else [])


@pytest.mark.parametrize("version", RELEASES)
def test_enabled_precisions_silently_ignored_from_2_13(version: Version) -> None:
    settings, notes = adapt_settings(version, Profile("p", settings={"enabled_precisions": ["float16"]}))
    if version >= (2, 13):
        assert "enabled_precisions" not in settings
        assert notes == ["enabled_precisions dropped: silently ignored from Torch-TensorRT 2.13 (strongly "
                         "typed networks take precisions from the model's dtypes)"]
    else:
        assert settings["enabled_precisions"] == {torch.float16}  # config names become torch dtypes
        assert notes == []


def test_dtype_settings_reject_unknown_names() -> None:
    with pytest.raises(ValueError, match="'float17' is not a torch dtype"):
        adapt_settings((2, 12), Profile("p", settings={"enabled_precisions": ["float17"]}))


def test_settings_repeating_profile_fields_give_way_to_the_profile() -> None:
    profile = Profile("s", truncate_double=False, min_block_size=2,
                      settings={"truncate_long_and_double": True, "min_block_size": 2,
                                "torch_executed_ops": ["torch.ops.aten.scatter.src"]})
    settings, notes = adapt_settings((2, 13), profile)
    assert settings == {"truncate_double": False, "require_full_compilation": False, "min_block_size": 2,
                        "torch_executed_ops": ["torch.ops.aten.scatter.src"]}
    # An agreeing duplicate (min_block_size) needs no note; a disagreeing one does.
    assert notes == ["settings.truncate_long_and_double = True dropped: the profile's "
                     "truncate_double = False is passed"]


def test_coverage_is_an_emulate_setting() -> None:
    _, notes = adapt_settings((2, 13), Profile("seed", coverage="seed"))
    assert notes == ['coverage = "seed" is an emulate setting and does not apply: Torch-TensorRT 2.13 '
                     "applies its own complex rewrite (see the path)"]


@pytest.mark.parametrize(("version", "torch_version", "decompose", "rewrite"), [
    ((2, 5), (2, 13), True, "no complex rewrite"),
    ((2, 8), (2, 13), True, "complex_graph_rewrite, mul only"),
    ((2, 10), (2, 13), True, "complex_graph_rewrite, mul only"),
    ((2, 12), (2, 13), True, "complex_graph_rewrite"),
    ((2, 13), (2, 14), True, "complex_graph_rewrite"),
    ((2, 14), (2, 13), True, "complex_graph_rewrite"),
    ((2, 14), (2, 14), True, "PyTorch's complex decomposition"),
    ((2, 14), (2, 14), False, "complex_graph_rewrite"),
])
def test_complex_rewrite(version: Version, torch_version: Version, decompose: bool, rewrite: str) -> None:
    assert complex_rewrite(version, torch_version, decompose) == rewrite


def test_drop_unaccepted_names_typos_and_keeps_kwargs_aliases() -> None:
    settings = {"min_blok_size": 3, "refit": True, "min_block_size": 1}
    kept, notes = drop_unaccepted(settings, {"min_block_size", "truncate_double"}, (2, 13))
    assert kept == {"refit": True, "min_block_size": 1}
    assert notes == ["min_blok_size dropped: not a parameter of torch_tensorrt.dynamo.compile in "
                     "Torch-TensorRT 2.13, which would silently ignore it; did you mean 'min_block_size'?"]


@pytest.mark.parametrize("version", [(2, 6), *RELEASES[1:]])
def test_call_arguments_from_2_6(version: Version) -> None:
    x = torch.ones(2)
    assert call_arguments(version, (x,), {"y": x}, "cuda") == {"arg_inputs": [x], "kwarg_inputs": {"y": x}}
    assert call_arguments(version, (), {"y": x}, "cuda:1") == {
        "arg_inputs": [], "kwarg_inputs": {"y": x}, "device": "cuda:1"}


def test_call_arguments_before_2_6() -> None:
    x = torch.ones(2)
    assert call_arguments((2, 5), (x,), {"y": x}, "cuda") == {"arg_inputs": [x], "kwarg_inputs": {"y": x}}
    assert call_arguments((2, 4), (x,), {}, "cuda") == {"inputs": [x]}
    assert call_arguments((2, 2), (x,), {}, "cuda") == {"inputs": [x], "output_format": "graph_module"}
    with pytest.raises(Unsupported, match=r"keyword inputs need Torch-TensorRT >= 2.5 \(installed 2.4\)"):
        call_arguments((2, 4), (x,), {"y": x}, "cuda")
    with pytest.raises(Unsupported, match=r"keyword inputs only needs Torch-TensorRT >= 2.6"):
        call_arguments((2, 5), (), {"y": x}, "cuda")


def test_path_steps() -> None:
    dtypes = {torch.float32, torch.complex128, torch.float64, torch.int64}
    steps = path_steps((2, 13), (2, 13), {"truncate_double": True}, dtypes, 2, ["aten.scatter.src"])
    assert steps == ["complex → real (complex_graph_rewrite)", "float64 → float32", "int64 native",
                     "2 TensorRT engines", "PyTorch fallback"]
    assert path_steps((2, 2), (2, 13), {"truncate_long_and_double": True}, {torch.int64}, 1, []) == [
        "int64 → int32", "1 TensorRT engine"]
    assert path_steps((2, 13), (2, 13), {}, {torch.float32}, 0, ["aten.add.Tensor"]) == [
        "no TensorRT engine", "PyTorch fallback"]


def test_partition_summary_reads_torch_tensorrt_submodule_names() -> None:
    """A hand-made module shaped like Torch-TensorRT's output (a stand-in, not a compiled one)."""

    class Engine(torch.nn.Module):  # where Torch-TensorRT puts a TensorRT engine module
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    root = torch.nn.Module()
    root._run_on_acc_0 = Engine()
    root._run_on_gpu_1 = torch.fx.symbolic_trace(lambda x: torch.ops.aten.cumsum.default(x, 0))
    graph = torch.fx.Graph()
    unpacked = graph.call_function(torch.ops.aten.view_as_real.default, (graph.placeholder("z"),))
    engine_out = graph.call_module("_run_on_acc_0", (unpacked,))
    parts = graph.call_function(operator.getitem, (graph.call_module("_run_on_gpu_1", (engine_out,)), 0))
    graph.output(graph.call_function(torch.ops.aten.neg.default, (parts,)))
    gm = torch.fx.GraphModule(root, graph)
    assert partition_summary(gm) == Partition(1, ["aten.cumsum.default", "aten.neg.default"],
                                              ["aten.view_as_real.default"])
    assert partition_summary(object()) == Partition(0, [], [])


def test_partition_summary_without_engines_is_all_pytorch() -> None:
    program = torch.export.export(RoPE(), rope_inputs())
    split = partition_summary(program.module())
    assert split.engines == 0 and split.boundaries == []
    assert "aten.view_as_real.default" in split.fallbacks and "aten.mul.Tensor" in split.fallbacks


# The engine-cache parameters of ``torch_tensorrt.dynamo.compile``, read from the signature of
# ``compile`` in torch_tensorrt/dynamo/_compiler.py of the 2.12.1 (line 426), 2.13.0 (line 402)
# and 2.14.0 (line 438) wheels; each release also reads ``make_refittable`` from **kwargs as a
# deprecated alias of ``immutable_weights = False``.
CACHE_PARAMETERS = frozenset({"cache_built_engines", "reuse_cached_engines", "engine_cache_dir",
                              "engine_cache_size", "timing_cache_path", "immutable_weights"})


@pytest.mark.parametrize("version", [(2, 12), (2, 13), (2, 14)])
def test_cache_settings_are_what_2_12_to_2_14_accept(version: Version) -> None:
    """Against the parameter names of the real ``dynamo.compile`` (CACHE_PARAMETERS): nothing is
    dropped, and engines are built refittable, without which conversion/_conversion.py skips the
    cache ("The engine weights are immutable, so the engine will not be cached")."""
    settings, notes = cache_settings(version, "/cache")
    assert settings == {"cache_built_engines": True, "reuse_cached_engines": True,
                        "immutable_weights": False, "engine_cache_dir": "/cache",
                        "timing_cache_path": "/cache/timing_cache.bin"}
    assert drop_unaccepted(settings, CACHE_PARAMETERS, version) == (settings, [])
    assert notes == [f"engine cache on (/cache): engines are built refittable, which "
                     f"Torch-TensorRT {version[0]}.{version[1]} needs to save and reuse them"]


def test_cache_settings_without_a_directory_keep_torch_tensorrts_default() -> None:
    settings, _ = cache_settings((2, 13), None)
    assert "engine_cache_dir" not in settings and "timing_cache_path" not in settings


def test_cache_settings_before_2_6() -> None:
    assert cache_settings((2, 5), None)[0] == {"cache_built_engines": True,
                                               "reuse_cached_engines": True, "make_refittable": True}
    assert cache_settings((2, 4), "/c") == ({}, ["engine cache not used: added in Torch-TensorRT "
                                                 "2.5 (installed 2.4)"])


def test_cache_outcome_reads_torch_tensorrt_log_messages() -> None:
    """The messages are those of conversion/_conversion.py in 2.12.1, 2.13.0 and 2.14.0."""
    hit = ("Found the cached engine with hash 9f2c that corresponds to this graph. "
           "It is directly loaded.")
    saved = "Engine with hash: 77ab was successfully inserted into cache"
    immutable = "The engine weights are immutable, so the engine will not be cached"
    counts, notes = cache_outcome([hit, "unrelated", saved, hit, immutable, immutable])
    assert counts == {"from_cache": 2, "saved": 1}
    assert notes == [f"Torch-TensorRT: {immutable}"]
    assert cache_outcome([]) == ({"from_cache": 0, "saved": 0}, [])


# 2. The call, against a stand-in of the Torch-TensorRT API -----------------------------------


class StandInTorchTensorRT:
    """A STAND-IN for the ``torch_tensorrt`` module. NOT TensorRT and NOT Torch-TensorRT.

    ``dynamo.compile`` has the named parameters the real release of ``version`` has for the
    settings trtcheck passes (so unknown settings are detected as on the real one), records its
    keyword arguments, optionally emits a DeprecationWarning, and returns the exported program's
    module, which PyTorch runs. Its outputs prove nothing about TensorRT.
    """

    def __init__(self, version: Version, warning: str | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.module = standin_module("torch_tensorrt", f"{version[0]}.{version[1]}.0+standin")

        def compile(exported_program: torch.export.ExportedProgram, *args: Any, **kwargs: Any) -> Any:
            self.calls.append(kwargs)
            if kwargs.get("reuse_cached_engines"):  # as conversion/_conversion.py logs a hit
                logging.getLogger("torch_tensorrt.dynamo.conversion._conversion").info(
                    "Found the cached engine with hash 1 that corresponds to this graph. "
                    "It is directly loaded.")
            if warning:
                warnings.warn(warning, DeprecationWarning, stacklevel=2)
            return exported_program.module()

        compile.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter("exported_program", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
            + [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in self._parameters(version)]
            + [inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
        self.module.dynamo = types.SimpleNamespace(compile=compile)

    @staticmethod
    def _parameters(version: Version) -> list[str]:
        names = ["inputs", "device", "require_full_compilation", "min_block_size", "torch_executed_ops"]
        names.append("truncate_double" if version >= (2, 3) else "truncate_long_and_double")
        names += ["output_format"] if version < (2, 3) else []
        names += ["arg_inputs", "kwarg_inputs"] if version >= (2, 5) else []
        names += ["enabled_precisions"] if version < (2, 13) else []
        names += ["use_explicit_typing"] if (2, 6) <= version < (2, 13) else []
        names += sorted(CACHE_PARAMETERS) if version >= (2, 12) else []
        return names


def standin_module(name: str, version: str) -> types.ModuleType:
    """An empty stand-in module with a version and a spec (torch._dynamo looks modules up by spec)."""
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    module.__version__ = version  # type: ignore[attr-defined]
    return module


@pytest.fixture
def standin_torch_tensorrt(monkeypatch: pytest.MonkeyPatch) -> Callable[..., StandInTorchTensorRT]:
    """Install a stand-in ``torch_tensorrt`` (and ``tensorrt``) in ``sys.modules``; returns a factory."""

    def install(version: Version = (2, 13), warning: str | None = None) -> StandInTorchTensorRT:
        standin = StandInTorchTensorRT(version, warning)
        monkeypatch.setitem(sys.modules, "torch_tensorrt", standin.module)
        monkeypatch.setitem(sys.modules, "tensorrt", standin_module("tensorrt", "0.0.0+standin"))
        return standin

    return install


def test_not_installed_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch_tensorrt", None)  # makes the import fail as if absent
    assert TensorRTBackend().unavailable_reason("cuda") == NOT_INSTALLED


def test_failing_import_gives_its_last_line_quietly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Without TensorRT's libraries, Torch-TensorRT prints a diagnosis and raises a plain Exception."""
    package = tmp_path / "torch_tensorrt"
    package.mkdir()
    (package / "__init__.py").write_text(
        "print('import error when try to import _TensorRTProxyModule')\n"
        "raise Exception('import error when try to import _TensorRTProxyModule, got error\\n"
        "libnvinfer.so.10: cannot open shared object file')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "torch_tensorrt", raising=False)
    backend = TensorRTBackend()
    reason = backend.unavailable_reason("cuda")
    assert reason == ("Exception: import error when try to import _TensorRTProxyModule, got error "
                      "libnvinfer.so.10: cannot open shared object file")
    assert capsys.readouterr().out == ""
    (package / "__init__.py").write_text("__version__ = '2.13.0'\n")
    assert backend.unavailable_reason("cuda") == reason  # the import result is cached


def test_standin_without_dynamo_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch_tensorrt", standin_module("torch_tensorrt", "2.13.0+standin"))
    reason = TensorRTBackend().unavailable_reason("cuda")
    assert reason == "torch_tensorrt 2.13.0+standin has no dynamo frontend"


def test_standin_on_cpu_is_unavailable(standin_torch_tensorrt: Callable[..., StandInTorchTensorRT]) -> None:
    standin_torch_tensorrt()
    backend = TensorRTBackend()
    assert backend.unavailable_reason("cpu") == "TensorRT needs a CUDA device; this run uses cpu"
    assert backend.unavailable_reason("cuda:0") is None


def test_standin_records_the_call_for_2_13(
        standin_torch_tensorrt: Callable[..., StandInTorchTensorRT]) -> None:
    standin = standin_torch_tensorrt((2, 13))
    args = rope_inputs()
    profile = Profile("p", truncate_double=True, min_block_size=2,
                      settings={"enabled_precisions": ["float16"], "use_explicit_typing": True,
                                "optimization_level": 3})
    # The "cuda" device only labels the job: the stand-in runs on CPU tensors.
    compiled = TensorRTBackend().compile(job_for(RoPE(), args, profile))

    [call] = standin.calls
    assert call["arg_inputs"] == list(args) and call["kwarg_inputs"] == {}
    assert {k: v for k, v in call.items() if not k.endswith("inputs")} == {
        "truncate_double": True, "require_full_compilation": False, "min_block_size": 2}
    ev = compiled.evidence
    assert ev.versions["torch_tensorrt"] == "2.13.0+standin" and ev.versions["tensorrt"] == "0.0.0+standin"
    assert ev.settings == {"truncate_double": True, "require_full_compilation": False, "min_block_size": 2}
    assert [n.split(":")[0] for n in ev.notes] == [
        "enabled_precisions dropped", "use_explicit_typing dropped",
        "optimization_level dropped", "no TensorRT engine was built"]
    assert compiled.fn(*args).shape == (1, 16, 64)


def test_standin_engine_cache_settings_and_hits_are_recorded(
        standin_torch_tensorrt: Callable[..., StandInTorchTensorRT]) -> None:
    standin = standin_torch_tensorrt((2, 13))
    job = job_for(RoPE(), rope_inputs(), Profile("p", settings={"engine_cache_size": 2**30}))
    compiled = TensorRTBackend().compile(replace(job, engine_cache=True, cache_dir="/c"))
    [call] = standin.calls
    assert {k: call[k] for k in CACHE_PARAMETERS} == {
        "cache_built_engines": True, "reuse_cached_engines": True, "immutable_weights": False,
        "engine_cache_dir": "/c", "timing_cache_path": "/c/timing_cache.bin",
        "engine_cache_size": 2**30}
    assert compiled.evidence.details == {"engine_cache": {"from_cache": 1, "saved": 0}}
    assert any(n.startswith("1 of 0 TensorRT engines loaded from") for n in compiled.evidence.notes)
    off = TensorRTBackend().compile(job)  # the cache off: only the profile's own setting passed
    assert CACHE_PARAMETERS & set(standin.calls[1]) == {"engine_cache_size"}
    assert off.evidence.details == {}


def test_standin_results_are_never_reported_as_tensorrt(
        standin_torch_tensorrt: Callable[..., StandInTorchTensorRT]) -> None:
    """The stand-in builds no engine, so the evidence says every op ran in PyTorch."""
    standin_torch_tensorrt((2, 13))
    ev = TensorRTBackend().compile(job_for(RoPE(), rope_inputs())).evidence
    assert ev.engines == 0 and ev.boundaries == []
    assert "aten.mul.Tensor" in ev.fallbacks
    assert ev.path == ["complex → real (complex_graph_rewrite)", "no TensorRT engine", "PyTorch fallback"]
    assert ev.notes == ["no TensorRT engine was built: the whole graph runs in PyTorch"]


def test_standin_in_a_cpu_run_gives_skipped_rows(
        standin_torch_tensorrt: Callable[..., StandInTorchTensorRT],
        make_zoo: Callable[[dict[str, str]], Path]) -> None:
    standin = standin_torch_tensorrt((2, 13))
    root = make_zoo({"m.py": """
        import torch
        import trtcheck

        class Double(torch.nn.Module):
            def forward(self, x):
                return x * 2

        @trtcheck.model(variants=("float32",))
        def double(variant):
            return Double(), (torch.ones(3),)
        """})
    opts = Options(paths=(root,), device="cpu")
    [case] = collect(opts).cases
    [row] = [r for r in iter_rows(case, opts, {"tensorrt": TensorRTBackend()}) if isinstance(r, Row)]
    assert row.status is Status.SKIPPED
    assert row.message == "TensorRT needs a CUDA device; this run uses cpu"
    assert row.latency is None and standin.calls == []


@pytest.mark.parametrize("version", [(2, 5), (2, 8), (2, 10), (2, 11)])
def test_standin_complex_inputs_unsupported_before_2_12(
        standin_torch_tensorrt: Callable[..., StandInTorchTensorRT], version: Version) -> None:
    standin = standin_torch_tensorrt(version)
    with pytest.raises(Unsupported) as info:
        TensorRTBackend().compile(job_for(RoPE(), rope_inputs()))
    assert str(info.value) == (f"complex inputs need Torch-TensorRT >= 2.12 "
                               f"(installed {version[0]}.{version[1]}.0+standin)")
    assert standin.calls == []


@pytest.mark.parametrize("version", [(2, 12), (2, 14)])
def test_standin_complex_inputs_accepted_from_2_12(
        standin_torch_tensorrt: Callable[..., StandInTorchTensorRT], version: Version) -> None:
    standin = standin_torch_tensorrt(version)
    TensorRTBackend().compile(job_for(RoPE(), rope_inputs()))
    assert len(standin.calls) == 1


def test_standin_2_10_passes_enabled_precisions_and_records_warnings(
        standin_torch_tensorrt: Callable[..., StandInTorchTensorRT]) -> None:
    warning = "`use_explicit_typing` is deprecated."
    standin = standin_torch_tensorrt((2, 10), warning=warning)
    profile = Profile("p", settings={"enabled_precisions": ["float32"], "use_explicit_typing": False})
    ev = TensorRTBackend().compile(job_for(ScatterIds(), scatter_inputs(), profile)).evidence
    [call] = standin.calls
    assert call["enabled_precisions"] == {torch.float32} and call["use_explicit_typing"] is False
    assert ev.settings["enabled_precisions"] == ["torch.float32"]  # JSON-friendly in the record
    assert f"Torch-TensorRT warned: {warning}" in ev.notes
    assert "int64 native" in ev.path


def test_standin_2_2_gets_truncate_long_and_double_and_inputs(
        standin_torch_tensorrt: Callable[..., StandInTorchTensorRT]) -> None:
    standin = standin_torch_tensorrt((2, 2))
    args = scatter_inputs()
    ev = TensorRTBackend().compile(
        job_for(ScatterIds(), args, Profile("i", int64="int32"), device="cuda:0")).evidence
    [call] = standin.calls
    assert call["inputs"] == list(args)
    assert {k: v for k, v in call.items() if k != "inputs"} == {
        "output_format": "graph_module", "device": "cuda:0", "truncate_long_and_double": True,
        "require_full_compilation": False, "min_block_size": 1}
    assert ev.path[0] == "int64 → int32"


# 3. Real Torch-TensorRT on CUDA ---------------------------------------------------------------

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.fixture
def real_backend() -> TensorRTBackend:
    """The backend over the real Torch-TensorRT; skips with the backend's own reason where it cannot run."""
    backend = TensorRTBackend()
    reason = backend.unavailable_reason("cuda")
    if reason:
        pytest.skip(f"real Torch-TensorRT unavailable: {reason}")
    return backend


@pytest.mark.tensorrt
@needs_cuda
def test_real_rope_complex64_matches_eager(real_backend: TensorRTBackend) -> None:
    model, args = RoPE().eval().cuda(), rope_inputs("cuda")
    job = job_for(model, args)
    if not supports_complex_inputs(parse_version(sys.modules["torch_tensorrt"].__version__)):
        with pytest.raises(Unsupported, match=r"complex inputs need Torch-TensorRT >= 2\.12"):
            real_backend.compile(job)
        return
    compiled = real_backend.compile(job)
    with torch.no_grad():
        expected, actual = model(*args), compiled.fn(*args)
    torch.testing.assert_close(actual, expected, rtol=5e-3, atol=5e-3)
    assert compiled.evidence.path[0].startswith("complex → real")


@pytest.mark.tensorrt
@needs_cuda
def test_real_int64_scatter_matches_eager(real_backend: TensorRTBackend) -> None:
    model, args = ScatterIds().eval().cuda(), scatter_inputs("cuda")
    compiled = real_backend.compile(job_for(model, args))
    with torch.no_grad():
        expected, actual = model(*args), compiled.fn(*args)
    assert actual.dtype == torch.int64
    assert torch.equal(actual, expected)  # values beyond int32 survive
    assert "int64 native" in compiled.evidence.path
