"""The lowering host's reading of Torch-TensorRT's errors, in-process (no release loaded)."""

from __future__ import annotations

import pytest

from trtcheck.backends.lowering.host import Rejected, _raise_no_fp64


@pytest.mark.parametrize("message", [
    # 2.13's and 2.14's Python TRTEngine
    "Dtype mismatch for input x. Expect torch.float32, got torch.float64.",
    # 2.12's PythonTorchTensorRTModule (seen on the H200 for a complex128 RoPE)
    "Dtype mismatch for 0th input(x). Expect dtype.f32, got torch.float64.",
    "TensorRT does not support float64 (double) precision. To resolve this, please set "
    "truncate_double=True",
])
def test_every_release_s_float64_refusal_is_unsupported(message: str) -> None:
    with pytest.raises(Rejected, match=r"^TensorRT has no FP64 and truncate_double is off: "):
        _raise_no_fp64(AssertionError(message))


@pytest.mark.parametrize("message", [
    "Dtype mismatch for 0th input(x). Expect dtype.f32, got torch.int64.",
    "value cannot be converted to type int32 without overflow",
])
def test_other_errors_are_left_to_the_row(message: str) -> None:
    _raise_no_fp64(RuntimeError(message))  # returns: the caller re-raises it as it was
