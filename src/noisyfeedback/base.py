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

import functools
import inspect
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar

import numpy as np

from ._io import atomic_path, json_default
from ._validation import AnySeed, check_param

__all__ = ["Learner", "make_rng", "load"]

FORMAT_VERSION = 1


def make_rng(seed: int | np.random.SeedSequence | None) -> np.random.Generator:
    """A PCG64 generator from a SeedSequence (no global state)."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return np.random.Generator(np.random.PCG64(ss))


@dataclass(frozen=True)
class Tags:
    """What a learner is, declared on its class (as scikit-learn's estimator tags): every front door
    (the command line, TOML configs, the service, the catalogue) reads these instead of guessing.

    ``family``: the feedback it is built for — "bandit" (one label shown, right or wrong; the
    Perceptron, its full-label baseline, too), "diluted" (a set of labels), "label_noise" (labels
    corrupted by a confusion matrix), "regression" (noisy real-valued targets) or "teachers" (labels
    from several teachers, some of them evil). ``online``: ``nf.simulate`` runs it round by round
    (``act``/``learn``, a compiled loop). ``batch``: it is fitted on a whole data set
    (``fit(X, y)``/``predict``). ``servable``: the decision service can deploy it (``act`` with
    propensities, learning from rewards).
    """

    family: str
    online: bool = False
    batch: bool = False
    servable: bool = False



class NonFiniteUpdate(ValueError):
    """A learning step refused because it would make the learned state non-finite; ``row`` is its index
    (the rows before it are learned, it and the rows after it are not)."""

    def __init__(self, message: str, row: int):
        super().__init__(message)
        self.row = row


#: parameter types compared by value as they are (the common case, kept cheap)
_PLAIN = frozenset((type(None), bool, int, float, str))


def _frozen(value: Any) -> Any:
    """A comparable stand-in for a parameter value (see `Learner._params_key`)."""
    if value is None or isinstance(value, (bool, int, float, str, bytes, np.generic)):
        return (type(value), value)
    if isinstance(value, np.ndarray):
        return (np.ndarray, value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_frozen(v) for v in value))
    if isinstance(value, dict):
        return (dict, tuple((k, _frozen(v)) for k, v in value.items()))
    return (object, _Same(value))


class _Same:
    """Equal only to a wrapper of the very same object (which it keeps alive, so its id is not reused)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj

    __hash__ = None  # type: ignore[assignment]


@functools.lru_cache(maxsize=None)
def _param_names(cls: type) -> tuple[str, ...]:
    """The ``__init__`` parameters of a learner class, read once per class (a signature costs about a
    millisecond, and a service validates parameters on every request)."""
    names = []
    for p in inspect.signature(cls.__init__).parameters.values():
        if p.name == "self":
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"{cls.__name__}.__init__ must not take *args or **kwargs.")
        names.append(p.name)
    return tuple(names)

