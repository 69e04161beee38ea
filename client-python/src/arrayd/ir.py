"""Portable IR kernels written in Python: every memory access is bounds-checked by the daemon (proven, or
guarded), so such kernels need no ``--allow-native-source``.

A kernel is a function that declares its parameters and states its body on a builder::

    @arrayd.kernel
    def saxpy(k):
        n = k.scalar("n", "i64", min=0)
        a = k.scalar("a", "f32")
        x = k.buffer("x", "f32", "read", extent=n)
        y = k.buffer("y", "f32", "read_write", extent=n)
        i = k.let("i", k.global_id(0))
        with k.when(i < n):
            y[i] = a * x[i] + y[i]

Expressions use Python's operators (``+ - * / % < <= > >= & | ^ << >>``, unary ``-`` and ``~``; ``.eq()`` and
``.ne()`` for equality); Python numbers take the type of the other operand. ``with k.when(c):`` /
``with k.otherwise():``, ``with k.loop("j", start, end) as j:``, ``k.local(...)``, ``k.barrier()``, mutable
``k.var(...)`` with ``.set`` / ``.add``. When the daemon refuses a kernel, :class:`arrayd.CompileError` names
the Python line of the statement or expression it points at.
"""
from __future__ import annotations

import contextlib
import linecache
import os
import re
import sys
from typing import Any, Callable, Iterator, Sequence

from . import _dtypes
from ._errors import CompileError, InvalidArgument
from .v1 import common_pb2, ir_pb2

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_FLOATS = ("f32", "f64")


def _where() -> tuple[str, int]:
    """The caller's file and line: the first frame outside this package."""
    f = sys._getframe(1)
    while f is not None and (os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _PACKAGE_DIR
                             or f.f_code.co_filename == contextlib.__file__):
        f = f.f_back
    return (f.f_code.co_filename, f.f_lineno) if f is not None else ("<unknown>", 0)


class Expr:
    """An IR expression with its static type ("f32", "i64", "bool", ...) and where it was written."""

    __slots__ = ("proto", "type", "loc", "children")

    def __init__(self, proto: ir_pb2.IrExpr, type_: str | None, children: dict[str, "Expr"] | None = None):
        self.proto = proto
        self.type = type_
        self.loc = _where()
        self.children = children or {}

    # arithmetic
    def __add__(self, o): return _binary("OP_ADD", self, o)
    def __radd__(self, o): return _binary("OP_ADD", o, self)
    def __sub__(self, o): return _binary("OP_SUB", self, o)
    def __rsub__(self, o): return _binary("OP_SUB", o, self)
    def __mul__(self, o): return _binary("OP_MUL", self, o)
    def __rmul__(self, o): return _binary("OP_MUL", o, self)
    def __truediv__(self, o): return _binary("OP_DIV", self, o)
    def __rtruediv__(self, o): return _binary("OP_DIV", o, self)
    def __floordiv__(self, o): return _binary("OP_DIV", self, o)
    def __mod__(self, o): return _binary("OP_REM", self, o)
    def __rmod__(self, o): return _binary("OP_REM", o, self)
    def __pow__(self, o): return _binary("OP_POW", self, o)
    def __and__(self, o): return _binary("OP_AND", self, o)
    def __rand__(self, o): return _binary("OP_AND", o, self)
    def __or__(self, o): return _binary("OP_OR", self, o)
    def __ror__(self, o): return _binary("OP_OR", o, self)
    def __xor__(self, o): return _binary("OP_XOR", self, o)
    def __lshift__(self, o): return _binary("OP_SHL", self, o)
    def __rshift__(self, o): return _binary("OP_SHR", self, o)
    def __neg__(self): return _unary("OP_NEG", self)
    def __invert__(self): return _unary("OP_NOT", self)
    def __abs__(self): return _unary("OP_ABS", self)
    # comparisons (equality by method: == stays Python's identity)
    def __lt__(self, o): return _binary("OP_LT", self, o)
    def __le__(self, o): return _binary("OP_LE", self, o)
    def __gt__(self, o): return _binary("OP_GT", self, o)
    def __ge__(self, o): return _binary("OP_GE", self, o)
    def eq(self, o): return _binary("OP_EQ", self, o)
    def ne(self, o): return _binary("OP_NE", self, o)

    def __bool__(self):
        raise TypeError("an IR expression has no Python truth value: use `with k.when(cond):`, ir.select or & / |")

    def cast(self, dtype: Any) -> "Expr":
        return cast(self, dtype)

    def __repr__(self) -> str:
        return f"ir.Expr({self.type})"


