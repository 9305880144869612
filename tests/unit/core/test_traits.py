"""Backends declare their traits once, in the torch-free table the results layer reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from trtcheck import backends
from trtcheck.config.options import Options
from trtcheck.core.traits import NO_BACKEND, TRAITS, BackendRef, Kind, traits_of
from trtcheck.execution.run import _unknown_xfail_keys
from trtcheck.render.text import path_text
from trtcheck.results.record import Record
from trtcheck.results.rows import Evidence, Row, Slot, row_for
from trtcheck.zoo.api import ModelSpec
from trtcheck.zoo.cases import Case
from trtcheck.zoo.discover import ZooFile


def test_every_class_declares_its_entry_of_the_table() -> None:
    assert set(backends.REGISTRY) == set(TRAITS)
    for name, cls in backends.REGISTRY.items():
        assert cls.traits is TRAITS[name]
        assert (cls.name, cls.kind, cls.uses_profiles) == (name, TRAITS[name].kind,
                                                           TRAITS[name].uses_profiles)


@pytest.mark.parametrize("text", ["lowering", "lowering@2.14.0", "eager"])
def test_a_reference_is_parsed_once_and_prints_back(text: str) -> None:
    ref = BackendRef.parse(text)
    assert str(ref) == text
    assert ref.traits is TRAITS[ref.name]


def test_a_release_only_names_a_backend_that_has_releases() -> None:
    assert traits_of("lowering@2.12.1") is TRAITS["lowering"]
    assert traits_of("eager@2.12.1") is None
    assert traits_of(NO_BACKEND) is None
    assert traits_of("bogus") is None


def _row(backend: str, kind: Kind) -> Row:
    return Row("m.py::f[complex64]", "m.py", "f", "complex64", backend, "default", kind,
               evidence=Evidence(path=["complex64", "real(...,2)"]))


def test_a_release_row_keeps_its_path_column() -> None:
    record = Record({}, {}, [_row("lowering@2.14.0", Kind.LOWERED), _row("eager", Kind.MEASURED)], {})
    assert path_text(record, record.rows[0]) == "complex64+real(...,2)"
    assert path_text(record, record.rows[1]) == ""  # eager does not rewrite the graph


def test_an_xfail_key_may_name_a_release_row(tmp_path: Path) -> None:
    spec = ModelSpec("f", lambda v: None, ("complex64",),
                     xfail={"lowering@2.14.0": "that release drops view_as_real"})
    opts = Options(paths=(tmp_path,))
    assert _unknown_xfail_keys(spec, opts) == ""
    case = Case(ZooFile(tmp_path, tmp_path / "m.py"), spec, "complex64")
    failed = {"status": "fail", "message": "output is complex"}
    from trtcheck.status import Status

    failed["status"] = Status.FAIL
    released = row_for(case, Slot("lowering@2.14.0", None, Kind.LOWERED), **failed)
    other = row_for(case, Slot("lowering@2.13.0", None, Kind.LOWERED), **failed)
    assert released.status is Status.XFAIL
    assert other.status is Status.FAIL
    assert "names no variant" in _unknown_xfail_keys(
        ModelSpec("g", lambda v: None, ("x",), xfail={"eager@2.14.0": "?"}), opts)


def test_a_backend_whose_traits_need_cuda_is_unavailable_elsewhere() -> None:
    from dataclasses import replace

    from trtcheck.backends.base import Backend, Compiled, CompileJob

    class OnCudaOnly(Backend):
        traits = replace(TRAITS["eager"], needs_cuda=True)

        def compile(self, job: CompileJob) -> Compiled:  # never compiled here
            raise NotImplementedError

    reason = OnCudaOnly().unavailable_reason("cpu")
    assert reason == "the eager backend needs a CUDA device; this run uses cpu"
    assert OnCudaOnly().unavailable_reason("cuda:1") is None
    needing = [name for name, t in TRAITS.items() if t.needs_cuda]
    assert needing == ["tensorrt"]
