"""The `tensorrt` backend: Torch-TensorRT's dynamo path, release compatibility, module inspection."""
