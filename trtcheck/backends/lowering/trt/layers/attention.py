"""The Attention layer of the behaving TensorRT stand-in (operators/Attention.html): NOT TensorRT."""

from __future__ import annotations

from typing import Any

import torch

from trtcheck.backends.lowering.trt.assumptions import MASKED_ROW, assume
from trtcheck.backends.lowering.trt.catalogue import layer
from trtcheck.backends.lowering.trt.layers.rules import check_type, same_type
from trtcheck.backends.lowering.trt.network import ILayer, INetworkDefinition, ITensor, LayerError, Meta
from trtcheck.backends.lowering.trt.types import FLOATS, CausalMaskKind, DataType, LayerType


@layer(LayerType.ATTENTION, "add_attention", "add_attention_v2",
       attributes=("causal_kind", "normalization_operation"),
       ignored={"decomposable": "whether TensorRT may run the attention as separate layers; the result is "
                                "the same"})
class IAttention(ILayer):
    """``tensorrt.IAttention`` (Layers.html#iattention; operators/Attention.html):
    ``normalize(query @ key^T + mask) @ value``, the query already scaled; a BOOL mask keeps where
    True, a float mask is added; ``causal_kind`` UPPER_LEFT keeps key positions ``j <= i``,
    LOWER_RIGHT ``j <= i + (s_kv - s_q)`` (``causal``, the older switch, means UPPER_LEFT); query,
    key and value of one float type. ``add_attention_v2`` takes the causal kind."""


    def __init__(self, network: INetworkDefinition, query: ITensor, key: ITensor, value: ITensor,
                 norm_op: Any, causal: Any) -> None:
        super().__init__(network, [query, key, value])
        self.normalization_operation = norm_op
        self.causal_kind = causal if isinstance(causal, CausalMaskKind) else \
            CausalMaskKind.UPPER_LEFT if causal else CausalMaskKind.NONE
        self.decomposable = False
        self.normalization_quantize_scale: Any = None
        self.normalization_quantize_to_type: Any = None

    @property
    def causal(self) -> bool:
        return self.causal_kind != CausalMaskKind.NONE

    @causal.setter
    def causal(self, value: bool) -> None:
        self.causal_kind = CausalMaskKind.UPPER_LEFT if value else CausalMaskKind.NONE

    @property
    def mask(self) -> ITensor | None:
        return self.get_input(3)

    @mask.setter
    def mask(self, tensor: ITensor) -> None:
        self.set_input(3, tensor)

    def infer(self, ins: list[Meta | None]) -> list[Meta]:
        q, k, v = ins[0], ins[1], ins[2]
        assert q is not None and k is not None and v is not None
        dtype = same_type("IAttention", [q, k, v])
        check_type("IAttention", "query", dtype, FLOATS)
        mask = ins[3] if len(ins) > 3 else None
        if mask is not None:
            if mask.dtype != DataType.BOOL and mask.dtype != dtype:
                raise LayerError(f"Error Code 4: API Usage Error (IAttention: a mask of type "
                                 f"{mask.dtype.name} for a query of type {dtype.name}; it takes BOOL or "
                                 "the query's type)")
            if self.causal:
                raise LayerError("Error Code 4: API Usage Error (IAttention: causal with a mask)")
        return [Meta((*q.shape[:-1], v.shape[-1]), dtype)]

    def run(self, ins: list[Any]) -> list[torch.Tensor]:
        q, k, v = ins[0], ins[1], ins[2]
        scores = torch.matmul(q, k.transpose(-1, -2))
        mask = ins[3] if len(ins) > 3 else None
        if self.causal:
            rows, cols = scores.shape[-2:]
            offset = cols - rows if self.causal_kind == CausalMaskKind.LOWER_RIGHT else 0
            mask = torch.ones((rows, cols), dtype=torch.bool, device=q.device).tril(offset)
        masked = None
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
            if bool(torch.isneginf(scores).all(dim=-1).any()):
                # softmax of a row of -inf: NaN, as PyTorch's own softmax
                masked = torch.isneginf(scores).all(dim=-1, keepdim=True), assume(MASKED_ROW, self)
        if self.normalization_operation.name == "SOFTMAX":
            scores = torch.softmax(scores.float(), dim=-1).to(q.dtype)
            if masked is not None:
                scores = scores.masked_fill(*masked)
        return [torch.matmul(scores, v)]
