"""The build layer: specs (names and parameters, from any front door) -> built learners, feedback channels,
datasets and candidate streams.

The command line (``simulate``), the VW commands (``train``), the TOML experiment configs
(`noisyfeedback.lab`) and the decision service build here and nowhere else, over the registry of
names (`noisyfeedback.registry`). This module is the one place for

- **names**: `key` (case, spaces, ``-`` and ``_`` ignored: ``"Breast Cancer"`` is ``breast_cancer``
  for `noisyfeedback.registry.dataset_info` and `noisyfeedback.datasets.load` alike) and the
  lookups `learner_class`, `channel_class`, `catalogue_learner_class`;
- **parameters**: `parse_params` (the ``NAME=VALUE`` text of every command-line option);
- **defaults**: a parameter not given takes the class's own default, for every front door (the
  command line's ``--gamma``, ``--rho0``, ``--rho1`` included); the only defaults set here are those of
  a *pairing* — the channel a learner runs under when none is named (`DEFAULT_CHANNEL`,
  `DEFAULT_CHANNEL_PARAMS`) and the hashed features of a catalogue learner read from VW text
  (`VW_LEARNER_DEFAULTS`);
- **how a learner and a channel fit together**: `check_pair` (the feedback a learner learns from
  and a channel gives), `build_channel_for` (the set size ``m`` of Diluted taken from the learner),
  `build_learner_for` (UMA told the channel's known confusion matrix), `n_classes_of`
  (``n_classes`` inferred from the labels);
- **errors**: `UnknownName` (with a "did you mean"), `BadParameter` (owner, parameter,
  value, reason) and `Mismatch`, all ``ValueError``; each front door renders them in its own
  words (flags, HTTP fields, TOML key paths) from their fields, never from their text.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from typing import Any

from . import registry
from ._names import BadParameter, BuildError, UnknownName, key, suggest

__all__ = [
    "DEFAULT_CHANNEL",
    "DEFAULT_CHANNEL_PARAMS",
    "VW_LEARNER_DEFAULTS",
    "BadParameter",
    "BuildError",
    "Mismatch",
    "UnknownName",
    "build_channel",
    "build_channel_for",
    "build_learner",
    "build_learner_for",
    "build_stream",
    "catalogue_learner_class",
    "channel_class",
    "check_pair",
    "default_channel",
    "key",
    "learner_class",
    "learner_role",
    "load_dataset",
    "n_classes_of",
    "parse_params",
    "stream_function",
    "suggest",
]

#: a learner's ``feedback_kind`` -> the channel it runs under when none is named
DEFAULT_CHANNEL = {"label": "FullLabel", "bandit": "NoisyBandit", "set": "Diluted", "target": "GaussianNoise"}
#: parameters of a default channel unless given: label noise of variance 1 for the regressors, where ORS's
#: scaling pays (at variance 0 ORS's known-variance rules are NLMS and the comparison means nothing)
DEFAULT_CHANNEL_PARAMS = {"GaussianNoise": {"variance": 1.0}}
#: parameters of a catalogue learner read from VW text unless given (VW's text is hashed; VW's -b 18)
VW_LEARNER_DEFAULTS = {"features": "hashed", "bits": 18}


class Mismatch(BuildError):
    """A learner and a channel that do not fit: the learner learns from ``wanted`` feedback, which the
    channel (``channel``; None: no channel at all) does not give; ``fits`` names the channels that do."""

    def __init__(self, learner: str, wanted: str, channel: str | None, fits: tuple[str, ...]):
        self.learner, self.wanted, self.channel, self.fits = learner, wanted, channel, tuple(fits)
        if channel is None:  # no channel gives it: the learner does not run on (X, y) data
            super().__init__(f"no feedback channel gives {learner}'s {wanted!r} feedback.")
            return
        super().__init__(f"{learner} learns from {wanted!r} feedback, which {channel} does not give; use "
                         f"{' or '.join(self.fits) or '(none registered)'}.")


# ---------------------------------------------------------------- names
def learner_class(name: str | type) -> type:
    """The registered learner class called ``name`` (`key` spelling; `UnknownName` with a
    "did you mean" otherwise). A class is returned as it is.

    >>> learner_class("rc-nbf").__name__
    'RCNBF'
    """
    return name if isinstance(name, type) else registry.resolve_learner(name)


def channel_class(name: str | type) -> type:
    """The registered feedback channel called ``name`` (its aliases included: ``bandit``, ``full``, ...)."""
    return name if isinstance(name, type) else registry.resolve_channel(name)


def stream_function(name: str) -> Callable[..., Any]:
    """The registered candidate-stream function called ``name``."""
    return registry.resolve_stream(name)


def catalogue_learner_class(name: str | type) -> type:
    """The catalogue learner (actions described by features) for ``name``: a catalogue learner itself, or
    the catalogue twin of an index learner (``SquareCB`` -> ``CatalogueSquareCB``).

    >>> catalogue_learner_class("epsilon-greedy").__name__
    'CatalogueEpsilonGreedy'
    """
    # the class named, or its twin, first: only that module is imported (the whole registry imports
    # scikit-learn and SciPy through the batch learners, which a VW command never uses); the same answers
    # as the registry-wide lookup below, which remains for the error message
    try:
        klass = learner_class(name)
    except UnknownName:
        klass = None
    if klass is not None:
        for cand in (klass.__name__, f"Catalogue{klass.__name__}"):
            if cand in registry.LEARNERS:
                cls = registry.resolve_learner(cand)
                if registry.learner_tags(cls).family == "catalogue":
                    return klass if cand == klass.__name__ else cls
    served = registry.learners_where(family="catalogue")
    allowed = tuple(served) + tuple(n[len("Catalogue"):] for n in served if n.startswith("Catalogue"))
    try:
        klass = learner_class(name)
    except UnknownName:
        raise UnknownName("catalogue learner", name, suggest(name, allowed), allowed) from None
    if klass.__name__ in served:
        return klass
    twin = f"Catalogue{klass.__name__}"
    if twin in served:
        return registry.resolve_learner(twin)
    raise UnknownName("catalogue learner", name, (), allowed,
                      f"{klass.__name__} has no action-feature form; the catalogue learners are "
                      f"{', '.join(served)} (also by their index names, e.g. SquareCB).")


def learner_role(cls: type) -> str:
    """How a learner class is run, from its tags: 'online', 'regression', 'teachers' or 'batch'."""
    tags = registry.learner_tags(cls)
    if tags.online:
        return "regression" if tags.family == "regression" else "online"
    return "teachers" if tags.family == "teachers" else "batch"


# ------------------------------------------------------------- parameters
_WORDS = {"true": True, "false": False, "none": None, "null": None}


def parse_params(items: list[str] | None, flag: str = "--param") -> dict[str, Any]:
    """``["gamma=0.05", "seed=3", "scaling=opt"]`` -> {"gamma": 0.05, "seed": 3, "scaling": "opt"}: the
    ``NAME=VALUE`` text of every command-line option (a Python literal, true/false/none, else the text).

    >>> parse_params(["gamma=0.05", "diag=true", "name=opt", "m=3"])
    {'gamma': 0.05, 'diag': True, 'name': 'opt', 'm': 3}
    """
    out: dict[str, Any] = {}
    for item in items or []:
        name, sep, raw = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name.isidentifier():
            raise BadParameter(flag, name, item, "syntax",
                               f"{flag} takes NAME=VALUE (e.g. {flag} gamma=0.05); got {item!r}.")
        raw = raw.strip()
        if raw.lower() in _WORDS:
            out[name] = _WORDS[raw.lower()]
            continue
        try:
            out[name] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            out[name] = raw
    return out


# ---------------------------------------------------------------- learners
def build_learner(name: str | type, n_classes: int | None = None, **params: Any):
    """A registered learner: ``cls(n_classes=..., **params)``, ``n_classes`` given only to the classes
    that take it. A parameter the class does not take, or one it needs and is not given, is a
    `BadParameter` (reason "unknown" or "missing").

    >>> build_learner("banditron", n_classes=3, gamma=0.2)
    Banditron(n_classes=3, gamma=0.2)
    >>> build_learner("SquareCB", n_classes=3, gamma=0.2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    noisyfeedback.build.BadParameter: learner SquareCB has no parameter 'gamma'; its parameters are: ...
    """
    cls = learner_class(name)
    allowed = registry.learner_params(cls)
    unknown = [k for k in params if k not in allowed or k == "n_classes"]
    if unknown:
        shown = [p for p in allowed if p != "n_classes"] or ["(none)"]
        raise BadParameter(cls.__name__, unknown[0], params[unknown[0]], "unknown",
                           f"learner {cls.__name__} has no parameter {unknown[0]!r}; its parameters are: "
                           f"{', '.join(shown)}.")
    if "n_classes" in allowed and n_classes is not None:
        params = {"n_classes": int(n_classes), **params}
    sig = inspect.signature(cls.__init__)
    missing = [n for n in allowed if n in sig.parameters and n not in params
               and sig.parameters[n].default is inspect.Parameter.empty]
    if missing:
        raise BadParameter(cls.__name__, missing[0], None, "missing",
                           f"learner {cls.__name__} needs {', '.join(missing)}.")
    return cls(**params)


# ---------------------------------------------------------------- channels
def build_channel(name: str | type, n_classes: int | None = None, **params: Any):
    """A registered feedback channel from its name and parameters (a parameter it does not take is a
    `BadParameter`). ``ConfusionNoise`` takes a matrix ``C``, or a symmetric flip rate: ``noise=ρ``
    or ``C=ρ`` (a number), giving `noisyfeedback.feedback.symmetric_confusion` over ``n_classes``.

    >>> build_channel("bandit", rho0=0.1, rho1=0.2)
    NoisyBandit(rho0=0.1, rho1=0.2)
    >>> build_channel("confusion", n_classes=3, noise=0.3).C[0]
    array([0.7 , 0.15, 0.15])
    """
    cls = channel_class(name)
    allowed = registry.channel_params(cls)
    unknown = [k for k in params if k not in allowed]
    if unknown:
        raise BadParameter(cls.__name__, unknown[0], params[unknown[0]], "unknown",
                           f"feedback {cls.__name__} has no parameter {unknown[0]!r}; its parameters are: "
                           f"{', '.join(allowed) or '(none)'}.")
    if cls.__name__ != "ConfusionNoise":
        missing = [n for n, d in allowed.items() if d is inspect.Parameter.empty and n not in params]
        if missing:
            raise BadParameter(cls.__name__, missing[0], None, "missing",
                               f"feedback {cls.__name__} needs {', '.join(missing)}.")
        return cls(**params)
    C, noise = params.get("C"), params.get("noise")
    if isinstance(C, (int, float)) and not isinstance(C, bool) and noise is None:
        C, noise = None, C  # a number for C: the uniform noise rate
    if (C is None) == (noise is None):
        raise BadParameter(cls.__name__, "C", None, "choice",
                           "The 'C' parameter of ConfusionNoise: give exactly one of C (a K x K matrix) or noise "
                           "(a symmetric flip rate in [0, 1)).")
    if C is not None:
        import numpy as np

        return cls(np.asarray(C, dtype=np.float64))
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not 0 <= noise < 1:
        raise BadParameter(cls.__name__, "noise", noise, "invalid",
                           f"The 'noise' parameter of ConfusionNoise must be in [0, 1). Got {noise!r} instead.")
    if n_classes is None:
        raise BadParameter(cls.__name__, "n_classes", None, "missing",
                           "ConfusionNoise(noise=...) needs the number of classes")
    from .feedback import symmetric_confusion

    return cls(symmetric_confusion(int(n_classes), noise))


# ---------------------------------------------------------------- data
def load_dataset(name: Any, **kwargs: Any):
    """``(X, y)`` of a named dataset (or a data file): `noisyfeedback.datasets.load`."""
    from . import datasets

    return datasets.load(name, **kwargs)


def build_stream(name: str, **kwargs: Any):
    """A registered candidate stream (`noisyfeedback.registry.STREAMS`) built with ``kwargs``."""
    return stream_function(name)(**kwargs)


def n_classes_of(y: Any) -> int | None:
    """The number of classes of integer labels 0..K-1 (at least 2); None for other targets (real-valued,
    empty).

    >>> n_classes_of([0, 2, 1]), n_classes_of([0.5, 1.5]), n_classes_of([0, 0])
    (3, None, 2)
    """
    import numpy as np

    y = np.asarray(y)
    if y.size == 0 or not np.issubdtype(y.dtype, np.integer):
        return None
    return max(int(y.max()) + 1, 2)


# ------------------------------------------------------- learner + channel
def default_channel(learner: str | type) -> str:
    """The channel a learner runs under when none is named: ConfusionNoise for a batch (label-noise)
    learner, else the one giving the learner's ``feedback_kind`` (`DEFAULT_CHANNEL`)."""
    cls = learner_class(learner)
    if learner_role(cls) == "batch":
        return "ConfusionNoise"
    kind = getattr(cls, "feedback_kind", "label")
    if kind not in DEFAULT_CHANNEL:
        raise Mismatch(cls.__name__, str(kind), None, ())
    return DEFAULT_CHANNEL[kind]


def check_pair(learner: str | type, channel: str | type) -> None:
    """Refuse (`Mismatch`) a channel that does not give the feedback the learner learns from."""
    lcls, ccls = learner_class(learner), channel_class(channel)
    wanted = getattr(lcls, "feedback_kind", None)
    if wanted is not None and ccls.kind != wanted:
        fits = tuple(n for n, c in registry.channel_classes().items() if c.kind == wanted)
        raise Mismatch(lcls.__name__, wanted, ccls.__name__, fits)


def build_channel_for(learner: str | type, name: str | type | None = None, n_classes: int | None = None,
                      learner_params: dict[str, Any] | None = None, **params: Any):
    """The channel a learner runs under: ``name`` (default `default_channel`), checked against the
    learner (`check_pair`), with `DEFAULT_CHANNEL_PARAMS`. Parameters the channel shares with
    the learner mean the same to both and are passed on from ``learner_params`` unless given: the set
    size ``m`` of MC-DBF and ``Diluted`` (the learner's own default included); the flip rates are not
    passed on (a learner's ``rho0`` is what it assumes, the channel's what it does)."""
    lcls = learner_class(learner)
    ccls = channel_class(name if name is not None else default_channel(lcls))
    check_pair(lcls, ccls)
    fparams = registry.channel_params(ccls)
    defaults = {k: p.default for k, p in inspect.signature(lcls.__init__).parameters.items()
                if k == "m" and p.default is not p.empty}
    shared = {k: v for k, v in {**defaults, **(learner_params or {})}.items()
              if k in fparams and k not in ("gamma", "rho0", "rho1") and k not in params}
    return build_channel(ccls, n_classes, **{**DEFAULT_CHANNEL_PARAMS.get(ccls.__name__, {}), **shared, **params})


def build_learner_for(learner: str | type, n_classes: int | None = None, channel: Any = None, **params: Any):
    """A learner built to run under ``channel``: a batch learner that corrects a known confusion matrix
    (UMA's ``confusion``) is given the channel's ``C`` unless ``confusion`` is given."""
    cls = learner_class(learner)
    if learner_role(cls) == "batch" and "confusion" in registry.learner_params(cls) and "confusion" not in params \
            and hasattr(channel, "C"):
        params["confusion"] = channel.C  # UMA corrects the noise the channel adds (known C)
    return build_learner(cls, n_classes, **params)
