"""The ``tensorrt`` backend.

Three kinds of test:

1. the per-release version logic, as pure functions (no Torch-TensorRT needed), and the
   partition reading on hand-built graphs shaped as a release builds them;
2. what the backend does without a usable release (skipped rows, the reasons); its own code path
   on the real Torch-TensorRT releases, in one subprocess per release, is in
   tests/e2e/test_tensorrt.py;
3. real tests (``@pytest.mark.tensorrt``) that compile with the real Torch-TensorRT on CUDA and
   skip, with the reason, where it cannot run. A real ``dynamo.compile`` (no dryrun) of each
   release through the behaving TensorRT stand-in is in tests/e2e/test_tensorrt.py too.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.emulation_models import RoPE, ScatterIds, TwoComplexOutputs, rope_inputs, scatter_inputs
from trtcheck.backends.base import CompileJob
from trtcheck.backends.torch_tensorrt.compat import (
    Version,
    adapt_settings,
    cache_settings,
    call_arguments,
    complex_rewrite,
    drop_unaccepted,
    parse_version,
    path_steps,
    profile_not_applicable,
    supports_complex_inputs,
    torch_compile_options,
)
from trtcheck.backends.torch_tensorrt.inspection import (
    CheckedOutputs,
    Partition,
    output_dtypes,
    partition_summary,
    unadapted_complex,
)
from trtcheck.backends.torch_tensorrt.tensorrt_backend import NOT_INSTALLED, TensorRTBackend, cache_outcome
from trtcheck.config.options import Options
from trtcheck.core.profiles import Profile
from trtcheck.errors import Unsupported
from trtcheck.execution.case import iter_rows
from trtcheck.execution.run import collect
from trtcheck.results.rows import Row
from trtcheck.status import Status

RELEASES: list[Version] = [(2, 5), (2, 8), (2, 10), (2, 12), (2, 13), (2, 14)]
DEFAULT = Profile("default")


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


def test_a_profile_asking_nothing_of_the_release_is_not_applicable() -> None:
    """int64 = "int32" alone asks nothing of a release that runs int64 natively: its row would
    repeat the default one (and an xfail declared for it would read as an xpass)."""
    why = profile_not_applicable((2, 13), Profile("i", int64="int32"))
    assert why is not None and why.startswith('not applicable: int64 = "int32" does not apply: '
                                              "Torch-TensorRT 2.13 runs int64 natively")
    assert profile_not_applicable((2, 2), Profile("i", int64="int32")) is None  # truncates there
    assert profile_not_applicable((2, 13), Profile("i", int64="int32", truncate_double=True)) is None
    assert profile_not_applicable((2, 13), Profile("t", truncate_double=True)) is None


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
def test_enabled_precisions_across_releases(version: Version) -> None:
    settings, notes = adapt_settings(version, Profile("p", settings={"enabled_precisions": ["float16"]}))
    if version >= (2, 13):
        assert "enabled_precisions" not in settings
        assert notes == ["enabled_precisions dropped: silently ignored from Torch-TensorRT 2.13 (strongly "
                         "typed networks take precisions from the model's dtypes)"]
        return
    assert settings["enabled_precisions"] == {torch.float16}  # config names become torch dtypes
    if version >= (2, 10):  # use_explicit_typing defaults to True there and asserts on float16
        assert settings["use_explicit_typing"] is False
        assert notes == [f"use_explicit_typing = False passed: Torch-TensorRT {version[0]}.{version[1]} "
                         "defaults it to True, where enabled_precisions other than float32 raise an "
                         "AssertionError"]
    else:
        assert "use_explicit_typing" not in settings and notes == []


@pytest.mark.parametrize(("extra", "passed"), [
    ({"enabled_precisions": ["float32"]}, None),
    ({"enabled_precisions": "float32"}, None),
    ({"enabled_precisions": ["float32", "float16"]}, False),
    ({"enabled_precisions": ["float16"], "use_explicit_typing": True}, True),  # the user's choice
    ({}, None),
])
def test_use_explicit_typing_set_only_where_2_12_would_assert(extra: dict[str, object],
                                                              passed: bool | None) -> None:
    settings, _ = adapt_settings((2, 12), Profile("p", settings=extra))
    assert settings.get("use_explicit_typing") is passed


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


def test_complex_rewrite_says_when_2_14_fell_back() -> None:
    """2.14 logs "falling back to the legacy complex_graph_detection pass" when PyTorch's
    decomposition cannot run (lowering/passes/complex_decomposition_adapter.py:115)."""
    fell_back = "complex_graph_rewrite, fallen back from PyTorch's complex decomposition"
    assert complex_rewrite((2, 14), (2, 14), True, fell_back=True) == fell_back
    assert path_steps((2, 14), (2, 14), {}, {torch.complex64}, 1, [], fell_back=True)[0] == (
        f"complex → real ({fell_back})")


def test_drop_unaccepted_names_typos_and_keeps_kwargs_aliases() -> None:
    settings = {"min_blok_size": 3, "refit": True, "min_block_size": 1}
    kept, notes = drop_unaccepted(settings, {"min_block_size", "truncate_double"}, (2, 13))
    assert kept == {"refit": True, "min_block_size": 1}
    assert notes == ["min_blok_size dropped: not a parameter of torch_tensorrt.dynamo.compile in "
                     "Torch-TensorRT 2.13, which would silently ignore it; did you mean 'min_block_size'?"]


def test_torch_compile_options_are_the_profile_s_settings_less_what_compilation_settings_lack() -> None:
    """torch.compile's options reach Torch-TensorRT's parse_dynamo_kwargs, which keeps its
    CompilationSettings' fields and silently drops the rest: dropped here with a note; a
    require_full_compilation it sets to False there is said to do nothing."""
    profile = Profile("j", require_full_compilation=True, frontend="torch_compile",
                      settings={"min_blok_size": 3, "debug": True})
    fields = {"min_block_size", "truncate_double", "require_full_compilation"}
    job = CompileJob(None, (torch.ones(2),), {}, profile, "cuda", module=torch.nn.ReLU())
    options, notes = torch_compile_options((2, 13), "2.13.0", job, fields)
    assert options == {"require_full_compilation": True, "min_block_size": 1,
                       "truncate_double": False, "debug": True}
    assert notes == [
        "require_full_compilation does nothing on the torch.compile front-end: Torch-TensorRT "
        "sets it to False there (a graph break leaves PyTorch between graphs whatever it says)",
        "min_blok_size dropped: not a torch.compile option (a CompilationSettings field) in "
        "Torch-TensorRT 2.13, which would silently ignore it; did you mean 'min_block_size'?"]
    complex_job = CompileJob(None, (torch.ones(2, dtype=torch.complex64),), {}, profile, "cuda",
                             module=torch.nn.Identity())
    with pytest.raises(Unsupported, match=r"complex inputs need Torch-TensorRT >= 2\.12"):
        torch_compile_options((2, 11), "2.11.0", complex_job, fields)


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


def test_partition_summary_counts_2_14_view_as_real_in_a_pytorch_block_as_a_boundary() -> None:
    """2.14 on torch >= 2.14 (PyTorch's complex decomposition) leaves ``view_as_real`` of a complex
    input in the graph, where TensorRT has no converter for it (2.14.0's
    lowering/passes/complex_decomposition_adapter.py:220), so the partitioner puts it in a
    ``_run_on_gpu_*`` block of its own; the input placeholder keeps its name, so the
    ``*_unpacked_complex`` adapter of dynamo/_compiler.py:939 is not added. torch 2.14 exists here
    only as a CUDA build, so this graph is built by hand the way that code builds it; the engine
    is a plain module standing in for a TensorRT engine."""

    class Engine(torch.nn.Module):  # a converted TensorRT block: not a GraphModule
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    root = torch.nn.Module()
    root._run_on_gpu_0 = torch.fx.symbolic_trace(lambda z: torch.ops.aten.view_as_real.default(z))
    root._run_on_acc_1 = Engine()
    graph = torch.fx.Graph()
    unpacked = graph.call_module("_run_on_gpu_0", (graph.placeholder("z"),))
    engine_out = graph.call_module("_run_on_acc_1", (unpacked,))
    graph.output((graph.call_function(torch.ops.aten.view_as_complex.default, (engine_out,)),))
    split = partition_summary(torch.fx.GraphModule(root, graph))
    assert split == Partition(1, [], ["aten.view_as_complex.default", "aten.view_as_real.default"])


def test_partition_summary_does_not_count_graph_module_blocks_as_engines() -> None:
    """A ``_run_on_acc_*`` block still a GraphModule (a dryrun) runs in PyTorch."""
    root = torch.nn.Module()
    root._run_on_acc_0 = torch.fx.symbolic_trace(lambda x: torch.ops.aten.cumsum.default(x, 0))
    graph = torch.fx.Graph()
    graph.output(graph.call_module("_run_on_acc_0", (graph.placeholder("x"),)))
    assert partition_summary(torch.fx.GraphModule(root, graph)) == Partition(0, ["aten.cumsum.default"], [])


def test_unadapted_complex_outputs_are_named() -> None:
    expected = [torch.complex64, torch.complex128, torch.float32, torch.complex64]
    actual = [torch.zeros(3, 2), torch.zeros(3, 2, dtype=torch.float64), torch.zeros(3, 2),
              torch.zeros(3, dtype=torch.complex64)]
    assert unadapted_complex(expected, actual, "why") == [
        "Torch-TensorRT returned float32 (..., 2) for a complex64 output out[0]: why",
        "Torch-TensorRT returned float64 (..., 2) for a complex128 output out[1]: why"]


def test_checked_outputs_notes_on_the_first_call_only() -> None:
    program = torch.export.export(TwoComplex(), (torch.randn(2, dtype=torch.complex64),))
    assert output_dtypes(program) == [torch.complex64, torch.complex64]
    notes: list[str] = []
    fn = CheckedOutputs(lambda z: (torch.view_as_real(z), z), output_dtypes(program), notes)
    z = torch.randn(2, dtype=torch.complex64)
    fn(z)
    fn(z)
    assert [n.split(":")[0] for n in notes] == [
        "Torch-TensorRT returned float32 (..., 2) for a complex64 output out[0]"]


class TwoComplex(torch.nn.Module):
    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return z * 2, z.conj().resolve_conj()


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


# 2. The backend's own code on the real Torch-TensorRT releases (dryrun, no TensorRT) ----------


def test_not_installed_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch_tensorrt", None)  # makes the import fail as if absent
    assert TensorRTBackend().unavailable_reason("cuda") == NOT_INSTALLED


def test_without_a_gpu_the_reason_is_the_device_not_an_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Installing Torch-TensorRT is no advice on a machine without a GPU."""
    monkeypatch.setitem(sys.modules, "torch_tensorrt", None)
    assert TensorRTBackend().unavailable_reason("cpu") == (
        "the tensorrt backend needs a CUDA device; this run uses cpu")


def test_failing_import_gives_its_last_line_quietly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Without TensorRT's libraries, Torch-TensorRT prints a diagnosis and raises a plain Exception
    (a package on disk that fails the way the real one does, not a stand-in of its API)."""
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


def test_release_without_dynamo_is_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "torch_tensorrt").mkdir()
    (tmp_path / "torch_tensorrt" / "__init__.py").write_text("__version__ = '1.4.0'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "torch_tensorrt", raising=False)
    try:
        assert TensorRTBackend().unavailable_reason("cuda") == "torch_tensorrt 1.4.0 has no dynamo frontend"
    finally:
        del sys.modules["torch_tensorrt"]  # imported for real: later tests expect it absent


def test_unavailable_backend_gives_skipped_rows(monkeypatch: pytest.MonkeyPatch,
                                                make_zoo: Callable[[dict[str, str]], Path]) -> None:
    monkeypatch.setitem(sys.modules, "torch_tensorrt", None)
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
    opts = Options(paths=(root,), devices=("cpu",))
    [case] = collect(opts).cases
    [row] = [r for r in iter_rows(case, opts, {"tensorrt": TensorRTBackend()}) if isinstance(r, Row)]
    assert row.status is Status.SKIPPED
    assert row.message == "the tensorrt backend needs a CUDA device; this run uses cpu"
    assert row.latency is None


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


@pytest.mark.tensorrt
@needs_cuda
def test_real_compiled_module_is_timed_as_a_user_calls_it(real_backend: TensorRTBackend) -> None:
    """Runs only where TensorRT's builder exists (not on the machines this project is built on):
    what is timed is the module ``dynamo.compile`` returned, with trtcheck's output check left
    to the compared callable."""
    model, args = TwoComplexOutputs().eval().cuda(), tuple(
        torch.randn(4, 8, dtype=torch.complex64, device="cuda") for _ in range(2))
    if not supports_complex_inputs(parse_version(sys.modules["torch_tensorrt"].__version__)):
        pytest.skip("complex inputs need Torch-TensorRT >= 2.12")
    compiled = real_backend.compile(job_for(model, args))
    assert isinstance(compiled.fn, CheckedOutputs)
    assert compiled.called is compiled.fn.module and isinstance(compiled.called, torch.nn.Module)
