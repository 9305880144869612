"""Names and messages written to break reports: they must be escaped everywhere."""

import torch

import trtcheck

for odd in ("a|b", "<b>x</b>", "$(touch pwned)"):
    trtcheck.model(lambda variant: (torch.nn.Identity(), (torch.ones(2),)), name=odd)


class Hostile(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("<script>alert(1)</script> | `rm -rf` \x01\x1b[31m")


trtcheck.model(lambda variant: (Hostile(), (torch.ones(2),)), name="hostile_message")
