"""What a call did to the caller's inputs, against what eager's call did to the same inputs.

A module may modify its inputs in place (``x.sub_(mean)``); a compiled module then passes when it
leaves them as eager does, within the row's tolerance (a compiled kernel may round the in-place
result differently, as it may round an output). Any other difference fails the row, and the
message says who modified the inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from trtcheck.core.profiles import Tolerance
from trtcheck.measure.compare import compare

EXACT = Tolerance(0.0, 0.0)


def inputs_changed(before: Any, after: Any) -> bool:
    """Whether a call changed (or re-typed) the inputs it was given, to the last bit."""
    return not compare(before, after, lambda _: EXACT, what="input")


def mutation_problem(before: Any, eager_after: Any, compiled_after: Any,
                     tolerance_for: Callable[[torch.dtype], Tolerance]) -> str:
    """``""`` when the compiled module left its copy of ``before`` as eager left its own (within
    ``tolerance_for``); else one line: who modified the inputs, and the worst difference."""
    check = compare(eager_after, compiled_after, tolerance_for, what="input")
    if check:
        return ""
    by_eager = inputs_changed(before, eager_after)
    by_compiled = inputs_changed(before, compiled_after)
    if by_eager and not by_compiled:
        who = "eager modifies its inputs in place and the compiled module leaves them unchanged"
    elif by_compiled and not by_eager:
        who = "the compiled module modifies or re-types its inputs, eager leaves them unchanged"
    else:
        who = "the compiled module modifies its inputs differently from eager"
    return f"{who}: {check.message}"