class Var(Expr):
    """A mutable variable (``k.var``): ``.set(value)`` assigns it, ``.add`` / ``.max`` / ``.min`` accumulate."""

    __slots__ = ("name", "_kernel")

    def __init__(self, kernel: "KernelBuilder", name: str, type_: str):
        super().__init__(ir_pb2.IrExpr(var=name), type_)
        self.name = name
        self._kernel = kernel

    def set(self, value: Any) -> None:
        v = _coerce(value, self.type)
        self._kernel._stmt(ir_pb2.IrStmt(assign=ir_pb2.IrAssign(name=self.name, value=v.proto)), {"assign.value": v})

    def _acc(self, op: str, value: Any) -> None:
        v = _coerce(value, self.type)
        self._kernel._stmt(ir_pb2.IrStmt(accumulate=ir_pb2.IrAccumulate(
            target=self.name, op=getattr(ir_pb2.IrAccumulate, op), value=v.proto)), {"accumulate.value": v})

    def add(self, value: Any) -> None: self._acc("OP_ADD", value)
    def max(self, value: Any) -> None: self._acc("OP_MAX", value)
    def min(self, value: Any) -> None: self._acc("OP_MIN", value)


class Array:
    """A buffer parameter or a local array: ``a[i]`` loads, ``a[i] = v`` stores, ``a.accumulate(i, v)`` adds."""

    def __init__(self, kernel: "KernelBuilder", name: str, dtype: str):
        self._kernel = kernel
        self.name = name
        self.dtype = dtype

    @property
    def _compute_type(self) -> str:
        return "f32" if self.dtype in ("f16", "bf16") else self.dtype

    def __getitem__(self, index: Any) -> Expr:
        i = _index(index)
        return Expr(ir_pb2.IrExpr(load=ir_pb2.IrLoad(array=self.name, index=i.proto)), self._compute_type,
                    {"load.index": i})

    def __setitem__(self, index: Any, value: Any) -> None:
        i = _index(index)
        v = _coerce(value, self._compute_type)
        self._kernel._stmt(ir_pb2.IrStmt(store=ir_pb2.IrStore(array=self.name, index=i.proto, value=v.proto)),
                           {"store.index": i, "store.value": v})

    def accumulate(self, index: Any, value: Any, op: str = "add") -> None:
        i = _index(index)
        v = _coerce(value, self._compute_type)
        self._kernel._stmt(ir_pb2.IrStmt(accumulate=ir_pb2.IrAccumulate(
            target=self.name, index=i.proto, op=getattr(ir_pb2.IrAccumulate, "OP_" + op.upper()), value=v.proto)),
            {"accumulate.index": i, "accumulate.value": v})

    def __repr__(self) -> str:
        return f"ir.Array({self.name!r}, {self.dtype})"


class _Stmt:
    __slots__ = ("proto", "loc", "exprs", "bodies")

    def __init__(self, proto: ir_pb2.IrStmt, exprs: dict[str, Expr]):
        self.proto = proto
        self.loc = _where()
        self.exprs = exprs
        self.bodies: dict[str, list[_Stmt]] = {}


