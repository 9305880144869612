"""The behaving stand-in's refit (:mod:`trtcheck.backends.lowering.trt.refit`): NOT TensorRT.

In-process: which weights a refittable engine lists, the refitter's rejections and missing weights,
a weight-stripped plan that holds no weight values and cannot run until refitted, and the
serialization flags. Torch-TensorRT's engine cache refitting a cached engine through it, for each
release, is in ``tests/e2e/test_tensorrt.py``.
"""

from __future__ import annotations

import numpy as np
import torch

from tests.unit.backends.standin_logger import Recorder
from trtcheck.backends.lowering.trt import engine, refit
from trtcheck.backends.lowering.trt.types import (
    BuilderFlag,
    DataType,
    ElementWiseOperation,
    SerializationFlag,
    Severity,
    Weights,
    WeightsRole,
)

MARK = 1234.5  # the built weights' value, looked for in the serialized plans


def build(*flags: BuilderFlag) -> tuple[engine.ICudaEngine, Recorder]:
    """``y = conv(x) + w`` with an int64 ``idx`` constant beside: an engine built with ``flags``."""
    logger = Recorder()
    builder = engine.Builder(logger)
    net = builder.create_network(1 << 1)
    x = net.add_input("x", DataType.FLOAT, (1, 1, 4, 4))
    conv = net.add_convolution_nd(x, 2, (3, 3), Weights(np.full(18, MARK, dtype=np.float32)),
                                  Weights(np.zeros(2, dtype=np.float32)))
    conv.name = "conv"
    w = net.add_constant((1, 2, 2, 2), Weights(np.full(8, MARK, dtype=np.float32)))
    w.name = "w"
    idx = net.add_constant((1,), Weights(np.array([0], dtype=np.int64)))
    idx.name = "idx"
    total = net.add_elementwise(conv.get_output(0), w.get_output(0), ElementWiseOperation.SUM)
    net.mark_output(total.get_output(0))
    net.mark_output(idx.get_output(0))
    config = builder.create_builder_config()
    for flag in flags:
        config.set_flag(flag)
    blob = builder.build_serialized_network(net, config)
    assert blob is not None
    made = engine.Runtime(logger).deserialize_cuda_engine(blob)
    assert made is not None
    return made, logger


def run(cuda_engine: engine.ICudaEngine, x: torch.Tensor) -> torch.Tensor | None:
    """The engine's first output on ``x``, None when the run fails."""
    context = cuda_engine.create_execution_context()
    out, idx = torch.empty(1, 2, 2, 2), torch.empty(1, dtype=torch.int64)
    for i, tensor in enumerate((x, out, idx)):
        context.set_tensor_address(cuda_engine.get_tensor_name(i), tensor.data_ptr())
    return out if context.execute_async_v3(0) else None


def reload(cuda_engine: engine.ICudaEngine, *flags: SerializationFlag) -> tuple[engine.ICudaEngine, bytes]:
    config = cuda_engine.create_serialization_config()
    for flag in flags:
        config.set_flag(flag)
    blob = bytes(cuda_engine.serialize_with_config(config))
    made = engine.Runtime(cuda_engine.logger).deserialize_cuda_engine(blob)
    assert made is not None
    return made, blob


def expected(x: torch.Tensor, kernel: float, bias: float, w: float) -> torch.Tensor:
    conv = torch.nn.functional.conv2d(x, torch.full((2, 1, 3, 3), kernel), torch.full((2,), bias))
    return conv + w


def refit_all(cuda_engine: engine.ICudaEngine, logger: Recorder, kernel: float, w: float) -> bool:
    refitter = refit.Refitter(cuda_engine, logger)
    for name, value, count in (("conv KERNEL", kernel, 18), ("conv BIAS", 0.0, 2), ("w CONSTANT", w, 8)):
        assert refitter.set_named_weights(name, Weights(np.full(count, value, dtype=np.float32)))
    return refitter.refit_cuda_engine()


def test_refittable_follows_the_refit_flags_and_float_weights_are_listed_by_layer_and_role() -> None:
    plain, logger = build()
    assert not plain.refittable
    refitter = refit.Refitter(plain, logger)
    assert refitter.get_all_weights() == [] and not refitter.refit_cuda_engine()
    assert logger.messages[0][0] == Severity.ERROR and "not refittable" in logger.messages[0][1]
    for flag in (BuilderFlag.REFIT, BuilderFlag.REFIT_IDENTICAL):
        made, logger = build(flag)
        refitter = refit.Refitter(made, logger)
        assert made.refittable and logger.messages == []
        # idx, an int64 constant, holds an index: not refittable
        assert refitter.get_all_weights() == ["conv KERNEL", "conv BIAS", "w CONSTANT"]
        assert refitter.get_all() == (["conv", "conv", "w"], [WeightsRole.KERNEL, WeightsRole.BIAS,
                                                              WeightsRole.CONSTANT])
        assert refitter.get_missing_weights() == []


