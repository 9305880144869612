"""The complex-to-real rewrite rules, one per op, applied to an ExportedProgram's graph.

Every complex value is carried as a real tensor with a trailing dimension of 2 (real,
imaginary): a *complex view*. Only nodes whose ``meta["val"]`` is complex are rewritten,
so a real parameter that happens to end in a dimension of 2 is never touched.

Coverage ``broad`` rewrites every op that has an exact real formulation below and runs any
other complex op in PyTorch as a declared fallback: its complex views are turned back into
complex tensors before it and into views after it.
"""

from __future__ import annotations

import contextlib
import operator
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import fx
from torch.export import ExportedProgram

from trtcheck.emulation.detect import NOOPS, Scan, is_complex_node, is_tensor_node
from trtcheck.emulation.graph import (
    FALLBACK,
    evaluate,
    fake_mode,
    is_complex,
)
from trtcheck.errors import InternalError
from trtcheck.tensors import op_name

aten = torch.ops.aten


def bind(node: fx.Node) -> dict[str, Any]:
    """An ATen node's arguments by schema name, defaults filled in."""
    bound: dict[str, Any] = {}
    for i, arg in enumerate(node.target._schema.arguments):
        if i < len(node.args) and not arg.kwarg_only:
            bound[arg.name] = node.args[i]
        elif arg.name in node.kwargs:
            bound[arg.name] = node.kwargs[arg.name]
        elif arg.has_default_value():
            bound[arg.name] = arg.default_value
    return bound


Emit = Callable[["_Rewriter", fx.Node, dict[str, Any]], Any]
Accepts = Callable[[fx.Node, dict[str, Any]], bool]


@dataclass(frozen=True)
class _Rule:
    emit: Emit
    accepts: Accepts


_RULES: dict[Any, _Rule] = {}


def _rule(*targets: Any, accepts: Accepts = lambda node, bound: True) -> Callable[[Emit], Emit]:
    def register(emit: Emit) -> Emit:
        for target in targets:
            _RULES[target] = _Rule(emit, accepts)
        return emit

    return register


def rule_for(node: fx.Node) -> _Rule | None:
    """The broad-coverage rewrite for this complex op, or None when it falls back."""
    rule = _RULES.get(node.target)
    return rule if rule is not None and rule.accepts(node, bind(node)) else None


@dataclass
class Rewrite:
    """What the rewrite did: ops rewritten (by op, and placeholders by kind) and fallbacks."""

    rewritten: Counter[str] = field(default_factory=Counter)
    fallbacks: list[str] = field(default_factory=list)


def rewrite(program: ExportedProgram, found: Scan) -> tuple[fx.GraphModule, Rewrite]:
    """A new graph module with real dtypes only, outside declared fallbacks.

    Its placeholders are the program's, in order (parameters, buffers, constants, user
    inputs), complex ones replaced by real ``(..., 2)`` placeholders.
    """
    rewriter = _Rewriter(program, found)
    for node in program.graph.nodes:
        rewriter.env[node] = rewriter.lower(node)
    return fx.GraphModule(program.graph_module, rewriter.graph), rewriter.result


