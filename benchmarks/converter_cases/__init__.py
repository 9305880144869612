"""Converter-style cases of trtcheck's own, for ``bench_converter_suite.py --quick``: a handful of
cases in the shape of Torch-TensorRT's converter tests, run through the TensorRT stand-in."""
