"""The `lowering` backend: Torch-TensorRT's own lowering from its real Python code, run in a host process."""
