"""Canary: does the newest torch-tensorrt release still run on trtcheck's ``tensorrt`` stand-in?

Downloads the newest ``torch-tensorrt`` wheel (or ``--version``), keeps its Python code in a
temporary cache, imports it in a lowering host over the stand-in and CUDA shims, and lowers the
complex guide's RoPE with ``dryrun``. Exits 1, saying why, when the release touches TensorRT or CUDA
at import (or in lowering) in a way the stand-in cannot absorb; a new release that needs it is the
moment to extend :mod:`trtcheck.backends.lowering.standin`. Needs the network; not part of CI.

    python benchmarks/canary_torch_tensorrt.py [--version 2.15.0]
    python benchmarks/canary_torch_tensorrt.py --quick    # the release already in trtcheck's cache

``--quick`` checks the script's own path without the network: the release for this torch
from trtcheck's cache (``trtcheck fetch torch-tensorrt`` puts it there), not the newest.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from trtcheck.backends.base import CompileJob
from trtcheck.backends.lowering.code import CodeUnavailable, download, fetch, locate
from trtcheck.backends.lowering.lowering_backend import LoweringBackend
from trtcheck.core.profiles import Profile


class GuideRoPE(torch.nn.Module):
    def forward(self, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        x_complex = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(x_complex * freqs).flatten(2)


def newest(into: Path) -> Path:
    """``pip download`` torch-tensorrt with no pin: the newest release for this Python."""
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                    "--platform", "manylinux_2_28_x86_64", "--python-version", python,
                    "torch-tensorrt", "-d", str(into), "--quiet"], check=True)
    return next(into.glob("torch_tensorrt-*.whl"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", help="a release to check instead of the newest")
    parser.add_argument("--quick", action="store_true",
                        help="the cached release for this torch (--version: that one), no download")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trtcheck-canary-") as tmp:
        if not args.quick:
            os.environ["TRTCHECK_CACHE"] = str(Path(tmp) / "cache")  # leave the user's cache alone
        try:
            wheel = (fetch(args.version) if args.quick else
                     download(args.version, Path(tmp)) if args.version else newest(Path(tmp)))
        except (CodeUnavailable, subprocess.CalledProcessError) as exc:
            print(f"canary: cannot download torch-tensorrt: {exc}", file=sys.stderr)
            return 2
        source = locate(str(wheel))
        print(f"canary: {wheel.name} (built for torch {source.built_for}, running torch {torch.__version__})")
        if source.note:
            print(f"canary: {source.note}")
        backend = LoweringBackend(str(wheel))
        try:
            started = time.perf_counter()
            try:
                host = backend.host(source)
            except Exception as exc:
                print(f"CANARY FAILED: Torch-TensorRT {source.version} does not import over the tensorrt "
                      f"stand-in: {type(exc).__name__}: {exc}\n{exc.__cause__ or ''}", file=sys.stderr)
                return 1
            names = host.info["tensorrt_names"]
            print(f"canary: imported in {time.perf_counter() - started:.1f} s; {len(names)} tensorrt names "
                  f"touched at import: {', '.join(names)}")
            inputs = (torch.randn(1, 16, 64), torch.randn(1, 16, 32, dtype=torch.complex64))
            job = CompileJob(torch.export.export(GuideRoPE(), inputs), inputs, {}, Profile("default"), "cpu")
            try:
                compiled = backend.compile(job)
                torch.testing.assert_close(compiled.fn(*inputs), GuideRoPE()(*inputs))
            except Exception as exc:
                print(f"CANARY FAILED: Torch-TensorRT {source.version} imports but its dryrun lowering "
                      f"of the guide's RoPE fails: {type(exc).__name__}: {exc}\n{exc.__cause__ or ''}",
                      file=sys.stderr)
                return 1
            print(f"canary: ok, RoPE lowered: {', '.join(compiled.evidence.path)}")
        finally:
            backend.deactivate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
