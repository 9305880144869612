"""Models that take the worker down: each must cost exactly one row."""

import os
import signal
import time

import torch

import trtcheck


class Dies(torch.nn.Module):
    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.how == "segfault":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif self.how == "abort":
            os.abort()
        elif self.how == "exit":
            os._exit(3)
        elif self.how == "hang":
            time.sleep(3600)
        return x


for how in ("segfault", "abort", "exit", "hang"):
    trtcheck.model(lambda variant, how=how: (Dies(how), (torch.ones(2),)), name=how)


@trtcheck.model
def huge_allocation(variant):
    """Asks for 64 GiB: under the worker's memory limit this is an out-of-memory error."""

    class Huge(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + torch.empty(2**36, dtype=torch.uint8).sum()

    return Huge(), (torch.ones(2),)
