"""The GridSample layer of the behaving TensorRT stand-in (operators/GridSample.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type, same_type
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, Meta
from trtcheck.backends.lowering.trt.types import FLOATS, InterpolationMode, LayerType, SampleMode


@layer(LayerType.GRID_SAMPLE, "add_grid_sample",
       attributes=("align_corners", "interpolation_mode", "sample_mode"))
class IGridSampleLayer(ILayer):
    """``tensorrt.IGridSampleLayer`` (Layers.html#igridsamplelayer; operators/GridSample.html)."""


    def __init__(self, network: INetworkDefinition, input: ITensor, grid: ITensor) -> None:
        super().__init__(network, [input, grid])
        self.interpolation_mode = InterpolationMode.LINEAR
        self.align_corners = False
        self.sample_mode = SampleMode.FILL

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        x, grid = ins
        assert x is not None and grid is not None
        dtype = same_type("IGridSampleLayer", [x, grid])
        check_type("IGridSampleLayer", "input", dtype, FLOATS)
        return [Meta(x.shape[:2] + grid.shape[1:3], dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        mode = {InterpolationMode.NEAREST: "nearest", InterpolationMode.LINEAR: "bilinear",
                InterpolationMode.CUBIC: "bicubic"}[self.interpolation_mode]
        padding = {SampleMode.FILL: "zeros", SampleMode.CLAMP: "border",
                   SampleMode.REFLECT: "reflection"}.get(self.sample_mode, "zeros")
        return [F.grid_sample(ins[0], ins[1], mode=mode, padding_mode=padding,
                              align_corners=self.align_corners)]
