"""The ``emulate`` backend: the lowering behind the Backend interface, labelled as a prediction."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest
import torch

from tests.emulation_models import TOL, ComplexConv, HashIds, LlamaRoPE, export, max_error
from trtcheck.backends.base import CompileJob
from trtcheck.backends.emulate import EmulateBackend
from trtcheck.core.profiles import BUILTIN_PROFILES, Profile
from trtcheck.core.traits import Kind
from trtcheck.errors import ConfigError, Unsupported


def _job(model: torch.nn.Module, args: tuple[torch.Tensor, ...], profile: Profile) -> CompileJob:
    return CompileJob(program=export(model, *args), args=args, kwargs={}, profile=profile,
                      device="cpu")


def test_backend_is_a_profiled_prediction() -> None:
    backend = EmulateBackend()
    assert (backend.name, backend.kind, backend.uses_profiles) == ("emulate", Kind.EMULATED, True)
    assert backend.unavailable_reason("cpu") is None


def test_compile_lowers_and_labels_the_evidence() -> None:
    model = LlamaRoPE()
    x = torch.randn(2, 8, 8)
    compiled = EmulateBackend().compile(_job(model, (x,), BUILTIN_PROFILES["default"]))
    assert max_error(compiled.fn(x), model(x)) < TOL[torch.complex64]
    evidence = compiled.evidence
    assert evidence.details["complex_subgraphs"] == 1 and evidence.path == ["complex rewrite"]
    assert evidence.details["rewritten"]["aten.mul.Tensor"] == 2
    json.dumps(asdict(evidence))


def test_profile_selects_the_int64_policy() -> None:
    ids = torch.tensor([[5, 6, 7]])
    compiled = EmulateBackend().compile(_job(HashIds(), ids, BUILTIN_PROFILES["int64_as_int32"]))
    out = compiled.fn(ids)
    assert [t.dtype for t in out] == [torch.int64, torch.int64]
    assert not torch.equal(out[1], HashIds()(ids)[1])
    assert "input ids: int64 -> int32" in compiled.evidence.boundaries


def test_seed_profile_reports_unsupported() -> None:
    job = _job(ComplexConv(), (torch.randn(1, 2, 8, dtype=torch.complex64),),
               BUILTIN_PROFILES["seed"])
    with pytest.raises(Unsupported, match="complex convolution"):
        EmulateBackend().compile(job)


def test_int32_with_full_compilation_is_a_config_error() -> None:
    profile = Profile("contradictory", int64="int32", require_full_compilation=True)
    with pytest.raises(ConfigError, match="require_full_compilation"):
        EmulateBackend().compile(_job(HashIds(), (torch.tensor([[1]]),), profile))


class _Affine(torch.nn.Module):
    """x * w + 1 with a float64 weight: float64 made inside the engine unless x is float64."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("w", torch.randn(8, dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.w + 1


class _Product(torch.nn.Module):
    def forward(self, z: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return z * w


def test_float64_without_truncate_double_is_unsupported_as_tensorrt_has_no_fp64() -> None:
    x = torch.randn(4, 8, dtype=torch.float64)
    with pytest.raises(Unsupported, match=r"TensorRT has no FP64: node .* holds float64"):
        EmulateBackend().compile(_job(_Affine(), (x,), BUILTIN_PROFILES["default"]))
    z = torch.randn(4, 8, dtype=torch.complex128)
    with pytest.raises(Unsupported, match="TensorRT has no FP64"):
        EmulateBackend().compile(_job(_Product(), (z, z), BUILTIN_PROFILES["default"]))


@pytest.mark.parametrize(("args", "returned"), [
    ((torch.randn(4, 8, dtype=torch.float64),), torch.float64),  # a float64 input: cast back
    ((torch.randn(4, 8),), torch.float32),  # float64 made inside from float32: comes back float32
    ((torch.randn(4, 8, dtype=torch.complex128),) * 2, torch.complex64),
])
def test_truncate_double_returns_the_dtypes_torch_tensorrt_returns(
        args: tuple[torch.Tensor, ...], returned: torch.dtype) -> None:
    """As observed from Torch-TensorRT 2.12–2.14's own lowering (the lowering backend's pattern
    zoo) and its ``repair_double_inputs``: outputs are cast back to float64 only around a float64
    input, and complex128 comes back complex64."""
    model = _Product() if args[0].is_complex() else _Affine()
    compiled = EmulateBackend().compile(_job(model, args, BUILTIN_PROFILES["truncate_double"]))
    out = compiled.fn(*args)
    assert out.dtype == returned
    assert max_error(out.to(model(*args).dtype), model(*args)) < 1e-4
