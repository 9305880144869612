"""The complex guide's documented limitations and supported patterns, quoted.

Each :class:`Limitation` carries the guide's own sentence (cited in ``analyze -v``) and the
short form used in ``unsupported`` messages. The guide is Torch-TensorRT's
"Complex Tensor Support" document.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

aten = torch.ops.aten


@dataclass(frozen=True)
class Limitation:
    """A limitation of the seed: the text it quotes and the short form used in messages."""

    key: str
    cite: str
    short: str


ANCHOR = Limitation(
    "complex output without view_as_real",
    "Only view_as_real-anchored subgraphs are detected. If your model uses complex "
    "arithmetic without view_as_real as the output boundary (e.g. a complex output tensor "
    "is returned directly), the subgraph will not be detected and the compilation will fail.",
    "only view_as_real-anchored subgraphs are detected (a complex value that never reaches "
    "view_as_real, e.g. a complex output, is not rewritten)",
)
STANDALONE_VIEW_AS_COMPLEX = Limitation(
    "standalone view_as_complex",
    "view_as_complex must be paired with view_as_real in the same subgraph. Standalone "
    "view_as_complex nodes outside the detected subgraph are not handled.",
    "view_as_complex must be paired with view_as_real in the same subgraph",
)
CONV_BN = Limitation(
    "complex convolution or batch norm",
    "No support for complex convolution or complex batch norm — only element-wise "
    "mul.Tensor is rewritten.",
    "no support for complex convolution or complex batch norm",
)
PATTERNS = Limitation(
    "op outside the supported patterns",
    "Supported Patterns: complex64/complex128 input placeholder; complex model buffer "
    "(get_attr); aten.mul.Tensor between complex tensors; aten.view_as_complex; "
    "aten.view_as_real; aten.permute.default. No support for complex convolution or complex "
    "batch norm — only element-wise mul.Tensor is rewritten.",
    "only element-wise mul.Tensor between complex tensors, view_as_complex, view_as_real "
    "and permute are rewritten",
)
FLOAT64 = Limitation(
    "complex128/float64 throughput",
    "complex128 on GPU requires float64 support in TRT. Most consumer GPUs have limited "
    "float64 throughput; use truncate_double=True for performance-critical workloads.",
    "float64 runs slowly on most GPUs; truncate_double=True trades precision for speed",
)
REAL_PAIRS = Limitation(
    "real (d, 2) parameter",
    "Parameters shaped (d, 2) (intentional, not complex) [...] will not be mistakenly "
    "rewritten because the parameter's dtype is real. The rewriter only rewrites nodes whose "
    'meta["val"].dtype is complex64 or complex128.',
    "a real tensor with a trailing dimension of 2 is left alone",
)

SEED_OPS = frozenset(
    {aten.mul.Tensor, aten.view_as_complex.default, aten.view_as_real.default,
     aten.permute.default, aten.sym_size.int}
)
