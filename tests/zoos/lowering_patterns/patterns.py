"""Complex, float64 and int64 patterns, each a model, for the ``lowering`` backend's tests.

The first group is what Torch-TensorRT's real lowering gets wrong (or refuses); the second is what
it handles and must pass; the last, int64 results its converters narrow inside the engine. Inputs
are complex64 (the ``complex64`` variant) unless the name says.
"""

from __future__ import annotations

import torch

import trtcheck

SHAPE = (2, 8, 16)


def _z() -> torch.Tensor:
    return torch.randn(*SHAPE, dtype=torch.complex64)


class OneMinus(torch.nn.Module):
    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return 1 - z


@trtcheck.model(variants=("complex64",), tags=("wrong",))
def one_minus(variant: str):
    """A real scalar minus a complex tensor."""
    return OneMinus(), (_z(),)


class TimesImaginary(torch.nn.Module):
    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return z * 2j


@trtcheck.model(variants=("complex64",), tags=("wrong",))
def times_2j(variant: str):
    """A complex Python scalar as a factor."""
    return TimesImaginary(), (_z(),)


class OverComplexScalar(torch.nn.Module):
    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return z / (1 + 2j)


@trtcheck.model(variants=("complex64",), tags=("wrong",))
def over_complex_scalar(variant: str):
    """A complex Python scalar as a divisor."""
    return OverComplexScalar(), (_z(),)


class TimesImaginaryAsReal(torch.nn.Module):
    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(z * 2j)


@trtcheck.model(variants=("complex64",), tags=("wrong",))
def times_2j_as_real(variant: str):
    """z * 2j returned through view_as_real, as rotary embeddings return their result."""
    return TimesImaginaryAsReal(), (_z(),)


class OverComplexScalarAsReal(torch.nn.Module):
    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(z / (1 + 2j))


@trtcheck.model(variants=("complex64",), tags=("wrong",))
def over_complex_scalar_as_real(variant: str):
    """z / (1 + 2j) returned through view_as_real."""
    return OverComplexScalarAsReal(), (_z(),)


class PlusImaginary(torch.nn.Module):
    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return z + 1j


@trtcheck.model(variants=("complex64",), tags=("wrong",))
def plus_1j(variant: str):
    """A complex Python scalar added."""
    return PlusImaginary(), (_z(),)


