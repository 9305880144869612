"""Torch-TensorRT's front-ends, registered once: what each tells the backends, reduce and profiles."""

from __future__ import annotations

from trtcheck.backends import REGISTRY
from trtcheck.backends.lowering.host import COMPILES
from trtcheck.core.frontends import EXPORT, FRONT_ENDS, FRONTENDS, TORCH_COMPILE
from trtcheck.core.profiles import BUILTIN_PROFILES


def test_every_registered_front_end_is_run_by_known_backends_and_the_lowering_host() -> None:
    assert FRONTENDS == ("export", "torch_compile") and set(COMPILES) == set(FRONT_ENDS)
    for front_end in FRONT_ENDS.values():
        assert set(front_end.backends) <= set(REGISTRY), front_end.name
    assert BUILTIN_PROFILES["torch_compile"].front_end is TORCH_COMPILE
    assert BUILTIN_PROFILES["default"].front_end is EXPORT


def test_a_backend_asks_the_front_end_whether_it_runs_it() -> None:
    """emulate does not run torch_compile; lowering's graph level does not; both run export;
    a backend compiles the user's module where the profile's front-end does and it runs it."""
    assert EXPORT.not_applicable("emulate") is None
    assert TORCH_COMPILE.not_applicable("emulate") == (
        "not applicable: emulate does not run Torch-TensorRT's torch_compile front-end, which "
        "tensorrt and lowering run")
    assert "--lowering-dryrun" in (TORCH_COMPILE.not_applicable("lowering", graph_level=True) or "")
    assert TORCH_COMPILE.not_applicable("lowering") is None
    profile = BUILTIN_PROFILES["torch_compile"]
    assert [REGISTRY[n]().compiles_module(profile) for n in ("tensorrt", "lowering", "emulate")] == [
        True, True, False]
    assert not REGISTRY["lowering"]().compiles_module(BUILTIN_PROFILES["default"])
    assert REGISTRY["inductor"]().compiles_module(BUILTIN_PROFILES["default"])


def test_reduce_asks_the_front_end_for_its_call_and_whether_a_row_can_be_cut() -> None:
    settings = {"min_block_size": 1}
    assert TORCH_COMPILE.compile_call(settings).startswith('torch.compile(\n    module,\n')
    assert EXPORT.compile_call(settings, dryrun=True).startswith("torch_tensorrt.dynamo.compile(")
    assert "torch.compile(module" in TORCH_COMPILE.repro_lines
    assert "torch.export.export" in EXPORT.repro_lines
    breaks = {"graph_breaks": ["generic_jump at gate.py:14"]}
    assert EXPORT.cannot_reduce(breaks) is None and TORCH_COMPILE.cannot_reduce({}) is None
    assert (TORCH_COMPILE.cannot_reduce(breaks) or "").startswith(
        "Dynamo handed Torch-TensorRT the model in pieces, split at 1 graph break "
        "(generic_jump at gate.py:14)")