class KernelBuilder:
    """What a kernel function gets: parameters, builtins and statements."""

    def __init__(self, name: str):
        self.name = name
        self._params: list[tuple[ir_pb2.IrParam, tuple[str, int], tuple[str, str]]] = []
        self._blocks: list[list[_Stmt]] = [[]]
        self._max_dim = 0
        self._names = 0

    # -- parameters
    def buffer(self, name: str, dtype: Any, access: str = "read_write", *, extent: Any = None) -> Array:
        """A buffer parameter; ``extent``: the fewest elements it holds (an expression of scalar parameters, or
        a parameter's name), which lets the daemon prove accesses in bounds. Parameters are the kernel's
        arguments in the order they are declared."""
        d = _dtypes.name_of(dtype)
        acc = {"read": common_pb2.ACCESS_READ, "write": common_pb2.ACCESS_WRITE,
               "read_write": common_pb2.ACCESS_READ_WRITE}[access.lower()]
        p = ir_pb2.IrParam(name=name, buffer=ir_pb2.IrBufferParam(dtype=_dtypes.wire(d), access=acc))
        if extent is not None:
            p.buffer.min_extent.CopyFrom((param(extent) if isinstance(extent, str) else _coerce(extent, "i64")).proto)
        self._params.append((p, _where(), ("buffer", d)))
        return Array(self, name, d)

    def scalar(self, name: str, dtype: Any, *, min: int | None = None, max: int | None = None) -> Expr:
        """A scalar parameter; integer ``min`` / ``max`` bounds (checked at launch) help proofs."""
        d = _dtypes.name_of(dtype)
        p = ir_pb2.IrParam(name=name, scalar=ir_pb2.IrScalarParam(dtype=_dtypes.wire(d)))
        if min is not None:
            p.scalar.min = min
        if max is not None:
            p.scalar.max = max
        self._params.append((p, _where(), ("scalar", d)))
        return Expr(ir_pb2.IrExpr(param=name), d)

    # -- builtins
    def _builtin(self, kind: str, dim: int) -> Expr:
        self._max_dim = builtins_max(self._max_dim, dim + 1)
        return Expr(ir_pb2.IrExpr(builtin=ir_pb2.IrBuiltin(kind=getattr(ir_pb2.IrBuiltin, kind), dim=dim)), "i64")

    def global_id(self, dim: int = 0) -> Expr: return self._builtin("KIND_GLOBAL_ID", dim)
    def global_size(self, dim: int = 0) -> Expr: return self._builtin("KIND_GLOBAL_SIZE", dim)
    def local_id(self, dim: int = 0) -> Expr: return self._builtin("KIND_LOCAL_ID", dim)
    def local_size(self, dim: int = 0) -> Expr: return self._builtin("KIND_LOCAL_SIZE", dim)
    def group_id(self, dim: int = 0) -> Expr: return self._builtin("KIND_GROUP_ID", dim)
    def num_groups(self, dim: int = 0) -> Expr: return self._builtin("KIND_NUM_GROUPS", dim)

    # -- statements
    def _stmt(self, proto: ir_pb2.IrStmt, exprs: dict[str, Expr]) -> _Stmt:
        s = _Stmt(proto, exprs)
        self._blocks[-1].append(s)
        return s

    def let(self, name: str, value: Any) -> Expr:
        """An immutable local: the value once, by name."""
        v = _coerce(value, None)
        self._stmt(ir_pb2.IrStmt(let=ir_pb2.IrLet(name=name, value=v.proto)), {"let.value": v})
        return Expr(ir_pb2.IrExpr(var=name), v.type)

    def var(self, name: str, initial: Any, dtype: Any = None) -> Var:
        """A mutable local (see :class:`Var`)."""
        v = _coerce(initial, _dtypes.name_of(dtype) if dtype is not None else None)
        self._stmt(ir_pb2.IrStmt(let=ir_pb2.IrLet(name=name, value=v.proto, mutable=True)), {"let.value": v})
        return Var(self, name, v.type)

    def local(self, name: str, dtype: Any, size: int) -> Array:
        """An array in the work-group's local memory, of ``size`` elements."""
        d = _dtypes.name_of(dtype)
        self._stmt(ir_pb2.IrStmt(local_array=ir_pb2.IrLocalArray(name=name, dtype=_dtypes.wire(d), size=size)), {})
        return Array(self, name, d)

    def barrier(self) -> None:
        """Every work-item of the group waits here (local memory written before is visible after)."""
        self._stmt(ir_pb2.IrStmt(barrier=ir_pb2.IrBarrier()), {})

    @contextlib.contextmanager
    def when(self, condition: Expr) -> Iterator[None]:
        """``with k.when(c):`` runs its block where ``c`` holds; a ``with k.otherwise():`` right after it, where not."""
        c = _coerce(condition, "bool")
        s = self._stmt(ir_pb2.IrStmt(branch=ir_pb2.IrIf(condition=c.proto)), {"branch.condition": c})
        s.bodies["branch.then_body"] = []
        self._blocks.append(s.bodies["branch.then_body"])
        try:
            yield
        finally:
            self._blocks.pop()

    @contextlib.contextmanager
    def otherwise(self) -> Iterator[None]:
        block = self._blocks[-1]
        if not block or block[-1].proto.WhichOneof("kind") != "branch" or "branch.else_body" in block[-1].bodies:
            raise SyntaxError("k.otherwise() must follow a `with k.when(...)` block directly")
        block[-1].bodies["branch.else_body"] = []
        self._blocks.append(block[-1].bodies["branch.else_body"])
        try:
            yield
        finally:
            self._blocks.pop()

    @contextlib.contextmanager
    def loop(self, var: str, start: Any, end: Any, step: int = 1) -> Iterator[Expr]:
        """``with k.loop("j", 0, n) as j:`` repeats its block for j = start, start + step, ... below end."""
        s0 = _coerce(start, None if isinstance(start, Expr) else ("i64" if not isinstance(end, Expr) else end.type))
        e0 = _coerce(end, s0.type)
        s = self._stmt(ir_pb2.IrStmt(loop=ir_pb2.IrFor(var=var, start=s0.proto, end=e0.proto, step=step)),
                       {"loop.start": s0, "loop.end": e0})
        s.bodies["loop.body"] = []
        self._blocks.append(s.bodies["loop.body"])
        try:
            yield Expr(ir_pb2.IrExpr(var=var), s0.type)
        finally:
            self._blocks.pop()


