"""The catalogue of the behaving stand-in's layers: one module per page of TensorRT's operator
reference, each layer with TensorRT's documented shape and type rules (``infer``) and its
computation with PyTorch (``run``), registered by :func:`~trtcheck.backends.lowering.trt.catalogue.layer`.

NOT TensorRT (see :mod:`trtcheck.backends.lowering.trt`). Each class cites its entry of TensorRT's
Python API (``Layers.html#...``: https://docs.nvidia.com/deeplearning/tensorrt/latest/_static/python-api/infer/Graph/Layers.html)
and its page of the operator reference (``operators/X.html``:
https://docs.nvidia.com/deeplearning/tensorrt/latest/_static/operators/X.html), whose "Data Types"
and "Shape Information" sections give the rules followed here. The import list below is the
catalogue: a layer is in the stand-in when its module is imported here.
"""

from trtcheck.backends.lowering.trt.layers import (
    activation,
    attention,
    cast,
    concatenation,
    conditional,
    constant,
    convolution,
    deconvolution,
    elementwise,
    fill,
    gather,
    grid_sample,
    identity,
    kv_cache_update,
    loop,
    matrix_multiply,
    non_zero,
    normalization,
    parametric_relu,
    plugin_v3,
    pooling,
    reduce,
    resize,
    scale,
    scatter,
    select,
    shape,
    shuffle,
    slice,
    softmax,
    squeeze,
    topk,
    unary,
    unsqueeze,
)

__all__ = ["activation", "attention", "cast", "concatenation", "conditional", "constant", "convolution",
           "deconvolution", "elementwise", "fill", "gather", "grid_sample", "identity", "kv_cache_update",
           "loop", "matrix_multiply", "non_zero", "normalization", "parametric_relu", "plugin_v3", "pooling",
           "reduce", "resize", "scale", "scatter", "select", "shape", "shuffle", "slice", "softmax",
           "squeeze", "topk", "unary", "unsqueeze"]
