"""Declared learned state: what a model file may hold, checked when it is read.

Every learner class declares, next to ``_parameter_constraints``, the learned attributes
``save`` may write and ``load`` may set::

    _learned_state = {
        "W_": Array(("n_classes", "d")),          # float64 (K, d), finite, K = the n_classes parameter
        "t_": Integer(0),                          # a learned scalar: the same constraints as parameters
    }

A dimension is an int, the name of an int parameter (or of an already checked learned int
scalar), a product of those (``"n_classes*d"``), or a free symbol (``"d"``) that must be the
same in every array that uses it; a sum (``"d+1"``) is of bound terms only (arrays are checked
in the order of the declaration, so a symbol is bound by an earlier array). ``shape`` may also be a function of the
parameters returning such a tuple (``lambda p: ("n_classes", "d") if p["diagonal"] else ...``). ``None`` is any
length. ``save`` refuses an attribute that is not declared, so a new learner that forgets its
declaration fails the shared check suite's save/load round trip.

A model file of a fitted learner (one holding any learned state) must hold every declared
attribute, so a missing array cannot silently reset part of the state at its first use. A
learner names the attributes that a fitted model may lack (diagnostics of some fits,
``feature_names_in_`` without a DataFrame) in ``_optional_state``: a set of names, or a
function of the parameters returning one (``lambda p: () if p["warm_start"] else ("warm_l2_",)``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ._validation import check_param

__all__ = ["Array", "Real", "Flag", "check_learned_state"]


@dataclass(frozen=True)
class Real:
    """Any real number, NaN and infinities included (diagnostics such as an objective value)."""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)

    def describe(self) -> str:
        return "a real number"


@dataclass(frozen=True)
class Flag:
    """True or False."""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, bool)

    def describe(self) -> str:
        return "True or False"

#: dtype names an Array may declare -> accepted numpy dtypes (a "label" array: classes_ and the like)
_DTYPES = {
    "float64": lambda dt: dt == np.float64,
    "int64": lambda dt: dt == np.int64,
    "bool": lambda dt: dt == np.bool_,
    "str": lambda dt: dt.kind == "U",
    "label": lambda dt: dt.kind in "biufU" and dt.itemsize <= 1024,
}


@dataclass(frozen=True)
class Array:
    """A declared learned ndarray: ``shape`` (see the module docstring), ``dtype`` (one of
    'float64', 'int64', 'bool', 'str', 'label'), ``finite`` (floats must be finite)."""

    shape: tuple | Callable[[dict], tuple]
    dtype: str = "float64"
    finite: bool = True
    #: (low, high): every value in [low, high); each an int or a parameter name (labels: (0, "n_classes"))
    between: tuple | None = None

    def __post_init__(self):
        if self.dtype not in _DTYPES:
            raise ValueError(f"unknown dtype {self.dtype!r}; one of {sorted(_DTYPES)}.")


def _product(expr: str, env: dict[str, Any], symbols: dict[str, int]) -> tuple[int, list[str]]:
    """The value of a product of ints, int parameters and bound symbols (``"n_classes*d"``), and the
    terms that are not bound."""
    value = 1
    unbound = []
    for t in (t.strip() for t in expr.split("*")):
        if t.isdigit():
            value *= int(t)
        elif t in env and isinstance(env[t], numbers.Integral) and not isinstance(env[t], bool):
            value *= int(env[t])
        elif t in symbols:
            value *= symbols[t]
        else:
            unbound.append(t)
    return value, unbound


def _dim(expr: Any, env: dict[str, Any], symbols: dict[str, int], n: int, what: str) -> None:
    """Check one dimension ``n`` against its declaration ``expr``; binds free symbols."""
    if expr is None:
        return
    if isinstance(expr, numbers.Integral):
        if n != expr:
            raise ValueError(f"{what}: has length {n}, must be {expr}")
        return
    if "+" in str(expr):  # a sum of bound terms: every symbol already bound
        total = 0
        for part in str(expr).split("+"):
            value, unbound = _product(part, env, symbols)
            if unbound:
                raise ValueError(f"{what}: {unbound[0]!r} in {expr!r} is not bound by an earlier array")
            total += value
        if n != total:
            raise ValueError(f"{what}: has length {n}, must be {expr} = {total}")
        return
    value, unbound = _product(str(expr), env, symbols)
    if len(unbound) > 1:
        raise ValueError(f"{what}: two unbound symbols in {expr!r}")
    if not unbound:
        if n != value:
            raise ValueError(f"{what}: has length {n}, must be {expr} = {value}")
    else:
        if value == 0 or n % value:
            raise ValueError(f"{what}: has length {n}, not a multiple of {value} ({expr})")
        symbols[unbound[0]] = n // value


def check_learned_state(cls: type, params: dict[str, Any], arrays: dict[str, np.ndarray],
                        scalars: dict[str, Any]) -> None:
    """Raise ValueError unless every array and scalar is declared by ``cls._learned_state`` and
    matches its declaration (dtype, shape against ``params``, finiteness, scalar constraints)."""
    spec = getattr(cls, "_learned_state", None) or {}
    owner = cls.__name__
    for name in list(arrays) + list(scalars):
        if name not in spec:
            raise ValueError(f"{owner} has no learned attribute {name!r}; allowed: {sorted(spec)}.")
    if arrays or scalars:  # a fitted model: every declared attribute but the optional ones
        optional = getattr(cls, "_optional_state", None) or ()
        if callable(optional):
            optional = optional(params)
        for name, decl in spec.items():
            if name not in arrays and name not in scalars and name not in optional:
                kind = "array" if isinstance(decl, Array) else "attribute"
                raise ValueError(f"{owner}'s learned {kind} {name!r} is missing (a fitted {owner} holds every "
                                 f"attribute declared in _learned_state but {sorted(optional)}).")
    env: dict[str, Any] = dict(params)
    for name, value in scalars.items():
        decl = spec[name]
        if isinstance(decl, Array):
            raise ValueError(f"{owner}.{name} must be an array; got {type(value).__name__}.")
        try:
            check_param(name, value, decl, owner)
        except TypeError as e:
            raise ValueError(str(e).replace("parameter", "learned attribute", 1)) from None
        except ValueError as e:
            raise ValueError(str(e).replace("parameter", "learned attribute", 1)) from None
        env[name] = value
    symbols: dict[str, int] = {}
    for name in sorted(arrays, key=list(spec).index):  # declaration order: symbols bound before sums use them
        arr = arrays[name]
        decl = spec[name]
        if not isinstance(decl, Array):
            raise ValueError(f"{owner}.{name} must be a scalar; got an array.")
        what = f"{owner}.{name}"
        if not _DTYPES[decl.dtype](arr.dtype):
            raise ValueError(f"{what} must have dtype {decl.dtype}; got {arr.dtype}.")
        shape = decl.shape(env) if callable(decl.shape) else decl.shape  # parameters and learned scalars
        if arr.ndim != len(shape):
            raise ValueError(f"{what} must be {len(shape)}-D {tuple(shape)}; got shape {arr.shape}.")
        for i, (expr, n) in enumerate(zip(shape, arr.shape)):
            try:
                _dim(expr, env, symbols, n, f"{what} axis {i}")
            except ValueError as e:
                raise ValueError(f"{e} (shape {arr.shape}, declared {tuple(shape)}).") from None
        if decl.finite and arr.dtype.kind == "f" and not np.isfinite(arr).all():
            raise ValueError(f"{what} contains NaN or infinity.")
        if decl.between is not None and arr.size:
            low, high = (env[b] if isinstance(b, str) else b for b in decl.between)
            if arr.min() < low or arr.max() >= high:
                raise ValueError(f"{what} must hold values in [{low}, {high}); got {arr.min()}..{arr.max()}.")


def undeclared(learner: Any) -> list[str]:
    """Learned attributes of ``learner`` that its class does not declare (rng_ aside)."""
    spec = getattr(type(learner), "_learned_state", None) or {}
    return [n for n in learner._learned_attributes() if n != "rng_" and n not in spec]
