"""What the benchmark scripts share: running trtcheck in a fresh process, and their statistics.

Its name starts with ``_``: a helper of the scripts beside it, not a benchmark."""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def child_env(device: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a process a benchmark starts: this checkout's trtcheck first on
    ``PYTHONPATH``; on CPU one thread, as ``blocked_autorange`` uses (on a shared machine,
    torch's threads wait on each other's cores and multiply small models' times by up to 100)."""
    one = {"OMP_NUM_THREADS": "1"} if device == "cpu" else {}
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, **one, **(extra or {})}


def trtcheck(argv: list[str], *, device: str, env: dict[str, str] | None = None,
             cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """``python -m trtcheck ARGV`` in a fresh process, its output captured."""
    return subprocess.run([sys.executable, "-m", "trtcheck", *argv], cwd=cwd, capture_output=True,
                          text=True, check=False, env=child_env(device, env))


def cv(values: list[float]) -> float:
    """Coefficient of variation, in percent."""
    return statistics.pstdev(values) / statistics.fmean(values) * 100 if len(values) > 1 else 0.0


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson interval of a rate of ``k`` in ``n``."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)
