"""A TensorRT stand-in that behaves: THIS IS NOT TENSORRT.

It is the subset of the ``tensorrt`` Python module that Torch-TensorRT 2.12–2.14's converters,
interpreter and runtimes use, written from TensorRT's public API documentation, so that a real
``torch_tensorrt.dynamo.compile`` runs end to end on a machine without TensorRT. Converters record
layers over tensors whose shapes (-1 for dynamic dimensions) and types are inferred by TensorRT's
documented rules for a strongly typed network; a layer TensorRT refuses is logged at ERROR and the
build returns None, as TensorRT's builder does. The builder serializes the recorded network, and the
runtime's execution context runs it layer by layer with PyTorch on the memory at the addresses it
is given. A refittable engine's weights are replaced by name through its ``Refitter``, and a
weight-stripped plan holds none of them until it is refitted. It reports the TensorRT version the
Torch-TensorRT release was built against.

Everything made through it is a prediction with PyTorch's numbers: TensorRT's kernels, tactics,
fusions, FP16/TF32 numerics and the builder's own failures are not here. It is installed only inside
a host subprocess (:func:`install`), since it patches ``sys.modules`` and torch.

Modules: ``types`` (enums, ``DataType``, ``Dims``, ``Weights``), ``network`` (the network, its
tensors, the layer base and the inference driver), ``catalogue`` (the registration of a layer: its
``LayerType``, ``add_*`` methods, refittable weights and exported name), ``layers`` (the catalogue:
one module per TensorRT operator page, each layer's shape and type rules and its computation, loops
and the if-conditional among them), ``plugins`` (the plugin registry and the plugins it runs with
PyTorch), ``engine`` (builder, serialization, runtime, engine, execution context), ``memory``
(addresses as tensors, without copies), ``refit`` (refittable weights, weight-stripped plans and
the refitter), ``modes`` (its tensor work outside the caller's torch modes), ``install`` (the
module and the CUDA shims).
"""

from trtcheck.backends.lowering.trt.install import install, make_tensorrt

__all__ = ["install", "make_tensorrt"]
