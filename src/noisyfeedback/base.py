"""The learner base class: parameters from the ``__init__`` signature, cloning, seeding, save/load.

Conventions (scikit-learn / river):

- ``__init__`` only stores its arguments; validation happens on first use
  (``_validate_params``), learned state is created lazily and ends in ``_``.
- ``learn``/``fit`` return ``self``.
- Randomness comes from ``numpy.random.Generator(PCG64(SeedSequence(seed)))``,
  stored as the learned attribute ``rng_`` so a saved learner continues the
  same random stream after ``load``.
- ``save(path)`` writes one ``.npz`` file: every learned ndarray attribute plus
  a JSON metadata record (class, parameters, scalar state, RNG state). No pickle.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import tempfile
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ._validation import AnySeed, check_param

__all__ = ["Learner", "make_rng", "load"]

FORMAT_VERSION = 1


def make_rng(seed: int | np.random.SeedSequence | None) -> np.random.Generator:
    """A PCG64 generator from a SeedSequence (no global state)."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return np.random.Generator(np.random.PCG64(ss))


class Learner:
    """Base class of every learner.

    Subclasses declare ``_parameter_constraints`` (name -> constraint) and
    ``_test_params`` (keyword arguments the shared check suite builds them with).
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {}
    _test_params: ClassVar[dict[str, Any]] = {}
    #: which feedback this learner consumes: "label", "bandit", "set", "target"
    feedback_kind: ClassVar[str] = "label"

    # ----------------------------------------------------------- parameters
    @classmethod
    def _get_param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        names = []
        for p in sig.parameters.values():
            if p.name == "self":
                continue
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"{cls.__name__}.__init__ must not take *args or **kwargs.")
            names.append(p.name)
        return names

    def get_params(self) -> dict[str, Any]:
        """The constructor arguments, by name."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> "Learner":
        """Set constructor arguments; learned state is discarded. Returns self."""
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for {type(self).__name__}. Valid parameters: {valid}."
                )
            setattr(self, name, value)
        self._reset()
        return self

    def clone(self, **params: Any) -> "Learner":
        """A fresh, unfitted learner with the same (or overridden) parameters."""
        kwargs = {k: _copy_param(v) for k, v in self.get_params().items()}
        kwargs.update(params)
        return type(self)(**kwargs)

    def __repr__(self) -> str:
        sig = inspect.signature(type(self).__init__)
        parts = []
        for name, value in self.get_params().items():
            default = sig.parameters[name].default
            if default is not inspect.Parameter.empty and _equal(value, default):
                continue
            parts.append(f"{name}={_short_repr(value)}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def _validate_params(self) -> None:
        owner = type(self).__name__
        constraints = dict(self._parameter_constraints)
        if "seed" in self._get_param_names():
            constraints.setdefault("seed", AnySeed())
        for name, constraint in constraints.items():
            check_param(name, getattr(self, name), constraint, owner)
        self._check_params()

    def _check_params(self) -> None:
        """Joint checks between parameters (e.g. rho0 + rho1 < 1); subclasses override."""

    # --------------------------------------------------------------- state
    def _learned_attributes(self) -> list[str]:
        return sorted(k for k in vars(self) if k.endswith("_") and not k.startswith("_"))

    def _reset(self) -> None:
        for name in self._learned_attributes():
            delattr(self, name)

    @property
    def is_fitted(self) -> bool:
        return any(name != "rng_" for name in self._learned_attributes())

    def _get_rng(self) -> np.random.Generator:
        if not hasattr(self, "rng_"):
            self._validate_params()
            self.rng_ = make_rng(getattr(self, "seed", None))
        return self.rng_

    # ----------------------------------------------------------- save/load
    def save(self, path: str | os.PathLike) -> Path:
        """Write the learner to ``path`` (.npz with arrays and a JSON metadata record), atomically."""
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_suffix(path.suffix + ".npz") if path.suffix else path.with_suffix(".npz")
        arrays: dict[str, np.ndarray] = {}
        scalars: dict[str, Any] = {}
        rng_state = None
        for name in self._learned_attributes():
            value = getattr(self, name)
            if name == "rng_":
                rng_state = value.bit_generator.state
            elif isinstance(value, np.ndarray):
                if value.dtype == object:
                    raise TypeError(f"Cannot save object array attribute {name!r}.")
                arrays[name] = value
            elif isinstance(value, (bool, int, float, str, type(None), np.integer, np.floating)):
                scalars[name] = value.item() if isinstance(value, np.generic) else value
            elif isinstance(value, (list, tuple)) and all(
                isinstance(v, (bool, int, float, str)) for v in value
            ):
                scalars[name] = list(value)
            else:
                raise TypeError(f"Cannot save attribute {name!r} of type {type(value).__name__}.")
        params = {}
        for k, v in self.get_params().items():
            params[k] = _param_to_json(k, v)
        meta = {
            "format_version": FORMAT_VERSION,
            "class": f"{type(self).__module__}.{type(self).__qualname__}",
            "params": params,
            "scalars": scalars,
            "rng_state": rng_state,
        }
        from . import __version__

        meta["library_version"] = __version__
        payload = {f"arr__{k}": v for k, v in arrays.items()}
        payload["__metadata__"] = np.array(json.dumps(meta, default=_json_default))
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz.tmp")
        os.close(fd)
        try:
            with open(tmp, "wb") as fh:
                np.savez(fh, **payload)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Learner":
        """Read a learner written by :meth:`save`; the class is taken from the file."""
        learner = load(path)
        if not isinstance(learner, cls):
            raise TypeError(f"{path} holds a {type(learner).__name__}, not a {cls.__name__}.")
        return learner


class EstimatorMixin:
    """Our conventions for the scikit-learn estimators (UMA, the teacher SVMs), which are not
    :class:`Learner` s: the same ``.npz`` + JSON ``save`` (read back by :func:`load`), ``clone``,
    and parameter checks from ``_parameter_constraints``."""

    _parameter_constraints: ClassVar[dict[str, Any]] = {}

    def save(self, path: str | os.PathLike) -> Path:
        """Write the fitted model to ``path`` (.npz arrays + JSON metadata, atomically; no pickle).

        Object arrays of strings (``classes_`` from object labels, ``feature_names_in_`` from a
        DataFrame) are stored as unicode arrays."""
        swapped = {}
        for name in self._learned_attributes():
            v = getattr(self, name)
            if isinstance(v, np.ndarray) and v.dtype == object and all(isinstance(e, str) for e in v.ravel()):
                swapped[name] = v
                setattr(self, name, v.astype(str))
        try:
            return Learner.save(self, path)
        finally:
            for name, v in swapped.items():
                setattr(self, name, v)

    def clone(self, **params):
        """A fresh, unfitted copy with the same (or overridden) parameters."""
        from sklearn.base import clone

        return clone(self).set_params(**params)

    def _validate_params(self) -> None:
        owner = type(self).__name__
        for name, constraint in self._parameter_constraints.items():
            check_param(name, getattr(self, name), constraint, owner)


def load(path: str | os.PathLike) -> Learner:
    """Load any learner saved with :meth:`Learner.save`."""
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["__metadata__"]))
        arrays = {k[len("arr__"):]: data[k] for k in data.files if k.startswith("arr__")}
    module_name, _, qualname = meta["class"].rpartition(".")
    if not module_name.startswith("noisyfeedback"):
        raise ValueError(f"{path} names class {meta['class']!r}, which is not a noisyfeedback learner.")
    klass = getattr(importlib.import_module(module_name), qualname)
    params = {k: _param_from_json(v) for k, v in meta["params"].items()}
    learner = klass(**params)
    for k, v in arrays.items():
        setattr(learner, k, v)
    for k, v in meta["scalars"].items():
        setattr(learner, k, v)
    if meta.get("rng_state") is not None:
        state = meta["rng_state"]
        bg = getattr(np.random, state["bit_generator"])()
        bg.state = state
        learner.rng_ = np.random.Generator(bg)
    return learner


# ------------------------------------------------------------------ helpers
def _param_to_json(name: str, v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return {"__ndarray__": v.tolist(), "dtype": str(v.dtype)}
    if isinstance(v, np.random.SeedSequence):
        return {"__seedsequence__": v.entropy, "spawn_key": list(v.spawn_key)}
    if isinstance(v, np.generic):
        return v.item()
    if v is None or isinstance(v, (bool, int, float, str, list, tuple, dict)):
        return v
    raise TypeError(f"Cannot save parameter {name!r} of type {type(v).__name__}.")


def _param_from_json(v: Any) -> Any:
    if isinstance(v, dict) and "__ndarray__" in v:
        return np.array(v["__ndarray__"], dtype=v["dtype"])
    if isinstance(v, dict) and "__seedsequence__" in v:
        return np.random.SeedSequence(v["__seedsequence__"], spawn_key=tuple(v["spawn_key"]))
    return v


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _copy_param(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, (list, dict)):
        import copy

        return copy.deepcopy(v)
    return v


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return False
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:
        return False


def _short_repr(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"array(shape={v.shape})"
    return repr(v)