class _Rewriter:
    """Builds the new graph node by node: ``env`` maps each original node to its new value."""

    def __init__(self, program: ExportedProgram, found: Scan) -> None:
        self.graph = fx.Graph()
        self.env: dict[fx.Node, Any] = {}
        self.result = Rewrite()
        self._found = found
        self._touching = set(found.ops)
        self._mode = fake_mode(program.graph)
        self._mark: str | None = None
        self._as_complex: dict[fx.Node, fx.Node] = {}
        self._parts: dict[fx.Node, tuple[fx.Node, fx.Node]] = {}

    def lower(self, node: fx.Node) -> Any:
        if node.op == "placeholder":
            return self._placeholder(node)
        if node.op == "output":
            return self.graph.output(self.v(node.args[0]))
        if node.target in NOOPS:
            return None
        source = node.args[0] if node.args else None
        if node.target is operator.getitem and isinstance(self.env.get(source), list):
            return self.env[source][node.args[1]]
        if node not in self._touching:
            return self.graph.node_copy(node, self.env.__getitem__)
        rule = rule_for(node)
        if rule is None:
            return self._fallback(node)
        self.result.rewritten[op_name(node.target)] += 1
        return self._conform(rule.emit(self, node, bind(node)), node)

    def _placeholder(self, node: fx.Node) -> fx.Node:
        new = self.graph.placeholder(node.name)
        val = node.meta.get("val")
        if is_complex(val):
            with self._mode:
                val = torch.view_as_real(val)
            self.result.rewritten[f"placeholder ({self._found.kinds[node.name]})"] += 1
        new.meta["val"] = val
        return new

    def _conform(self, new: Any, node: fx.Node) -> Any:
        """Check a rule's result against eager's shape; cast where promotion differed."""
        val = node.meta["val"]
        if isinstance(new, list):
            return [self._conform_one(a, b, node) for a, b in zip(new, val, strict=True)]
        return self._conform_one(new, val, node)

    def _conform_one(self, new: fx.Node, val: Any, node: fx.Node) -> fx.Node:
        if not isinstance(val, torch.Tensor):  # a shape query's SymInt
            return new
        dtype, shape = val.dtype, list(val.shape)
        if dtype.is_complex:
            dtype, shape = dtype.to_real(), [*shape, 2]
        got = new.meta["val"]
        if list(got.shape) != shape:
            raise InternalError(
                f"the complex rewrite of {node.name} ({op_name(node.target)}) gave shape "
                f"{list(got.shape)}, expected {shape}"
            )
        return new if got.dtype == dtype else self.emit(aten._to_copy.default, new, dtype=dtype)

    def _fallback(self, node: fx.Node) -> Any:
        self.result.fallbacks.append(f"{op_name(node.target)} (node {node.name})")
        with self._marking(FALLBACK):
            args, kwargs = fx.node.map_arg((node.args, node.kwargs), self._complex_or_view)
            out = self.graph.create_node("call_function", node.target, args, kwargs)
            out.meta.update(val=node.meta.get("val"), trtcheck=FALLBACK)
            val = node.meta.get("val")
            if isinstance(val, (list, tuple)):
                return [self._to_view(self.emit(operator.getitem, out, i), v)
                        for i, v in enumerate(val)]
            return self._to_view(out, val)

    def _complex_or_view(self, arg: fx.Node) -> fx.Node:
        if not is_complex_node(arg):
            return self.env[arg]
        if arg not in self._as_complex:
            x = self.env[arg]
            self._as_complex[arg] = self.emit(aten.complex.default, self.re(x), self.im(x))
        return self._as_complex[arg]

    def _to_view(self, out: fx.Node, val: Any) -> fx.Node:
        complex_tensor = isinstance(val, torch.Tensor) and val.dtype.is_complex
        return self.emit(aten.view_as_real.default, out) if complex_tensor else out

    @contextlib.contextmanager
    def _marking(self, mark: str) -> Iterator[None]:
        self._mark = mark
        try:
            yield
        finally:
            self._mark = None

    # -- building blocks for rules ---------------------------------------------------------

    def v(self, arg: Any) -> Any:
        """An original argument in the new graph (nodes mapped, other values as they are)."""
        return fx.node.map_arg(arg, self.env.__getitem__)

    def emit(self, target: Any, *args: Any, **kwargs: Any) -> fx.Node:
        """Append a call and give it the value it computes on fake tensors."""
        node = self.graph.call_function(target, args, kwargs)
        if self._mark:
            node.meta["trtcheck"] = self._mark
        if not evaluate(node, self._mode):
            raise InternalError(f"the complex rewrite emitted {op_name(target)} that does not run: {node}")
        return node

    def cview(self, arg: fx.Node) -> fx.Node:
        """An original tensor argument as a complex view (a real one gets a zero imaginary part)."""
        x = self.v(arg)
        return x if is_complex_node(arg) else self.pack(x, self.emit(aten.zeros_like.default, x))

    def re(self, x: fx.Node) -> fx.Node:
        return self.parts(x)[0]

    def im(self, x: fx.Node) -> fx.Node:
        return self.parts(x)[1]

    def pack(self, real: fx.Node, imag: fx.Node) -> fx.Node:
        """``stack([real, imag], -1)``, broadcasting the two parts first when they differ."""
        if list(real.meta["val"].shape) != list(imag.meta["val"].shape):
            both = self.emit(aten.broadcast_tensors.default, [real, imag])
            real, imag = (self.emit(operator.getitem, both, i) for i in (0, 1))
        return self.emit(aten.stack.default, [real, imag], -1)

    def parts(self, y: fx.Node | complex) -> tuple[Any, Any]:
        """The real and imaginary parts of a complex view (each selected once) or number."""
        if not isinstance(y, fx.Node):
            return y.real, y.imag
        if y not in self._parts:
            self._parts[y] = (self.emit(aten.select.int, y, -1, 0),
                              self.emit(aten.select.int, y, -1, 1))
        return self._parts[y]

    def mul(self, a: Any, b: Any) -> Any:
        return self._commutative(aten.mul.Tensor, operator.mul, a, b)

    def add(self, a: Any, b: Any) -> Any:
        return self._commutative(aten.add.Tensor, operator.add, a, b)

    def _commutative(self, target: Any, fold: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
        """Folded when both operands are numbers; otherwise the tensor goes first."""
        if not isinstance(a, fx.Node) and not isinstance(b, fx.Node):
            return fold(a, b)
        return self.emit(target, *((a, b) if isinstance(a, fx.Node) else (b, a)))

    def sub(self, a: fx.Node, b: Any) -> fx.Node:
        return self.emit(aten.sub.Tensor, a, b)

    def div(self, a: fx.Node, b: Any) -> fx.Node:
        return self.emit(aten.div.Tensor, a, b)

    def cmul(self, x: fx.Node, y: fx.Node | complex) -> fx.Node:
        """(a + bi)(c + di) = (ac - bd) + (ad + bc)i."""
        (a, b), (c, d) = self.parts(x), self.parts(y)
        return self.pack(self.sub(self.mul(a, c), self.mul(b, d)),
                         self.add(self.mul(a, d), self.mul(b, c)))

    def cdiv(self, x: fx.Node, y: fx.Node | complex) -> fx.Node:
        """(a + bi)/(c + di) = ((ac + bd) + (bc - ad)i) / (c² + d²)."""
        (a, b), (c, d) = self.parts(x), self.parts(y)
        den = self.add(self.mul(c, c), self.mul(d, d))
        return self.pack(self.div(self.add(self.mul(a, c), self.mul(b, d)), den),
                         self.div(self.sub(self.mul(b, c), self.mul(a, d)), den))

    def scale(self, x: fx.Node, s: complex | float) -> fx.Node:
        """A complex view times a Python number."""
        if isinstance(s, complex) and s.imag != 0:
            return self.cmul(x, s)
        return x if s == 1 else self.mul(x, s.real)

    def add_number(self, x: fx.Node, s: complex) -> fx.Node:
        """A complex view plus a Python number."""
        return self.pack(self.add(self.re(x), s.real), self.add(self.im(x), s.imag))

    def same(self, node: fx.Node, bound: dict[str, Any], changes: dict[str, Any]) -> Any:
        """The node's own op on new arguments; a list of views for a multi-output op."""
        values = {**{k: self.v(a) for k, a in bound.items()}, **changes}
        args, kwargs = [], {}
        for arg in node.target._schema.arguments:
            if arg.name in values:
                if arg.kwarg_only:
                    kwargs[arg.name] = values[arg.name]
                else:
                    args.append(values[arg.name])
        out = self.emit(node.target, *args, **kwargs)
        val = node.meta["val"]
        if isinstance(val, (list, tuple)):
            return [self.emit(operator.getitem, out, i) for i in range(len(val))]
        return out


# -- rules: (rewriter, original node, its bound arguments) -> new node(s) -------------------

def _numbers(node: fx.Node, bound: dict[str, Any]) -> bool:
    """Scalar operands are Python numbers (a symbolic scalar makes the op fall back)."""
    return all(not isinstance(bound.get(k), fx.Node) or is_tensor_node(bound[k])
               for k in ("other", "alpha"))


_KEEP_LAYOUT = (None, torch.contiguous_format, torch.preserve_format)


def _keeps_layout(node: fx.Node, bound: dict[str, Any]) -> bool:
    return bound.get("memory_format") in _KEEP_LAYOUT and bound.get("layout") in (
        None, torch.strided)


def _shift(dim: Any) -> Any:
    """A dim of the complex tensor as a dim of its view: negative dims move one left."""
    if isinstance(dim, (list, tuple)):
        return [_shift(d) for d in dim]
    return dim - 1 if isinstance(dim, int) and dim < 0 else dim


def _ndim(arg: fx.Node) -> int:
    return arg.meta["val"].dim()


@_rule(aten.view_as_complex.default, aten.view_as_real.default, aten.resolve_conj.default,
       aten.resolve_neg.default, aten.alias.default, aten.detach.default,
       aten.lift_fresh_copy.default, aten.clone.default, aten.contiguous.default,
       accepts=_keeps_layout)
def _identity(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    return rw.v(b["self"])


@_rule(aten.mul.Tensor, aten.mul.Scalar, accepts=_numbers)
def _mul(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    a, other = b["self"], b["other"]
    if is_complex_node(other) and not is_complex_node(a):
        a, other = other, a
    x = rw.cview(a)
    if is_complex_node(other):
        return rw.cmul(x, rw.v(other))
    if is_tensor_node(other):
        return rw.mul(x, rw.emit(aten.unsqueeze.default, rw.v(other), -1))
    return rw.scale(x, other)


@_rule(aten.div.Tensor, aten.div.Scalar, accepts=_numbers)
def _div(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    x, other = rw.cview(b["self"]), b["other"]
    if is_complex_node(other):
        return rw.cdiv(x, rw.v(other))
    if is_tensor_node(other):
        return rw.div(x, rw.emit(aten.unsqueeze.default, rw.v(other), -1))
    return rw.cdiv(x, other) if isinstance(other, complex) else rw.div(x, other)


@_rule(aten.add.Tensor, aten.add.Scalar, aten.sub.Tensor, aten.sub.Scalar, accepts=_numbers)
def _add(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    subtract = node.target in (aten.sub.Tensor, aten.sub.Scalar)
    alpha = -b["alpha"] if subtract else b["alpha"]
    x, other = rw.cview(b["self"]), b["other"]
    if is_tensor_node(other):
        return rw.add(x, rw.scale(rw.cview(other), alpha))
    return rw.add_number(x, complex(other) * alpha)


@_rule(aten.rsub.Scalar, accepts=_numbers)
def _rsub(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    return rw.add_number(rw.scale(rw.cview(b["self"]), -b["alpha"]), complex(b["other"]))


@_rule(aten.neg.default)
def _neg(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    return rw.emit(aten.neg.default, rw.v(b["self"]))


@_rule(aten.conj.default, aten._conj.default, aten.conj_physical.default)
def _conj(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    x = rw.v(b["self"])
    return rw.pack(rw.re(x), rw.emit(aten.neg.default, rw.im(x)))


@_rule(aten.real.default, aten.imag.default)
def _part(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    real, imag = rw.parts(rw.v(b["self"]))
    return real if node.target is aten.real.default else imag


@_rule(aten.abs.default)
def _abs(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    return rw.emit(aten.hypot.default, *rw.parts(rw.v(b["self"])))


@_rule(aten.angle.default)
def _angle(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    real, imag = rw.parts(rw.v(b["self"]))
    return rw.emit(aten.atan2.default, imag, real)


@_rule(aten.polar.default)
def _polar(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    r, theta = rw.v(b["abs"]), rw.v(b["angle"])
    return rw.pack(rw.mul(r, rw.emit(aten.cos.default, theta)),
                   rw.mul(r, rw.emit(aten.sin.default, theta)))


@_rule(aten.complex.default)
def _complex(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    return rw.pack(rw.v(b["real"]), rw.v(b["imag"]))


@_rule(aten.exp.default)
def _exp(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    real, imag = rw.parts(rw.v(b["self"]))
    e = rw.emit(aten.exp.default, real)
    return rw.pack(rw.mul(e, rw.emit(aten.cos.default, imag)),
                   rw.mul(e, rw.emit(aten.sin.default, imag)))


@_rule(aten.log.default)
def _log(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    real, imag = rw.parts(rw.v(b["self"]))
    modulus = rw.emit(aten.hypot.default, real, imag)
    return rw.pack(rw.emit(aten.log.default, modulus), rw.emit(aten.atan2.default, imag, real))


@_rule(aten.reciprocal.default)
def _reciprocal(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    real, imag = rw.parts(rw.v(b["self"]))
    den = rw.add(rw.mul(real, real), rw.mul(imag, imag))
    return rw.pack(rw.div(real, den), rw.div(rw.emit(aten.neg.default, imag), den))


@_rule(aten.square.default)
def _square(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    x = rw.v(b["self"])
    return rw.cmul(x, x)


@_rule(aten.mm.default, aten.bmm.default, aten.matmul.default)
def _matmul(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    other = b["mat2"] if "mat2" in b else b["other"]
    (a, c), (d, e) = rw.parts(rw.cview(b["self"])), rw.parts(rw.cview(other))

    def mm(p: fx.Node, q: fx.Node) -> fx.Node:
        return rw.emit(node.target, p, q)

    return rw.pack(rw.sub(mm(a, d), mm(c, e)), rw.add(mm(a, e), mm(c, d)))


@_rule(aten.sum.default, aten.sum.dim_IntList, aten.mean.default, aten.mean.dim)
def _reduce(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    x, dims = rw.v(b["self"]), b.get("dim")
    dims = [dims] if isinstance(dims, int) else dims
    dims = _shift(dims) if dims else list(range(_ndim(b["self"])))
    if not dims:  # a 0-dim tensor reduces to itself
        return x
    dtype = b.get("dtype")
    target = aten.mean.dim if node.target in (aten.mean.default, aten.mean.dim) else (
        aten.sum.dim_IntList)
    return rw.emit(target, x, dims, b.get("keepdim", False),
                   dtype=dtype.to_real() if dtype is not None else None)


@_rule(aten._to_copy.default, aten.to.dtype, accepts=_keeps_layout)
def _convert(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    dtype = node.meta["val"].dtype
    if dtype.is_complex:
        return rw.emit(aten._to_copy.default, rw.cview(b["self"]), dtype=dtype.to_real(),
                       device=b.get("device"))
    # complex -> real keeps the real part, as eager does (with a warning)
    return rw.emit(aten._to_copy.default, rw.re(rw.v(b["self"])), dtype=dtype,
                   device=b.get("device"))


@_rule(aten.where.self)
def _where(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    condition = rw.emit(aten.unsqueeze.default, rw.v(b["condition"]), -1)
    return rw.emit(aten.where.self, condition, rw.cview(b["self"]), rw.cview(b["other"]))


@_rule(aten.reshape.default, aten.view.default, aten._unsafe_view.default)
def _reshape(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    # reshape, not view: a rewritten value may be a fresh tensor where eager had a view
    shape = rw.v(b.get("shape", b.get("size")))
    return rw.emit(aten.reshape.default, rw.v(b["self"]), [*shape, 2])


@_rule(aten.expand.default)
def _expand(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    return rw.same(node, b, {"size": [*rw.v(b["size"]), 2]})


@_rule(aten.repeat.default)
def _repeat(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    return rw.same(node, b, {"repeats": [*rw.v(b["repeats"]), 1]})


@_rule(aten.permute.default)
def _permute(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    ndim = _ndim(b["self"])
    return rw.same(node, b, {"dims": [d % ndim for d in b["dims"]] + [ndim]})


@_rule(aten.numpy_T.default)
def _numpy_t(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    ndim = _ndim(b["self"])
    return rw.emit(aten.permute.default, rw.v(b["self"]), [*reversed(range(ndim)), ndim])


@_rule(aten.t.default)
def _t(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> fx.Node:
    x = rw.v(b["self"])
    return rw.emit(aten.transpose.int, x, 0, 1) if _ndim(b["self"]) == 2 else x


def _shift_dims(*names: str) -> Emit:
    """The op itself on the view, with the named dim arguments shifted past the trailing 2."""

    def emit(rw: _Rewriter, node: fx.Node, b: dict[str, Any]) -> Any:
        source = ({"tensors": [rw.cview(t) for t in b["tensors"]]} if "tensors" in b
                  else {"self": rw.cview(b["self"])})
        return rw.same(node, b, {**source, **{k: _shift(b[k]) for k in names if k in b}})

    return emit


_rule(aten.unsqueeze.default, aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims,
      aten.select.int, aten.slice.Tensor, aten.narrow.default, aten.unbind.int,
      aten.index_select.default, aten.split.Tensor, aten.split_with_sizes.default,
      aten.chunk.default, aten.cat.default, aten.stack.default, aten.flip.default,
      aten.sym_size.int)(_shift_dims("dim", "dims"))
_rule(aten.transpose.int)(_shift_dims("dim0", "dim1"))
_rule(aten.roll.default, accepts=lambda node, b: bool(b["dims"]))(_shift_dims("dims"))
# flatten of a 0-dim tensor adds a dimension that the view would put after the trailing 2
_rule(aten.flatten.using_ints, accepts=lambda node, b: _ndim(b["self"]) > 0)(
    _shift_dims("start_dim", "end_dim"))
