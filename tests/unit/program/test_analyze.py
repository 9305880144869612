"""analyze_program: complex subgraphs, dtype paths and the seed's limitations, without compiling."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch
from torch import nn

from tests.emulation_models import (
    ComplexConv,
    HashIds,
    LlamaRoPE,
    PairParam,
    SeedRoPE,
    complex_output,
    export,
    standalone_view_as_complex,
)
from trtcheck.core.profiles import Profile
from trtcheck.emulation import lower
from trtcheck.errors import Unsupported
from trtcheck.program.analyze import analyze_program


def _analyze(model: Any, *args: Any) -> dict[str, Any]:
    result = analyze_program(export(model, *args), args, {})
    json.dumps(result)
    return result


def _prediction(result: dict[str, Any], limitation: str) -> dict[str, Any]:
    return next(p for p in result["predictions"] if p["limitation"] == limitation)


def test_seed_rope_example() -> None:
    result = _analyze(SeedRoPE(), torch.randn(1, 4, 8), torch.randn(1, 4, 4, dtype=torch.complex64))
    (subgraph,) = result["complex"]["subgraphs"]
    assert subgraph["anchors"] == ["view_as_real"]
    assert subgraph["nodes"] == ["freqs", "view_as_complex", "mul"]
    assert subgraph["inputs"] == [
        {"node": "freqs", "kind": "user_input", "dtype": "complex64"},
        {"node": "reshape", "kind": "computed", "dtype": "float32"},
    ]
    assert all(op["seed"] and op["broad"] == "rewrite" for op in result["complex"]["ops"])
    assert result["complex"]["seed"] == {"supported": True, "reasons": []}
    assert result["predictions"] == []
    assert result["path"] == ["complex rewrite"]


def test_llama_rope_shares_one_subgraph_through_the_buffer() -> None:
    result = _analyze(LlamaRoPE(), torch.randn(2, 8, 8))
    (subgraph,) = result["complex"]["subgraphs"]
    assert sorted(subgraph["anchors"]) == ["view_as_real", "view_as_real_1"]
    assert {"node": "b_freqs_cis", "kind": "buffer", "dtype": "complex64"} in subgraph["inputs"]
    unsupported = {op["op"] for op in result["complex"]["ops"] if not op["seed"]}
    assert unsupported == {"aten.slice.Tensor", "aten.view.default"}
    patterns = _prediction(result, "op outside the supported patterns")
    assert patterns["broad"] == "slice_1: rewrite; view_2: rewrite"
    assert patterns["cite"].startswith("Supported Patterns:")


class Mixed(nn.Module):
    """A complex convolution, a real (d, 2) parameter and int64 ids."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = ComplexConv()
        self.pairs = PairParam()

    def forward(self, x: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.conv(x), self.pairs(x[0, 0, :4]), ids * 3


def test_conv_pairs_and_int64_beyond_int32() -> None:
    ids = torch.tensor([2**40, 3, -(2**33)])
    result = _analyze(Mixed(), torch.randn(1, 2, 8, dtype=torch.complex64), ids)
    conv = _prediction(result, "complex convolution or batch norm")
    assert conv["nodes"] == ["conv1d"] and conv["broad"] == "conv1d: fallback"
    assert "No support for complex convolution" in conv["cite"]
    assert result["complex"]["broad"]["fallbacks"] == ["aten.conv1d.default (node conv1d)"]
    pairs = _prediction(result, "real (d, 2) parameter")
    assert pairs["nodes"] == ["p_pairs_pairs"]
    assert pairs["seed"] == "left alone: its dtype is real (consumed by a complex op)"
    assert "meta[\"val\"].dtype is complex64 or complex128" in pairs["cite"]
    assert result["int64"]["out_of_int32_range"] == [{"name": "ids", "count": 2}]
    assert result["int64"]["inputs"] == [{"name": "ids", "kind": "user_input"}]
    assert result["int64"]["outputs"] == [{"output": 2, "node": "mul_1"}]
    assert result["path"] == ["complex rewrite", "int64"]


def test_complex_output_and_standalone_view_as_complex() -> None:
    result = _analyze(complex_output, torch.randn(3, dtype=torch.complex64),
                      torch.randn(3, dtype=torch.complex64))
    (subgraph,) = result["complex"]["subgraphs"]
    assert subgraph["anchors"] == []
    output = _prediction(result, "complex output without view_as_real")
    assert output["nodes"] == ["mul"]
    assert "returned directly" in output["cite"]

    result = _analyze(standalone_view_as_complex, torch.randn(3, 2))
    standalone = _prediction(result, "standalone view_as_complex")
    assert standalone["nodes"] == ["view_as_complex"]
    assert "paired with view_as_real" in standalone["cite"]


def test_float64_paths() -> None:
    result = _analyze(lambda x, c: (x.sum(), torch.view_as_real(c * 2)),
                      torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.complex128))
    assert result["float64"]["inputs"] == [{"name": "args_0", "kind": "user_input"}]
    assert [o["output"] for o in result["float64"]["outputs"]] == [0, 1]
    throughput = _prediction(result, "complex128/float64 throughput")
    assert throughput["nodes"] == ["args_0", "args_1"]
    assert "limited float64 throughput" in throughput["cite"]
    assert result["path"] == ["complex rewrite", "float64"]


def test_float64_computed_inside_names_the_nodes() -> None:
    result = _analyze(lambda x: x.double().sum(), torch.randn(3))
    assert _prediction(result, "complex128/float64 throughput")["nodes"] == ["to", "sum_1"]


def test_int64_only_model() -> None:
    result = _analyze(HashIds(), torch.tensor([[1, 2]]))
    assert result["complex"] == {"subgraphs": [], "ops": [], "seed": {"supported": True,
                                 "reasons": []}, "broad": {"fallbacks": []}}
    assert {op["node"] for op in result["int64"]["ops"]} >= {"mul", "arange", "cumsum"}
    assert result["int64"]["out_of_int32_range"] == []
    assert result["path"] == ["int64"]


CASES = [
    (SeedRoPE(), (torch.randn(1, 4, 8), torch.randn(1, 4, 4, dtype=torch.complex64))),
    (LlamaRoPE(), (torch.randn(2, 8, 8),)),
    (Mixed(), (torch.randn(1, 2, 8, dtype=torch.complex64), torch.tensor([1]))),
    (complex_output, (torch.randn(3, dtype=torch.complex64),
                      torch.randn(3, dtype=torch.complex64))),
    (standalone_view_as_complex, (torch.randn(3, 2),)),
    (lambda x: torch.view_as_real(torch.fft.fft(x) * 1j), (torch.randn(8),)),
]


@pytest.mark.parametrize(("model", "args"), CASES)
def test_analysis_agrees_with_lowering(model: Any, args: tuple[Any, ...]) -> None:
    program = export(model, *args)
    result = analyze_program(program, args, {})
    try:
        lower(program, Profile("seed", coverage="seed"))
        seed_error = None
    except Unsupported as exc:
        seed_error = str(exc)
    reasons = result["complex"]["seed"]["reasons"]
    assert seed_error == (reasons[0] if reasons else None)
    evidence = lower(program, Profile("default")).evidence
    assert evidence["fallbacks"] == result["complex"]["broad"]["fallbacks"]
    assert evidence["path"] == result["path"]
    assert evidence["complex_subgraphs"] == len(result["complex"]["subgraphs"])