class ComplexPlusReal(torch.nn.Module):
    def forward(self, z: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return z + r


@trtcheck.model(variants=("complex64",), tags=("wrong",))
def complex_plus_real(variant: str):
    """A complex tensor plus a real tensor of the same shape."""
    return ComplexPlusReal(), (_z(), torch.randn(*SHAPE))


class ComplexOfReals(torch.nn.Module):
    def forward(self, z: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return torch.complex(r, r) * z


@trtcheck.model(variants=("complex64",), tags=("wrong",))
def complex_of_reals(variant: str):
    """torch.complex(r, r) built in the graph, times a complex input."""
    return ComplexOfReals(), (_z(), torch.randn(*SHAPE))


class RealPartAsComplex(torch.nn.Module):
    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return z.real.to(torch.complex64) * z


@trtcheck.model(variants=("complex64",), tags=("wrong",))
def real_part_as_complex(variant: str):
    """A real part cast back to complex, times the complex input."""
    return RealPartAsComplex(), (_z(),)


class TwoComplexOutputs(torch.nn.Module):
    def forward(self, z: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return z * w, z + w


@trtcheck.model(variants=("complex64",), tags=("wrong",))
def two_complex_outputs(variant: str):
    """One block with two complex outputs."""
    return TwoComplexOutputs(), (_z(), _z())


class Float64Affine(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.randn(16, dtype=torch.float64), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale + 1.0


@trtcheck.model(variants=("float64",), tags=("wrong",))
def float64_affine(variant: str):
    """A float64 model: TensorRT has no FP64 unless truncate_double is on."""
    return Float64Affine(), (torch.randn(*SHAPE, dtype=torch.float64),)


class Float64Weights(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("weights", torch.randn(16, dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.weights


@trtcheck.model(variants=("float32",), tags=("wrong",))
def float64_made_inside(variant: str):
    """float32 input times a float64 buffer: the float64 result is made inside the block."""
    return Float64Weights(), (torch.randn(*SHAPE),)


class GuideRoPE(torch.nn.Module):
    """The example from Torch-TensorRT's complex tensor guide."""

    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        x_complex = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(x_complex * freqs).flatten(2)


@trtcheck.model(variants=("complex64",), tags=("handled",))
def guide_rope(variant: str):
    """Real x viewed as complex, times complex freqs, back through view_as_real."""
    return GuideRoPE(), (torch.randn(1, 16, 64), torch.randn(1, 16, 32, dtype=torch.complex64))


class Product(torch.nn.Module):
    def forward(self, z: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return z * w


@trtcheck.model(variants=("complex64", "complex128"), tags=("handled",))
def product(variant: str):
    """z * w (complex128: TensorRT has no FP64; under truncate_double it comes back complex64)."""
    dtype = getattr(torch, variant)
    return Product(), (_z().to(dtype), _z().to(dtype))


class Quotient(torch.nn.Module):
    def forward(self, z: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return z / w


@trtcheck.model(variants=("complex64",), tags=("handled",))
def quotient(variant: str):
    """z / w, w kept away from zero."""
    return Quotient(), (_z(), _z() + 3)


class ConjugateProduct(torch.nn.Module):
    def forward(self, z: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return z.conj() * w


@trtcheck.model(variants=("complex64",), tags=("handled",))
def conjugate_product(variant: str):
    """z.conj() * w."""
    return ConjugateProduct(), (_z(), _z())


class BufferProduct(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("weights", torch.randn(*SHAPE[1:], dtype=torch.complex64))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.weights * z


@trtcheck.model(variants=("complex64",), tags=("handled",))
def buffer_product(variant: str):
    """A complex buffer times a complex input."""
    return BufferProduct(), (_z(),)


class LlamaFreqs(torch.nn.Module):
    """Llama's apply_rotary_emb: a precomputed ``freqs_cis`` buffer sliced to the sequence length."""

    def __init__(self, max_seq: int = 32, half_dim: int = 8) -> None:
        super().__init__()
        inv = 1.0 / 10000.0 ** (torch.arange(half_dim, dtype=torch.float32) / half_dim)
        angles = torch.outer(torch.arange(max_seq, dtype=torch.float32), inv)
        self.register_buffer("freqs_cis", torch.polar(torch.ones_like(angles), angles))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        freqs = self.freqs_cis[:n].view(1, n, 1, xc.shape[-1])
        return torch.view_as_real(xc * freqs).flatten(3)


@trtcheck.model(variants=("complex64",), tags=("handled",))
def llama_freqs(variant: str):
    """x of shape (batch, seq, heads, head_dim) rotated by freqs_cis[:seq]."""
    return LlamaFreqs(), (torch.randn(2, 16, 4, 16),)


class SortDefaultDim(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sort(x).values


@trtcheck.model(variants=("float32",))
def sort_default_dim(variant: str):
    """``torch.sort(x)``: exported as ``aten.sort.default(x)``, the dim left to its default."""
    return SortDefaultDim(), (torch.randn(4, 8),)


class TopThree(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.topk(x, 3)


@trtcheck.model(variants=("float32",))
def top_three(variant: str):
    """``torch.topk``'s structseq as the output: a type ``torch.export.save`` has no name for."""
    return TopThree(), (torch.randn(4, 8),)


class TopIds(torch.nn.Module):
    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        return torch.argmax(scores, dim=-1)


@trtcheck.model(variants=("float32",), tags=("int64",))
def top_ids(variant: str):
    """argmax's int64 result: TopK's INT32 indices in the engine, cast back to int64 at its output."""
    return TopIds(), (torch.randn(4, 1000),)


class RunningTotal(torch.nn.Module):
    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(ids, dim=-1)


@trtcheck.model(variants=("int64",), tags=("int64", "wrong"))
def running_total(variant: str):
    """cumsum of int64 ids near 2**40: the converter sums them in float32."""
    return RunningTotal(), (torch.randint(2**40, 2**40 + 2**20, (3, 10)),)