def test_a_refit_replaces_the_named_weights_and_rejects_a_wrong_name_count_or_type() -> None:
    made, logger = build(BuilderFlag.REFIT)
    x = torch.randn(1, 1, 4, 4)
    torch.testing.assert_close(run(made, x), expected(x, MARK, 0.0, MARK))
    refitter = refit.Refitter(made, logger)
    assert not refitter.set_named_weights("conv SCALE", Weights(np.ones(18, dtype=np.float32)))
    assert not refitter.set_named_weights("w CONSTANT", Weights(np.ones(7, dtype=np.float32)))
    assert not refitter.set_named_weights("w CONSTANT", Weights(np.ones(8, dtype=np.int32)))
    assert [m for s, m in logger.messages if s == Severity.ERROR] == [
        "IRefitter::setNamedWeights: Error Code 3: API Usage Error (conv SCALE is not the name of a "
        "refittable weight of the engine)",
        "IRefitter::setNamedWeights: Error Code 3: API Usage Error (w CONSTANT: weights of FLOAT x 7 for "
        "weights of FLOAT x 8)",
        "IRefitter::setNamedWeights: Error Code 3: API Usage Error (w CONSTANT: weights of INT32 x 8 for "
        "weights of FLOAT x 8)"]
    # Weights the engine holds need not all be given: the rest keep their values.
    assert refitter.set_named_weights("w CONSTANT", Weights(np.full(8, -2.0, dtype=np.float32)))
    assert refitter.get_named_weights("w CONSTANT").tensor.tolist() == [-2.0] * 8
    assert refitter.refit_cuda_engine()
    torch.testing.assert_close(run(made, x), expected(x, MARK, 0.0, -2.0))


def test_excluded_weights_leave_the_plan_and_the_engine_runs_only_once_refitted() -> None:
    made, logger = build(BuilderFlag.REFIT)
    mark = np.full(8, MARK, dtype=np.float32).tobytes()
    full, full_blob = reload(made, SerializationFlag.INCLUDE_REFIT)
    stripped, blob = reload(made, SerializationFlag.EXCLUDE_WEIGHTS)
    assert mark in full_blob and mark not in blob and len(blob) < len(full_blob)
    assert full.refittable and stripped.refittable
    x = torch.randn(1, 1, 4, 4)
    assert run(stripped, x) is None
    assert "stripped of 3 refittable weights, conv KERNEL first: refit them before inference" in (
        logger.messages[-1][1])
    refitter = refit.Refitter(stripped, logger)
    assert refitter.get_missing_weights() == ["conv KERNEL", "conv BIAS", "w CONSTANT"]
    assert refitter.set_named_weights("w CONSTANT", Weights(np.ones(8, dtype=np.float32)))
    assert refitter.get_missing_weights() == ["conv KERNEL", "conv BIAS"]
    assert not refitter.refit_cuda_engine()
    assert logger.messages[-1][1] == ("IRefitter::refitCudaEngine: Error Code 3: API Usage Error (2 weights "
                                      "missing: conv KERNEL, conv BIAS)")
    assert refit_all(stripped, logger, kernel=0.5, w=3.0)
    torch.testing.assert_close(run(stripped, x), expected(x, 0.5, 0.0, 3.0))
    # The refitted engine serialized whole carries the new weights and stays refittable.
    again, _ = reload(stripped, SerializationFlag.INCLUDE_REFIT)
    assert again.refittable
    torch.testing.assert_close(run(again, x), expected(x, 0.5, 0.0, 3.0))


def test_without_include_refit_a_serialized_engine_is_no_longer_refittable() -> None:
    made, _ = build(BuilderFlag.REFIT)
    assert not reload(made)[0].refittable
    assert engine.Runtime().deserialize_cuda_engine(made.serialize()).refittable  # serialize() keeps it


def test_strip_plan_builds_a_plan_without_its_refittable_weights() -> None:
    made, logger = build(BuilderFlag.REFIT, BuilderFlag.STRIP_PLAN)
    x = torch.randn(1, 1, 4, 4)
    assert run(made, x) is None
    assert refit.Refitter(made, logger).get_missing_weights() == ["conv KERNEL", "conv BIAS", "w CONSTANT"]
    assert refit_all(made, logger, kernel=2.0, w=-1.0)
    torch.testing.assert_close(run(made, x), expected(x, 2.0, 0.0, -1.0))
    # STRIP_PLAN without a refit flag strips nothing: no weight is refittable.
    plain, _ = build(BuilderFlag.STRIP_PLAN)
    torch.testing.assert_close(run(plain, x), expected(x, MARK, 0.0, MARK))
