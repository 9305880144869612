"""trtcheck: check a PyTorch model zoo against Torch-TensorRT's complex and int64/float64 paths."""

from trtcheck.zoo.api import VARIANTS, model

__version__ = "0.1.0"
__all__ = ["VARIANTS", "__version__", "model"]
