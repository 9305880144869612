"""trtcheck: check a PyTorch model zoo against Torch-TensorRT's complex and int64/float64 paths."""

from trtcheck.distribution import version
from trtcheck.zoo.api import VARIANTS, model

__version__ = version()
__all__ = ["VARIANTS", "__version__", "model"]
