"""The deploy stage: Torch-TensorRT 2.13.0's real ``torch_tensorrt.save`` in the lowering host and
its real ``torch_tensorrt.load`` in a fresh loader process, both over the behaving TensorRT stand-in
(NOT TensorRT), on tests/zoos/deploy through the case runner in-process; a fault planted in the
release's exporter (tests/deploy_faults.py); and who a failed step belongs to."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from tests.helpers import TESTS
from trtcheck.backends import deploy as backend_deploy
from trtcheck.backends.lowering import lowering_backend
from trtcheck.backends.lowering.client import LoweringHost
from trtcheck.backends.lowering.code import CodeSource
from trtcheck.backends.lowering.lowering_backend import LoweringBackend
from trtcheck.backends.torch_tensorrt.frames import (
    EXPORTER,
    RUNTIME,
    SERIALIZER,
    STANDIN,
    deploy_owner,
)
from trtcheck.config.options import Options
from trtcheck.config.timing import Timing
from trtcheck.core.profiles import BUILTIN_PROFILES, Profile
from trtcheck.execution import deploy
from trtcheck.execution.case import iter_rows
from trtcheck.execution.run import collect
from trtcheck.results.rows import Row
from trtcheck.status import Status

ZOO = TESTS / "zoos" / "deploy"
QUICK = Timing(warmup=1, warmup_s=0.0, repeats=1, min_time_s=0.0, max_repeats=1)


def _rows(backend: LoweringBackend, keyword: str | None = None) -> dict[str, Row]:
    opts = Options(paths=(ZOO,), timing=QUICK, dtype_drift=False, keyword=keyword)
    return {row.case_id.split("::")[1].split("[")[0]: row for case in collect(opts).cases
            for row in iter_rows(case, opts, {"lowering": backend}) if isinstance(row, Row)}


@pytest.fixture
def fresh_loaders(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Loaders of this test's own, stopped after it."""
    monkeypatch.setattr(backend_deploy, "_LOADERS", {})
    yield
    for loader in backend_deploy._LOADERS.values():
        loader.close()


@pytest.mark.slow
def test_complex_and_int64_outputs_round_trip_and_a_dynamic_case_fails_with_an_owner(
        ttrt_releases: dict[str, Path], fresh_loaders: None) -> None:
    backend = LoweringBackend("2.13.0")
    try:
        rows = _rows(backend)
    finally:
        backend.deactivate()
    for name, kind in (("complex_output", "complex"), ("ids", "int64")):
        row = rows[name]
        assert row.status is Status.PASS, row.message
        [entry] = row.evidence.deploy
        assert entry["format"] == "exported_program" and entry["status"] == "pass"
        assert entry["kept"] == {kind: "kept"}
        assert entry["size_bytes"] > 0 and entry["load_s"] > 0 and entry["shapes"] == 1
        assert "stand-in" in entry["level"]
        for stage in ("save", "load", "deploy"):
            assert stage in row.timings
    # 2.13.0 re-exports a dynamic module on save (retrace by default), and that export
    # specializes the batch: the row says where, and whose
    dynamic = rows["dynamic_batch"]
    assert (dynamic.status, dynamic.stage) == (Status.ERROR, "save"), dynamic.message
    assert dynamic.message.startswith("deploy as exported_program: torch_tensorrt.save("
                                      f"output_format='exported_program') failed ({EXPORTER}): ")
    assert "torch_tensorrt/dynamo/_exporter.py" in dynamic.message
    assert "Constraints violated" in (dynamic.traceback or "")
    assert dynamic.evidence.deploy[0]["owner"] == EXPORTER


@pytest.mark.slow
def test_an_exporter_that_drops_the_complex_unpacking_fails_at_deploy(
        ttrt_releases: dict[str, Path], fresh_loaders: None) -> None:
    def planted(source: CodeSource, behaving: bool = False) -> LoweringHost:
        return LoweringHost(source, target=str(TESTS / "deploy_faults.py"), behaving=behaving)

    backend = LoweringBackend("2.13.0")
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(lowering_backend, "LoweringHost", planted)
            row = _rows(backend, "complex_output")["complex_output"]
    finally:
        backend.deactivate()
    assert (row.status, row.stage) == (Status.FAIL, "deploy")
    assert row.message.startswith(f"deploy as exported_program: {deploy.DIFFERS_FROM_COMPILED} "
                                  f"({EXPORTER}): ")
    assert "dtype torch.float32 != eager torch.complex64" in row.message
    [entry] = row.evidence.deploy
    assert (entry["step"], entry["owner"]) == ("compare", EXPORTER)
    assert entry["kept"] == {"complex": "out complex64[2, 8, 8] came back float32[2, 8, 8, 2]"}


