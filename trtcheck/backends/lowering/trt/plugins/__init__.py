"""The plugins the behaving stand-in runs, with its plugin registry (:mod:`.registry`): NOT TensorRT.

One module per plugin, each computing with PyTorch what the native plugin computes; the import list
below is what the registry holds. Torch-TensorRT's converters create ScatterAdd.
"""

from trtcheck.backends.lowering.trt.plugins import registry, scatter_add

__all__ = ["registry", "scatter_add"]
