"""The variants a zoo model may declare: the names its factory is called with."""

from __future__ import annotations

VARIANTS = ("default", "float32", "float64", "float16", "bfloat16", "complex64", "complex128",
            "int32", "int64")
