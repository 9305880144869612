from __future__ import annotations

from pathlib import Path

import pytest
import torch

from trtcheck.errors import UsageError
from trtcheck.zoo import cases as case_module
from trtcheck.zoo.api import ModelSpec, model
from trtcheck.zoo.discover import Discovered, ZooFile


def spec(name: str, factory=None, vs=("float32", "complex64"), tags=()) -> ModelSpec:
    return ModelSpec(name=name, factory=factory or (lambda v: None), variants=vs, tags=tags)


FILE = ZooFile(Path("/zoo"), Path("/zoo/sub/m.py"))


def cases(*specs: ModelSpec, **kw) -> list[str]:
    return [c.case_id for c in case_module.expand([Discovered(FILE, specs)], **kw)]


def test_case_ids_and_variant_selection() -> None:
    assert cases(spec("a"), spec("b", vs=("int64",))) == [
        "sub/m::a[float32]", "sub/m::a[complex64]", "sub/m::b[int64]"]
    assert cases(spec("a"), spec("b", vs=("int64",)), variants=("complex64",)) == [
        "sub/m::a[complex64]"]


@pytest.mark.parametrize("expr, expected", [
    ("alpha", ["sub/m::alpha[float32]", "sub/m::alpha[complex64]"]),
    ("COMPLEX", ["sub/m::alpha[complex64]", "sub/m::rope[complex64]"]),
    ("rope and not complex", ["sub/m::rope[float32]"]),
    ("(alpha or rope) and float32", ["sub/m::alpha[float32]", "sub/m::rope[float32]"]),
    ("fast", ["sub/m::rope[float32]", "sub/m::rope[complex64]"]),
])
def test_keyword_expressions(expr: str, expected: list[str]) -> None:
    assert cases(spec("alpha"), spec("rope", tags=("fast",)), keyword=expr) == expected


@pytest.mark.parametrize("expr", ["a and", "(a", "a b", "or a"])
def test_bad_keyword_expression_is_a_usage_error(expr: str) -> None:
    with pytest.raises(UsageError):
        case_module.keyword_matcher(expr)


def test_seed_is_stable_and_distinct() -> None:
    # A fixed value guards against accidental use of Python's salted hash().
    assert case_module.seed_for("m::a[float32]") == case_module.seed_for("m::a[float32]")
    assert case_module.seed_for("m::a[float32]") != case_module.seed_for("m::a[float64]")
    assert 0 <= case_module.seed_for("x") < 2**63


def test_build_is_reproducible_per_case() -> None:
    def factory(variant: str):
        return torch.nn.Identity(), (torch.randn(4),)

    s = spec("r", factory)
    c1, c2 = (case_module.Case(FILE, s, "float32"), case_module.Case(FILE, s, "complex64"))
    torch.manual_seed(0)
    first = case_module.build(c1).args[0]
    torch.randn(100)  # disturb the global RNG between builds
    again = case_module.build(c1).args[0]
    other = case_module.build(c2).args[0]
    assert torch.equal(first, again)
    assert not torch.equal(first, other)


@pytest.mark.parametrize("returned, needle", [
    (torch.nn.Identity(), "got a Identity"),
    ((torch.nn.Identity(),), "got a tuple of 1"),
    (("not a module", ()), "expected a torch.nn.Module"),
    ((torch.nn.Identity(), 3), "as args"),
    ((torch.nn.Identity(), (), []), "as kwargs"),
])
def test_build_rejects_bad_factory_results(returned, needle: str) -> None:
    case = case_module.Case(FILE, spec("bad", lambda v: returned), "float32")
    with pytest.raises(case_module.BuildError, match=needle):
        case_module.build(case)


def test_decorator_rejects_unknown_variant_with_hint() -> None:
    with pytest.raises(ValueError, match="did you mean 'complex128'"):
        model(variants=("complex126",))


def test_xfail_most_specific_key_wins() -> None:
    s = ModelSpec(name="m", factory=lambda v: None, variants=("complex64", "float32"),
                  xfail={"complex64": "v", "tensorrt": "b", "seed": "p", "emulate:seed": "bp"})
    assert s.xfail_reason("complex64", "eager", "-") == "v"
    assert s.xfail_reason("float32", "tensorrt", "default") == "b"
    assert s.xfail_reason("complex64", "tensorrt", "default") == "b"
    assert s.xfail_reason("complex64", "tensorrt", "seed") == "p"
    assert s.xfail_reason("complex64", "emulate", "seed") == "bp"
    assert s.xfail_reason("float32", "emulate", "default") is None
