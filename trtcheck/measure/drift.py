"""Runtime dtype drift, the autocast RFC's second use case: a module compiled for one dtype is
called with the sibling dtype (int32 ↔ int64, float32 ↔ float64).

The RFC allows two answers: a clear error, or a cast that leaves the caller's tensors untouched.
A wrong result or a modified input fails the row; a crash takes the worker down and is a
``crash`` row like any other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch.utils import _pytree as pytree

from trtcheck.core.profiles import Tolerance
from trtcheck.errors import last_line
from trtcheck.measure.compare import compare
from trtcheck.measure.mutation import mutation_problem
from trtcheck.tensors import clone

SIBLINGS = {torch.int32: torch.int64, torch.int64: torch.int32,
            torch.float32: torch.float64, torch.float64: torch.float32}

ERROR = "clear error"  # the RFC's first answer
CAST = "cast"  # the second: the result matches eager on the same inputs, inputs untouched
WRONG = "wrong result"
MUTATED = "inputs modified"
CHECK_FAILED = "not checked"  # trtcheck could not judge the call (reported, never a failure)


@dataclass(frozen=True)
class Drift:
    """What one call with the sibling dtypes did."""

    outcome: str
    change: str  # e.g. "int64 → int32"
    detail: str = ""

    @property
    def fails(self) -> bool:
        return self.outcome in (WRONG, MUTATED)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """One line for reports: ``dtype drift int64 → int32: clear error (TypeError: …)``."""
        return f"dtype drift {self.change}: {self.outcome}" + (f" ({self.detail})" if self.detail else "")


def retyped(inputs: Any) -> tuple[Any, str]:
    """The inputs with every int32/int64/float32/float64 tensor cast to its sibling, and the
    changes in words; ``""`` when no input has a sibling."""
    changes: dict[str, None] = {}

    def swap(x: Any) -> Any:
        if isinstance(x, torch.Tensor) and x.dtype in SIBLINGS:
            to = SIBLINGS[x.dtype]
            changes[f"{str(x.dtype)[6:]} → {str(to)[6:]}"] = None
            return x.to(to)
        return x

    tree = pytree.tree_map(swap, inputs)
    return tree, ", ".join(changes)


def unchecked(inputs: Any, why: str) -> Drift | None:
    """The drift check not made, and why; None when no input has a sibling dtype."""
    _, change = retyped(inputs)
    return Drift(CHECK_FAILED, change, why) if change else None


def check(eager: Callable[..., Any], compiled: Callable[..., Any], inputs: Any,
          tolerance: Tolerance, owner: Callable[[BaseException], str] = lambda _: "") -> Drift | None:
    """Call the compiled module with the sibling-typed inputs; None when no input has a sibling.
    An error there is told with what ``owner`` says of it (the frame and who owns it).

    A cast is accepted against either reference: eager called with the same sibling-typed
    inputs (the module behaves as eager would with them), or eager called with those values
    cast back to the compiled dtypes (the cast at the engine boundary that the RFC describes;
    it differs where the narrower type wrapped or rounded). Values are judged at ``tolerance``
    after casting to the reference's dtypes, since a boundary cast may return the compiled dtype;
    so are the inputs a module modifies in place, against eager's call on the same inputs.
    """
    drifted, change = retyped(inputs)
    if not change:
        return None
    with torch.no_grad():
        eager_in = clone(drifted)
        try:
            same_inputs: Any = eager(*eager_in[0], **eager_in[1])
        except Exception:
            same_inputs = eager_in = None  # eager refuses them: only the cast-back reference
        backend_in = clone(drifted)
        try:
            actual = compiled(*backend_in[0], **backend_in[1])
        except Exception as exc:
            return Drift(ERROR, change, last_line(exc) + owner(exc))
        if eager_in is not None and (
                problem := mutation_problem(drifted, eager_in, backend_in, lambda _: tolerance)):
            return Drift(MUTATED, change, problem)
        if same_inputs is not None and compare(same_inputs, _as_dtypes(actual, same_inputs),
                                               lambda _: tolerance):
            return Drift(CAST, change)
        back = pytree.tree_map(lambda d, o: d.to(o.dtype) if isinstance(d, torch.Tensor) else d,
                               drifted, inputs)
        cast_back = eager(*back[0], **back[1])
    result = compare(cast_back, _as_dtypes(actual, cast_back), lambda _: tolerance)
    if result:
        return Drift(CAST, change, "matches eager on the values cast back")
    return Drift(WRONG, change, result.message)


def _as_dtypes(actual: Any, expected: Any) -> Any:
    """``actual``'s tensors cast to the dtypes of eager's tensors at the same places."""
    flat, spec = pytree.tree_flatten(actual)
    ref = pytree.tree_leaves(expected)
    if len(ref) != len(flat):
        return actual
    return pytree.tree_unflatten(
        [a.to(e.dtype) if isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor)
         and a.dtype != e.dtype and a.is_complex() == e.is_complex() else a
         for a, e in zip(flat, ref, strict=True)], spec)