def builtins_max(a: int, b: int) -> int:
    return a if a > b else b


# -- expressions
_INT_TYPES = ("i32", "i64", "u8")


def param(name: str, dtype: Any = "i64") -> Expr:
    """A scalar parameter by name (e.g. a buffer's ``extent`` naming a parameter declared after it)."""
    return Expr(ir_pb2.IrExpr(param=name), _dtypes.name_of(dtype))


def const(value: Any, dtype: Any) -> Expr:
    """A constant of ``dtype``."""
    d = "bool" if dtype in (bool, "bool") else _dtypes.name_of(dtype)
    c = ir_pb2.IrConst()
    if d == "bool":
        c.bool = bool(value)
    elif d in ("f32", "f16", "bf16"):
        c.f32 = float(value)
        d = "f32"
    elif d == "f64":
        c.f64 = float(value)
    else:
        setattr(c, d, int(value))
    return Expr(ir_pb2.IrExpr(constant=c), d)


def f32(v: float) -> Expr: return const(v, "f32")
def f64(v: float) -> Expr: return const(v, "f64")
def i32(v: int) -> Expr: return const(v, "i32")
def i64(v: int) -> Expr: return const(v, "i64")
def u8(v: int) -> Expr: return const(v, "u8")


def _coerce(value: Any, type_: str | None) -> Expr:
    """``value`` as an expression: a Python number becomes a constant of ``type_`` (or i64 / f32 / bool)."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):
        return const(value, "bool")
    if isinstance(value, int):
        return const(value, type_ if type_ in _INT_TYPES + _FLOATS else "i64")
    if isinstance(value, float):
        return const(value, type_ if type_ in _FLOATS else "f32")
    raise TypeError(f"{value!r}: not an IR expression or a number")


def _index(index: Any) -> Expr:
    return _coerce(index, "i64")


_COMPARISONS = {"OP_EQ", "OP_NE", "OP_LT", "OP_LE", "OP_GT", "OP_GE", "OP_LOGICAL_AND", "OP_LOGICAL_OR"}


def _binary(op: str, left: Any, right: Any) -> Expr:
    lt = left.type if isinstance(left, Expr) else None
    rt = right.type if isinstance(right, Expr) else None
    l = _coerce(left, rt)
    r = _coerce(right, l.type if lt is None else lt)
    t = "bool" if op in _COMPARISONS else l.type
    return Expr(ir_pb2.IrExpr(binary=ir_pb2.IrBinary(op=getattr(ir_pb2.IrBinary, op), left=l.proto, right=r.proto)), t,
                {"binary.left": l, "binary.right": r})


def _unary(op: str, operand: Any) -> Expr:
    x = _coerce(operand, None)
    return Expr(ir_pb2.IrExpr(unary=ir_pb2.IrUnary(op=getattr(ir_pb2.IrUnary, op), operand=x.proto)), x.type,
                {"unary.operand": x})


def sqrt(x): return _unary("OP_SQRT", x)
def exp(x): return _unary("OP_EXP", x)
def log(x): return _unary("OP_LOG", x)
def tanh(x): return _unary("OP_TANH", x)
def floor(x): return _unary("OP_FLOOR", x)
def ceil(x): return _unary("OP_CEIL", x)
def minimum(a, b): return _binary("OP_MIN", a, b)
def maximum(a, b): return _binary("OP_MAX", a, b)
def logical_and(a, b): return _binary("OP_LOGICAL_AND", a, b)
def logical_or(a, b): return _binary("OP_LOGICAL_OR", a, b)


def select(condition: Any, if_true: Any, if_false: Any) -> Expr:
    """``if_true`` where ``condition`` holds, else ``if_false`` (both evaluated)."""
    c = _coerce(condition, "bool")
    t = _coerce(if_true, if_false.type if isinstance(if_false, Expr) else None)
    f = _coerce(if_false, t.type)
    return Expr(ir_pb2.IrExpr(select=ir_pb2.IrSelect(condition=c.proto, if_true=t.proto, if_false=f.proto)), t.type,
                {"select.condition": c, "select.if_true": t, "select.if_false": f})


def fma(a: Any, b: Any, c: Any) -> Expr:
    """a * b + c, rounded once."""
    x = _coerce(a, None)
    y = _coerce(b, x.type)
    z = _coerce(c, x.type)
    return Expr(ir_pb2.IrExpr(fma=ir_pb2.IrFma(a=x.proto, b=y.proto, c=z.proto)), x.type,
                {"fma.a": x, "fma.b": y, "fma.c": z})


def cast(x: Any, dtype: Any) -> Expr:
    """``x`` converted to ``dtype`` (or ``bool``)."""
    v = _coerce(x, None)
    if dtype in (bool, "bool"):
        return Expr(ir_pb2.IrExpr(cast=ir_pb2.IrCast(to_bool=True, operand=v.proto)), "bool", {"cast.operand": v})
    d = _dtypes.name_of(dtype)
    return Expr(ir_pb2.IrExpr(cast=ir_pb2.IrCast(dtype=_dtypes.wire(d), operand=v.proto)), d, {"cast.operand": v})


# -- kernels and modules
class IrKernel:
    """A kernel built by :func:`kernel`: its wire form, its parameters, and where each part was written."""

    def __init__(self, builder: KernelBuilder, grid_dims: int | None, local_size: Sequence[int],
                 relaxed_math: bool = False):
        self.name = builder.name
        self._builder = builder
        self.proto = ir_pb2.IrKernel(name=builder.name, grid_dims=grid_dims or builtins_max(1, builder._max_dim),
                                     local_size=list(local_size), params=[p for p, _, _ in builder._params],
                                     body=[_materialize(s) for s in builder._blocks[0]], relaxed_math=relaxed_math)
        self.params = [sig for _, _, sig in builder._params]

    def locate(self, path: str) -> tuple[str, int] | None:
        """The Python file and line of the node a daemon path (after ``kernels[k].``) names."""
        m = re.match(r"params\[(\d+)\]", path)
        if m:
            i = int(m.group(1))
            return self._builder._params[i][1] if i < len(self._builder._params) else None
        stmts = self._builder._blocks[0]
        node: Any = None
        rest = path
        m = re.match(r"body\[(\d+)\]\.?", rest)
        while m:
            i = int(m.group(1))
            if i >= len(stmts):
                break
            node = stmts[i]
            rest = rest[m.end():]
            nested = next(((k, rest[len(k):]) for k in node.bodies if rest.startswith(k + "[")), None)
            if nested is None:
                break
            stmts = node.bodies[nested[0]]
            rest = nested[1]
            m = re.match(r"\[(\d+)\]\.?", rest)
        if node is None:
            return None
        loc = node.loc
        children = node.exprs
        while children:
            key = next((k for k in sorted(children, key=len, reverse=True) if rest.startswith(k)), None)
            if key is None:
                break
            expr = children[key]
            if expr.proto.WhichOneof("kind") in ("param", "var"):
                break  # a reference made where it was declared: the statement's line says more
            loc = expr.loc
            rest = rest[len(key):].lstrip(".")
            children = expr.children
        return loc


def _materialize(s: _Stmt) -> ir_pb2.IrStmt:
    p = ir_pb2.IrStmt()
    p.CopyFrom(s.proto)
    for key, body in s.bodies.items():
        kind, field = key.split(".")
        getattr(getattr(p, kind), field).extend(_materialize(b) for b in body)
    return p


def kernel(fn: Callable | None = None, *, name: str | None = None, grid_dims: int | None = None,
           local_size: Sequence[int] = (), relaxed_math: bool = False) -> Any:
    """Builds an IR kernel from a function of a :class:`KernelBuilder` (usable as ``@kernel`` or
    ``@kernel(grid_dims=2, local_size=(16, 16))``). ``grid_dims`` defaults to the highest dimension the body
    uses; ``local_size`` fixes the work-group size (needed with local memory and barriers).
    ``relaxed_math=True`` lets the daemon reassociate float additions and multiplications (a loop that
    accumulates can then be vectorized), fuse multiply-adds and ignore the sign of zero: results may differ
    from the strict ones in their last bits (the CPU backend uses it; OpenCL and CUDA keep the strict order)."""
    def build(f: Callable) -> IrKernel:
        b = KernelBuilder(name or f.__name__)
        f(b)
        return IrKernel(b, grid_dims, local_size, relaxed_math)
    return build(fn) if fn is not None else build


class Module:
    """Kernels compiled together; maps the daemon's refusals back to Python lines."""

    def __init__(self, kernels: Sequence[IrKernel]):
        self.kernels = list(kernels)
        self.proto = ir_pb2.IrModule(kernels=[k.proto for k in self.kernels])

    def signature(self, name: str) -> list[tuple[str, str]]:
        for k in self.kernels:
            if k.name == name:
                return k.params
        raise KeyError(name)

    def locate(self, e: InvalidArgument) -> CompileError:
        m = re.search(r"kernels\[(\d+)\]\.([^:\s]*)", e.message)
        loc = None
        if m and int(m.group(1)) < len(self.kernels):
            loc = self.kernels[int(m.group(1))].locate(m.group(2))
        if loc is None:
            return CompileError(e.code, e.message)
        return CompileError(e.code, e.message, f"{loc[0]}:{loc[1]}", linecache.getline(loc[0], loc[1]))


def module(kernels: Sequence[Any]) -> Module:
    for k in kernels:
        if not isinstance(k, IrKernel):
            raise TypeError(f"{k!r}: not an IR kernel (expected: a function decorated with @arrayd.kernel)")
    return Module(kernels)