class Learner:
    """Base class of every learner.

    Subclasses declare ``_parameter_constraints`` (name -> constraint), ``_learned_state``
    (learned attribute -> `Array` or a scalar constraint: what a
    model file may set, see `noisyfeedback._state`) and ``_test_params`` (keyword
    arguments the shared check suite builds them with).
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {}
    _learned_state: ClassVar[dict[str, Any]] = {}
    #: declared learned attributes a fitted model may lack (a set, or a function of the parameters)
    _optional_state: ClassVar[Any] = frozenset()
    _test_params: ClassVar[dict[str, Any]] = {}
    #: which feedback this learner consumes: "label", "bandit", "set", "target"
    feedback_kind: ClassVar[str] = "label"
    #: what it is (family; online, batch, servable): see `Tags`; every learner declares its own
    _tags: ClassVar[Tags | None] = None

    # ----------------------------------------------------------- parameters
    @classmethod
    def _get_param_names(cls) -> list[str]:
        return list(_param_names(cls))

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor arguments, by name (``deep`` is accepted for scikit-learn's ``clone``;
        no parameter of ours is itself an estimator, so it changes nothing)."""
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

    def __sklearn_tags__(self):
        """scikit-learn (>= 1.6) estimator tags, so a learner can be a Pipeline step: a classifier
        (label, bandit and set feedback) or a regressor (targets); sparse input accepted."""
        from sklearn.utils import ClassifierTags, InputTags, RegressorTags, Tags, TargetTags

        regressor = self.feedback_kind == "target"
        return Tags(estimator_type="regressor" if regressor else "classifier",
                    target_tags=TargetTags(required=True), transformer_tags=None,
                    classifier_tags=None if regressor else ClassifierTags(),
                    regressor_tags=RegressorTags() if regressor else None,
                    input_tags=InputTags(sparse=True))

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

    def _params_key(self) -> tuple:
        """A value that changes whenever a parameter does (numbers and strings by value, arrays and lists
        by content, other objects by identity): validation is skipped while it equals the last key that
        validated, so a learner called one row at a time (the service) checks its parameters once."""
        key = []
        for name in _param_names(type(self)):
            value = getattr(self, name)
            kind = type(value)
            key.append((kind, value) if kind in _PLAIN else _frozen(value))
        return tuple(key)

    def _params_unchanged(self) -> bool:
        """True when the parameters are those of the last successful validation (see `_params_key`)."""
        return self.__dict__.get("_validated_key") == self._params_key()

    def _params_validated(self) -> None:
        """Record that the current parameters passed validation (and drop what was derived from others)."""
        self.__dict__["_validated_key"] = self._params_key()
        self.__dict__["_derived"] = {}

    def _derived_from_params(self, name: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` (a pure function of the parameters, e.g. the flip rates as arrays), computed once
        while the parameters stay those last validated; never to be modified by the caller."""
        cache = self.__dict__.get("_derived")
        if cache is None or not self._params_unchanged():
            return compute()
        if name not in cache:
            cache[name] = compute()
        return cache[name]

    def _validate_params(self) -> None:
        """Check every parameter, unless none changed since the last check passed (every entry point
        validates: parameters may have been set since fitting; a service calls them once a request)."""
        if self._params_unchanged():
            return
        owner = type(self).__name__
        constraints = dict(self._parameter_constraints)
        if "seed" in self._get_param_names():
            constraints.setdefault("seed", AnySeed())
        for name, constraint in constraints.items():
            check_param(name, getattr(self, name), constraint, owner)
        self._check_params()
        self._params_validated()

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
        from ._state import undeclared

        missing = undeclared(self)
        if missing:
            raise TypeError(
                f"{type(self).__name__} does not declare its learned attributes {missing} in "
                "_learned_state (see noisyfeedback._state.Array); nf.load would refuse them."
            )
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
            # the learned arrays written: nf.load refuses a file that lacks one of them
            "arrays": sorted(arrays),
        }
        from ._version import __version__

        meta["library_version"] = __version__
        payload = {f"arr__{k}": v for k, v in arrays.items()}
        payload["__metadata__"] = np.array(json.dumps(meta, default=json_default))
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, **payload)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Learner":
        """Read a learner written by `save`; the class is taken from the file."""
        learner = load(path)
        if not isinstance(learner, cls):
            raise TypeError(f"{path} holds a {type(learner).__name__}, not a {cls.__name__}.")
        return learner


class EstimatorMixin:
    """Our conventions for the scikit-learn estimators (UMA, the teacher SVMs), which are not
    `Learner` s: the same ``.npz`` + JSON ``save`` (read back by `load`), ``clone``,
    and parameter checks from ``_parameter_constraints``."""

    _parameter_constraints: ClassVar[dict[str, Any]] = {}
    _learned_state: ClassVar[dict[str, Any]] = {}
    #: feature_names_in_ exists only when fitted on a DataFrame
    _optional_state: ClassVar[Any] = frozenset({"feature_names_in_"})
    _tags: ClassVar[Tags | None] = None  # see Tags; every estimator declares its own
    # the learned attributes and ``load`` are those of a Learner
    _learned_attributes = Learner._learned_attributes
    load = classmethod(Learner.load.__func__)

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


#: the keys of a model file's JSON metadata record
_META_KEYS = {"format_version", "class", "params", "scalars", "rng_state", "library_version", "arrays"}
#: numpy dtype kinds a parameter array may have in a model file (no objects, no bytes)
_PARAM_ARRAY_KINDS = "biuf"


class _Bad(Exception):
    """What is wrong with a model file (re-raised as ValueError naming the file)."""


def load(path: str | os.PathLike) -> Learner:
    """Load a learner saved with `Learner.save`.

    A model file is data, never code: only a class in `noisyfeedback.registry.LEARNERS` is
    built, with its declared parameters (checked by the same constraints as in use), then only its
    declared learned arrays and scalars (``_learned_state``: names, dtypes, shapes against the
    parameters, finite values; a fitted model must hold every one but ``_optional_state``) and a
    PCG64 random state are set. Anything else -- an unknown class,
    key or ``format_version``, a damaged or foreign file -- raises one ``ValueError`` naming the file.
    """
    path = Path(path)
    try:
        return _load(path)
    except _Bad as e:
        raise ValueError(f"{path} is not a valid noisyfeedback model file: {e}") from None


def _read_npz(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    import zipfile

    if not path.is_file():
        raise FileNotFoundError(f"no model file at {str(path)!r}.")
    if not zipfile.is_zipfile(path):
        raise _Bad("not an .npz archive (truncated, or another format such as a bare .npy).")
    try:
        with zipfile.ZipFile(path) as zf:
            size = sum(info.file_size for info in zf.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise _Bad(f"cannot be read ({type(e).__name__}: {e}).") from None
    from ._validation import check_memory

    try:  # a compressed archive claiming more than this machine holds: refused before inflating
        check_memory(size, "its arrays")
    except ValueError as e:
        raise _Bad(str(e)) from None
    try:
        with np.load(path, allow_pickle=False) as data:
            if not hasattr(data, "files"):
                raise _Bad("not an .npz archive.")
            names = list(data.files)
            if "__metadata__" not in names:
                raise _Bad("no __metadata__ record.")
            unknown = [k for k in names if k != "__metadata__" and not k.startswith("arr__")]
            if unknown:
                raise _Bad(f"unknown entries {unknown}.")
            raw = data["__metadata__"]
            arrays = {k[len("arr__"):]: data[k] for k in names if k.startswith("arr__")}
    except _Bad:
        raise
    except Exception as e:  # zipfile.BadZipFile, EOFError, OSError, zlib.error, ValueError ...
        raise _Bad(f"cannot be read ({type(e).__name__}: {e}).") from None
    if raw.dtype.kind != "U" or raw.ndim != 0:
        raise _Bad("__metadata__ must be a JSON string.")
    try:
        meta = json.loads(str(raw))
    except ValueError as e:
        raise _Bad(f"__metadata__ is not JSON ({e}).") from None
    if not isinstance(meta, dict):
        raise _Bad("__metadata__ must be a JSON object.")
    for name, arr in arrays.items():
        if arr.dtype.kind not in "biufU":
            raise _Bad(f"array {name!r} has unsupported dtype {arr.dtype}.")
    return meta, arrays


def _load(path: Path) -> Learner:
    from . import registry

    meta, arrays = _read_npz(path)
    unknown = sorted(set(meta) - _META_KEYS)
    if unknown:
        raise _Bad(f"unknown metadata keys {unknown}; allowed: {sorted(_META_KEYS)}.")
    if meta.get("format_version") != FORMAT_VERSION or isinstance(meta.get("format_version"), bool):
        raise _Bad(f"unknown format_version {meta.get('format_version')!r}; this library reads {FORMAT_VERSION}.")
    name = meta.get("class")
    targets = {t.replace(":", "."): n for n, t in registry.LEARNERS.items()}
    if not isinstance(name, str) or (name not in targets and name not in registry.LEARNERS):
        raise _Bad(f"class {name!r} is not a registered learner (noisyfeedback.registry.LEARNERS: "
                   f"{', '.join(registry.LEARNERS)}).")
    klass = registry.resolve_learner(targets.get(name, name))
    raw_params = meta.get("params", {})
    scalars = meta.get("scalars", {})
    if not isinstance(raw_params, dict) or not isinstance(scalars, dict):
        raise _Bad("params and scalars must be JSON objects.")
    allowed = klass._get_param_names()
    unknown = sorted(set(raw_params) - set(allowed))
    if unknown:
        raise _Bad(f"unknown parameters {unknown} for {klass.__name__}; allowed: {allowed}.")
    params = {k: _param_from_json(k, v) for k, v in raw_params.items()}
    try:
        learner = klass(**params)
        learner._validate_params()
    except (TypeError, ValueError) as e:
        raise _Bad(str(e)) from None
    full_params = learner.get_params()
    for k, v in scalars.items():
        if isinstance(v, list):
            raise _Bad(f"learned attribute {k!r} must be a scalar.")
    from ._state import check_learned_state

    try:
        check_learned_state(klass, full_params, arrays, scalars)
    except ValueError as e:
        raise _Bad(str(e)) from None
    listed = meta.get("arrays")  # files written before the list existed have none
    if listed is not None:
        if not isinstance(listed, list) or not all(isinstance(a, str) for a in listed):
            raise _Bad("arrays must be a JSON list of names.")
        missing = sorted(set(listed) - set(arrays))
        if missing:
            raise _Bad(f"{klass.__name__}'s learned array {missing[0]!r} is missing (the file lists {listed}).")
        extra = sorted(set(arrays) - set(listed))
        if extra:
            raise _Bad(f"array {extra[0]!r} is not among the arrays the file lists ({listed}).")
    for k, v in arrays.items():
        setattr(learner, k, v)
    for k, v in scalars.items():
        setattr(learner, k, v)
    state = meta.get("rng_state")
    if state is not None:
        learner.rng_ = _rng_from_state(state)
    return learner


def _rng_from_state(state: Any) -> np.random.Generator:
    """A PCG64 generator from a saved state (the only bit generator a model file may name)."""
    if not isinstance(state, dict) or state.get("bit_generator") != "PCG64":
        raise _Bad("rng_state must be the state of a PCG64 bit generator.")
    bg = np.random.PCG64()
    try:
        bg.state = state
    except (TypeError, ValueError, KeyError, OverflowError) as e:
        raise _Bad(f"invalid rng_state ({e}).") from None
    return np.random.Generator(bg)


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


def _param_from_json(name: str, v: Any) -> Any:
    """A parameter value from a model file: JSON scalars and lists, numeric arrays, SeedSequences."""
    if isinstance(v, dict):
        try:
            if set(v) == {"__ndarray__", "dtype"}:
                dtype = np.dtype(v["dtype"])
                if dtype.kind not in _PARAM_ARRAY_KINDS:
                    raise _Bad(f"parameter {name!r}: unsupported array dtype {dtype}.")
                return np.array(v["__ndarray__"], dtype=dtype)
            if set(v) == {"__seedsequence__", "spawn_key"}:
                entropy, key = v["__seedsequence__"], v["spawn_key"]
                if not isinstance(entropy, int) or isinstance(entropy, bool) or entropy < 0 \
                        or not isinstance(key, list) or not all(isinstance(i, int) and i >= 0 for i in key):
                    raise _Bad(f"parameter {name!r}: invalid SeedSequence.")
                return np.random.SeedSequence(entropy, spawn_key=tuple(key))
        except (TypeError, ValueError) as e:
            raise _Bad(f"parameter {name!r}: {e}") from None
        raise _Bad(f"parameter {name!r}: unsupported value {v!r}.")
    return v


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
