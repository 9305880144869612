"""Expand model declarations into cases, select them, and build each case's inputs reproducibly."""

from __future__ import annotations

import hashlib
import operator
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trtcheck.errors import InternalError, UsageError
from trtcheck.zoo.api import ModelSpec
from trtcheck.zoo.discover import Discovered, ZooFile, use_root

if TYPE_CHECKING:  # cases are collected without torch; only building one needs it
    import torch


@dataclass(frozen=True)
class Case:
    """One model variant: the unit that is built, exported and run on every backend."""

    file: ZooFile
    spec: ModelSpec
    variant: str

    @property
    def case_id(self) -> str:
        return f"{self.file.rel}::{self.spec.name}[{self.variant}]"


@dataclass(frozen=True)
class Built:
    module: torch.nn.Module
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


class BuildError(Exception):
    """The factory returned something trtcheck cannot use."""


def expand(found: Iterable[Discovered], variants: tuple[str, ...] = (),
           keyword: str | None = None) -> list[Case]:
    """All cases of the discovered models, filtered by variant names and a ``-k`` expression."""
    match = keyword_matcher(keyword) if keyword else None
    cases = []
    for d in found:
        for spec in d.specs:
            for v in spec.variants:
                case = Case(d.file, spec, v)
                if variants and v not in variants:
                    continue
                if match and not match(case.case_id, spec.tags):
                    continue
                cases.append(case)
    return cases


def seed_for(case_id: str) -> int:
    """A seed from a stable hash of the case id: the same on every run, machine and backend."""
    return int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:8], "little") & (2**63 - 1)


def build(case: Case) -> Built:
    """Call the factory under the case's seed and check what it returned."""
    import torch

    if case.spec.factory is None:
        raise InternalError(f"{case.case_id} was collected in another process; build it from "
                            "its file imported here")
    use_root(case.file.root)  # a factory may import its root's helpers when called
    seed = seed_for(case.case_id)
    torch.manual_seed(seed)
    random.seed(seed)
    result = case.spec.factory(case.variant)
    if not isinstance(result, tuple) or len(result) not in (2, 3):
        raise BuildError(
            f"factory must return (module, args) or (module, args, kwargs), got {_describe(result)}"
        )
    module, args, *rest = result
    kwargs = rest[0] if rest else {}
    if not isinstance(module, torch.nn.Module):
        raise BuildError(f"factory returned {_describe(module)} as the module; expected a torch.nn.Module")
    if isinstance(args, torch.Tensor):
        args = (args,)
    if not isinstance(args, (tuple, list)):
        raise BuildError(f"factory returned {_describe(args)} as args; expected a tuple of inputs")
    if not isinstance(kwargs, dict):
        raise BuildError(f"factory returned {_describe(kwargs)} as kwargs; expected a dict")
    return Built(module, tuple(args), dict(kwargs))


def _describe(obj: Any) -> str:
    if isinstance(obj, tuple):
        return f"a tuple of {len(obj)}"
    return f"a {type(obj).__name__}"


_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


def keyword_matcher(expr: str) -> Callable[[str, tuple[str, ...]], bool]:
    """Compile a pytest-style ``-k`` expression: terms match case-insensitive substrings
    of the case id or a tag exactly; ``and``, ``or``, ``not`` and parentheses combine them."""
    tokens = _TOKEN.findall(expr)
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise UsageError(f"-k {expr!r}: unexpected end of expression")
        pos += 1
        return tokens[pos - 1]

    Pred = Callable[[str, tuple[str, ...]], bool]

    def chain(word: str, operand: Callable[[], Pred], join: Callable[[bool, bool], bool]) -> Pred:
        left = operand()
        while peek() == word:
            take()
            right, prev = operand(), left
            left = lambda c, t, a=prev, b=right: join(a(c, t), b(c, t))  # noqa: E731
        return left

    def parse_or() -> Pred:
        return chain("or", parse_and, operator.or_)

    def parse_and() -> Pred:
        return chain("and", parse_not, operator.and_)

    def parse_not() -> Pred:
        if peek() == "not":
            take()
            inner = parse_not()
            return lambda c, t: not inner(c, t)
        return parse_atom()

    def parse_atom() -> Pred:
        tok = take()
        if tok == "(":
            inner = parse_or()
            if take() != ")":
                raise UsageError(f"-k {expr!r}: expected ')'")
            return inner
        if tok in ("and", "or", ")"):
            raise UsageError(f"-k {expr!r}: unexpected {tok!r}")
        term = tok.lower()
        return lambda c, t: term in c.lower() or term in (x.lower() for x in t)

    pred = parse_or()
    if pos != len(tokens):
        raise UsageError(f"-k {expr!r}: unexpected {tokens[pos]!r}")
    return pred
