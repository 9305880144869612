"""trtcheck: check a PyTorch model zoo against Torch-TensorRT's complex and int64/float64 paths."""

from trtcheck.core.variants import VARIANTS
from trtcheck.distribution import version
from trtcheck.zoo.api import model

__version__ = version()
__all__ = ["VARIANTS", "__version__", "model"]