def _trace(*files: str) -> str:
    frames = "".join(f'  File "{f}", line 7, in {"wrapped" if f.endswith("install.py") else "f"}'
                     '\n    raise ValueError("x")\n' for f in files)
    return f"Traceback (most recent call last):\n{frames}ValueError: x\n"


SITE = "/venv/lib/python3.11/site-packages"


@pytest.mark.parametrize(("files", "step", "owner"), [
    ((f"{SITE}/torch_tensorrt/_compile.py", f"{SITE}/torch/_export/serde/serialize.py"), "save",
     SERIALIZER),
    ((f"{SITE}/torch_tensorrt/_compile.py", f"{SITE}/torch/export/_trace.py"), "save", EXPORTER),
    ((f"{SITE}/torch/export/pt2_archive/_package.py",), "load", SERIALIZER),
    ((f"{SITE}/torch/export/__init__.py", f"{SITE}/torch_tensorrt/dynamo/runtime/_TRTEngine.py"),
     "load", RUNTIME),
    ((f"{SITE}/torch_tensorrt/dynamo/runtime/_TRTEngine.py",
      "/src/trtcheck/backends/lowering/trt/engine.py"), "run", STANDIN),
    ((f"{SITE}/torch/export/_unlift.py",), "run", EXPORTER),  # a guard the saved graph holds
    # the stand-in's CUDA shim around torch.empty, under Torch-TensorRT's runtime at save
    ((f"{SITE}/torch_tensorrt/dynamo/runtime/_TRTEngine.py",
      "/src/trtcheck/backends/lowering/trt/install.py"), "save", EXPORTER),
    ((), "load", SERIALIZER),
])
def test_a_failed_step_is_owned_by_the_frame_nearest_the_raise(files: tuple[str, ...], step: str,
                                                               owner: str) -> None:
    assert deploy_owner(_trace(*files), step) == owner


def test_a_refused_shape_is_blamed_where_the_dynamic_dimensions_were_lost() -> None:
    assert deploy._lost_dims({"saved": 0, "loaded": 0}) == (
        EXPORTER, ", which saved no dynamic dimension")
    assert deploy._lost_dims({"saved": 2, "loaded": 1}) == (
        SERIALIZER, ", which loaded 1 of the 2 dynamic dimensions saved")
    assert deploy._lost_dims({"saved": 2, "loaded": 2}) is None  # the frames decide
    assert deploy._lost_dims(None) is None


def test_kept_names_each_complex_and_int64_output_that_lost_its_dtype_or_shape() -> None:
    kept: dict[str, list[str]] = {}
    eager = {"z": torch.zeros(2, 3, dtype=torch.complex64), "ids": torch.zeros(4, dtype=torch.int64),
             "x": torch.zeros(2)}
    deploy._kept(eager, {"z": torch.zeros(2, 3, 2), "ids": torch.zeros(4, dtype=torch.int32),
                         "x": torch.zeros(2)}, kept)
    assert deploy._kept_words(kept) == {
        "complex": "out['z'] complex64[2, 3] came back float32[2, 3, 2]",
        "int64": "out['ids'] int64[4] came back int32[4]"}


def test_the_formats_come_from_the_option_else_the_profile_and_no_deploy_turns_it_off() -> None:
    profile = Profile("mine", deploy=("exported_program", "torchscript"))
    opts = Options(paths=(ZOO,))
    assert opts.deploy_formats_for(BUILTIN_PROFILES["default"]) == ("exported_program",)
    assert opts.deploy_formats_for(profile) == ("exported_program", "torchscript")
    chosen = Options(paths=(ZOO,), deploy_formats=("torchscript",))
    assert chosen.deploy_formats_for(profile) == ("torchscript",)
    assert Options(paths=(ZOO,), deploy=False).deploy_formats_for(profile) == ()
