"""What the behaving stand-in does where it cannot predict, or must choose, in-process: a missing
TensorRT API, a layer attribute it does not model, a layer its code cannot run and an output that
is not what the layer's rules inferred are prediction gaps (a row ``skipped``, never a
Torch-TensorRT bug); a scatter of mismatched ranks is refused at build; its documented choices are
recorded; the gap and a refused build cross from the lowering host with their type and evidence."""

from __future__ import annotations

import pytest
import torch

from tests.unit.backends.standin_logger import network
from trtcheck.backends.lowering.trt import assumptions
from trtcheck.backends.lowering.trt.catalogue import LAYERS
from trtcheck.backends.lowering.trt.layers.loop import run_layers, run_one
from trtcheck.backends.lowering.trt.network import (
    StandInFailed,
    StandInIgnores,
    StandInLacks,
    StandInMismatch,
    standin_gap,
)
from trtcheck.backends.lowering.trt.types import DataType, ScatterMode, Severity
from trtcheck.errors import BuildRefused, PredictionGap, found_in
from trtcheck.process import Failure


def test_a_missing_api_is_an_attribute_error_and_a_gap_named_shortly() -> None:
    _, net, _ = network()
    with pytest.raises(StandInLacks) as raised:
        net.add_einsum  # noqa: B018
    assert isinstance(raised.value, AttributeError) and isinstance(raised.value, PredictionGap)
    assert raised.value.reason == "the TensorRT stand-in lacks INetworkDefinition.add_einsum"
    layer = net.add_identity(net.add_input("x", DataType.FLOAT, (2,)))
    try:
        layer.no_such_setting  # noqa: B018
    except AttributeError as exc:
        wrapped = RuntimeError("a converter failed")
        wrapped.__cause__ = exc
        gap = standin_gap(wrapped)
    assert gap is not None and gap.reason == "the TensorRT stand-in lacks IIdentityLayer.no_such_setting"
    assert standin_gap(AttributeError("'str' object has no attribute 'x'")) is None


def test_a_scatter_of_other_ranks_is_refused_at_build_not_at_run() -> None:
    builder, net, logger = network()
    data = net.add_input("data", DataType.FLOAT, (3, 5))
    index = net.add_input("index", DataType.INT32, (3, 1))
    updates = net.add_input("updates", DataType.FLOAT, (1,))
    net.mark_output(net.add_scatter(data, index, updates, ScatterMode.ELEMENT).get_output(0))
    assert builder.build_serialized_network(net, builder.create_builder_config()) is None
    assert any(s == Severity.ERROR and "IScatterLayer in ELEMENT mode needs data, indices and updates "
               "of one rank, got data (3, 5), indices (3, 1), updates (1,)" in m for s, m in logger.messages)


def test_a_layer_the_stand_in_cannot_run_is_its_own_failure() -> None:
    _, net, _ = network()
    x = net.add_input("x", DataType.FLOAT, (2, 3))
    layer = net.add_identity(x)
    object.__setattr__(layer, "run", lambda ins: [ins[0].view(7)])  # the stand-in's own code breaking
    with pytest.raises(StandInFailed, match=r"could not run layer '\(Identity\) \[0\]' "
                                            r"\(IIdentityLayer\): RuntimeError: shape '\[7\]'"):
        run_layers([layer], {x.uid: torch.zeros(2, 3)})


def test_an_attribute_a_layer_does_not_model_is_a_named_gap_and_a_declared_one_is_kept() -> None:
    _, net, _ = network()
    x = net.add_input("x", DataType.FLOAT, (2, 3))
    gather = net.add_gather(x, net.add_input("i", DataType.INT32, (2,)), 0)
    gather.axis = 1  # modelled
    gather.name = "picked"  # every layer's
    with pytest.raises(StandInIgnores) as raised:
        gather.blend_factor = 0.5
    assert isinstance(raised.value, PredictionGap) and not isinstance(raised.value, AttributeError)
    assert raised.value.reason == "the TensorRT stand-in does not model IGatherLayer.blend_factor"
    assert "'blend_factor' of IGatherLayer (layer 'picked')" in str(raised.value)
    assert standin_gap(RuntimeError("converter")) is None
    wrapped = RuntimeError("a converter failed")
    wrapped.__cause__ = raised.value
    assert standin_gap(wrapped) is raised.value
    attention = net.add_attention(x, x, x, 1, False)
    attention.decomposable = True  # declared harmless, with why
    assert "same" in LAYERS[type(attention)].ignored["decomposable"]
    with pytest.raises(StandInIgnores, match="normalization_quantize_to_type"):
        attention.normalization_quantize_to_type = DataType.FP8  # changes the result: not modelled


def test_an_output_that_is_not_what_infer_said_is_a_gap_named_with_both() -> None:
    _, net, _ = network()
    x = net.add_input("x", DataType.FLOAT, (2, 3))
    layer = net.add_identity(x)
    metas = {layer.outputs[0].uid: layer.outputs[0].meta}
    assert run_one(layer, [torch.zeros(2, 3)], metas)[0].shape == (2, 3)
    with pytest.raises(StandInMismatch, match=r"'\(Identity\) \[0\]' \(IIdentityLayer\) ran output 0 as "
                                               r"\(2, 3\) int32, where its shape and type rules inferred "
                                               r"\(2, 3\) FLOAT"):
        run_one(layer, [torch.zeros(2, 3, dtype=torch.int32)], metas)
    with pytest.raises(StandInMismatch, match=r"as \(3, 2\) float32"):
        run_one(layer, [torch.zeros(3, 2)], metas)


def test_a_stand_in_choice_is_recorded_while_asked_for() -> None:
    class Layer:
        name = "g"

    assumptions.assume(assumptions.OUT_OF_BOUNDS, Layer())  # nobody listening: nothing kept
    with assumptions.recorded() as made:
        assumptions.assume(assumptions.MASKED_ROW, Layer())
        assumptions.assume(assumptions.MASKED_ROW, Layer())
    assert made == [(assumptions.MASKED_ROW.text, "g")]


def test_a_varied_layer_puts_its_choice_s_other_value() -> None:
    class Layer:
        name = "g"

    assert assumptions.assume(assumptions.OUT_OF_BOUNDS, Layer()) == 0.0
    with assumptions.varied("g"):
        assert assumptions.assume(assumptions.OUT_OF_BOUNDS, Layer()) == 1.0
    assert assumptions.assume(assumptions.OUT_OF_BOUNDS, Layer()) == 0.0


@pytest.mark.parametrize("kind", [PredictionGap, BuildRefused])
def test_a_row_s_error_crosses_from_a_child_with_its_type_and_evidence(kind: type[Exception]) -> None:
    exc = kind("why")
    exc.evidence = {"notes": ["n"]}  # type: ignore[attr-defined]
    crossed = Failure.of(exc).exception()
    assert type(crossed) is kind and str(crossed) == "why"
    assert crossed.evidence == {"notes": ["n"]}  # type: ignore[attr-defined]
    outer = RuntimeError("Torch-TensorRT wrapped it")
    outer.__context__ = crossed
    assert found_in(outer, kind) is crossed and found_in(outer, KeyError) is None
