"""The registry of names: names -> learner classes, feedback channels, candidate streams and datasets.

The command line, the VW commands, the TOML experiment configs (`noisyfeedback.lab`), the decision
service and `noisyfeedback.load` all resolve names here, and build through the layer above it,
`noisyfeedback.build` (specs -> learners, channels, datasets, streams), so a name means the same
thing everywhere (the datasets' own table is `noisyfeedback.datasets`, with `dataset_info`
saying whether a name needs files from a data directory). The registry owns the aliases (``bandit`` is
``NoisyBandit`` for every front door; names are looked up by `key`: case, ``-``, ``_`` and spaces
ignored). ("Catalogue" elsewhere means the action-feature learners and their candidate rounds.)

What a learner *is* — its family (bandit, diluted, label_noise, regression, teachers), whether it
runs online, is fitted in batch, can be served — it declares itself, on its class
(`noisyfeedback.base.Tags`); `learner_tags` reads it. A new learner is one file plus
one line in `LEARNERS`.

Everything is named by import path and imported on first use, so importing the registry imports
nothing else and any part of the package may use it.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from ._names import UnknownName, key, suggest

__all__ = ["LEARNERS", "CHANNELS", "CHANNEL_ALIASES", "key", "learner_classes", "resolve_learner",
           "channel_classes", "resolve_channel", "channel_names", "channel_params", "learner_tags", "learners_where",
           "learner_params", "dataset_names", "dataset_info", "STREAMS", "resolve_stream", "UnknownName"]

#: class name -> "module:qualname"; the explicit list of classes a model file may name
LEARNERS: dict[str, str] = {
    "Perceptron": "noisyfeedback.learners.bandit.perceptron:Perceptron",
    "Banditron": "noisyfeedback.learners.bandit.banditron:Banditron",
    "RCNBF": "noisyfeedback.learners.bandit.rcnbf:RCNBF",
    "RCINE": "noisyfeedback.learners.bandit.rcine:RCINE",
    "BPA": "noisyfeedback.learners.bandit.bpa:BPA",
    "SOBA": "noisyfeedback.learners.bandit.soba:SOBA",
    "SquareCB": "noisyfeedback.learners.bandit.squarecb:SquareCB",
    "EpsilonGreedy": "noisyfeedback.learners.bandit.epsilon_greedy:EpsilonGreedy",
    "MCSLP": "noisyfeedback.learners.diluted.mcslp:MCSLP",
    "MCDBF": "noisyfeedback.learners.diluted.mcdbf:MCDBF",
    "UMA": "noisyfeedback.learners.label_noise.uma:UMA",
    "NLMS": "noisyfeedback.learners.regression.nlms:NLMS",
    "ORS": "noisyfeedback.learners.regression.ors:ORS",
    "CorrectedLogisticRegression": "noisyfeedback.learners.label_noise.corrected_logistic:CorrectedLogisticRegression",
    "WeightedRLS": "noisyfeedback.learners.regression.wrls:WeightedRLS",
    "LinearSVM": "noisyfeedback.learners.teachers.svm:LinearSVM",
    "EvilTeacherSVM": "noisyfeedback.learners.teachers.evil_teachers:EvilTeacherSVM",
    "TeacherSGD": "noisyfeedback.learners.teachers.teacher_sgd:TeacherSGD",
    "CatalogueSquareCB": "noisyfeedback.learners.catalogue.squarecb:CatalogueSquareCB",
    "CatalogueEpsilonGreedy": "noisyfeedback.learners.catalogue.epsilon_greedy:CatalogueEpsilonGreedy",
}

#: candidate streams (catalogue learners' data: rounds of candidates with ground truth) -> "module:function"
STREAMS: dict[str, str] = {
    "ranking": "noisyfeedback.datasets.ranking:ranking_stream",
    "multiclass-candidates": "noisyfeedback.datasets.ranking:multiclass_candidates",
}

#: channel name -> "module:qualname"
CHANNELS: dict[str, str] = {
    "FullLabel": "noisyfeedback.feedback:FullLabel",
    "NoisyBandit": "noisyfeedback.feedback:NoisyBandit",
    "Diluted": "noisyfeedback.feedback:Diluted",
    "ConfusionNoise": "noisyfeedback.feedback:ConfusionNoise",
    "GaussianNoise": "noisyfeedback.feedback:GaussianNoise",
}

#: short names of the channels, the same for every front door
CHANNEL_ALIASES: dict[str, str] = {
    "full": "FullLabel", "label": "FullLabel", "bandit": "NoisyBandit", "confusion": "ConfusionNoise",
    "gaussian": "GaussianNoise", "dilute": "Diluted",
}

#: where the datasets' own catalogue is (name -> generator, bundled set or files)
_DATASETS = "noisyfeedback.datasets"


def _import(target: str) -> Any:
    module, _, qualname = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split(".") if qualname else ():
        obj = getattr(obj, part)
    return obj


# ---------------------------------------------------------------- learners
def learner_classes() -> dict[str, type]:
    """Every registered learner class, by class name."""
    return {name: _import(target) for name, target in LEARNERS.items()}


def _resolve(table: dict[str, str], name: Any, what: str, aliases: dict[str, str] | None = None) -> type:
    by_key = {key(n): n for n in table}
    by_key.update({key(a): n for a, n in (aliases or {}).items()})
    found = by_key.get(key(name)) if isinstance(name, str) else None
    if found is None:
        extra = f" (or {', '.join(aliases)})" if aliases else ""
        close = suggest(name, [*table, *(aliases or {})])
        hint = f" (did you mean {by_key[key(close[0])]!r}?)" if close else ""
        raise UnknownName(what, name, tuple(by_key[key(c)] for c in close), (*table, *(aliases or {})),
                          f"unknown {what} {name!r}{hint}; allowed: {', '.join(table)}{extra}.")
    return _import(table[found])


def resolve_learner(name: str) -> type:
    """The registered learner class called ``name`` (case-insensitive; '-', '_' and spaces ignored).

    >>> resolve_learner("rc-nbf").__name__
    'RCNBF'
    """
    return _resolve(LEARNERS, name, "learner")


def resolve_stream(name: str):
    """The registered candidate-stream function called ``name``.

    >>> resolve_stream("ranking").__name__
    'ranking_stream'
    """
    return _resolve(STREAMS, name, "candidate stream")


def learner_tags(learner: Any):
    """The `Tags` a learner class (or instance) declares.

    >>> t = learner_tags(resolve_learner("UMA"))
    >>> t.family, t.online, t.batch, t.servable
    ('label_noise', False, True, False)
    """
    cls = learner if isinstance(learner, type) else type(learner)
    tags = getattr(cls, "_tags", None)
    if tags is None:
        raise TypeError(f"{cls.__name__} declares no tags: set the class attribute _tags = "
                        "noisyfeedback.base.Tags(family=..., online=..., batch=..., servable=...).")
    return tags


def learners_where(**conditions: Any) -> list[str]:
    """The registered learner names whose tags match, e.g. ``learners_where(servable=True)``.

    >>> learners_where(family="regression")
    ['NLMS', 'ORS', 'WeightedRLS']
    """
    out = []
    for name, cls in learner_classes().items():
        tags = learner_tags(cls)
        if all(getattr(tags, k) == v for k, v in conditions.items()):
            out.append(name)
    return out


def learner_params(cls: type) -> list[str]:
    """The constructor parameters of a learner class (``n_classes`` included where it takes one)."""
    getter = getattr(cls, "_get_param_names", None)
    if getter is not None:
        return list(getter())
    return [n for n in inspect.signature(cls.__init__).parameters if n != "self"]


# ---------------------------------------------------------------- channels
def channel_classes() -> dict[str, type]:
    """Every registered feedback channel class, by class name."""
    return {name: _import(target) for name, target in CHANNELS.items()}


def resolve_channel(name: str) -> type:
    """The registered feedback channel called ``name`` (or one of `CHANNEL_ALIASES`).

    >>> resolve_channel("noisy_bandit").__name__, resolve_channel("bandit").__name__
    ('NoisyBandit', 'NoisyBandit')
    """
    return _resolve(CHANNELS, name, "feedback channel", CHANNEL_ALIASES)


def channel_names() -> dict[str, str]:
    """Every name a channel answers to (its class name and its aliases) -> its class name."""
    return {**{n: n for n in CHANNELS}, **CHANNEL_ALIASES}


def channel_params(cls: type) -> dict[str, Any]:
    """The parameters a channel is built with, and their defaults (``inspect.Parameter.empty``: none).
    ConfusionNoise takes its matrix ``C`` or a symmetric flip rate ``noise`` (exactly one of them)."""
    if cls.__name__ == "ConfusionNoise":
        return {"C": None, "noise": None}
    sig = inspect.signature(cls.__init__)
    return {n: p.default for n, p in sig.parameters.items() if n != "self"
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


# ---------------------------------------------------------------- datasets
def dataset_names() -> list[str]:
    """Every dataset name (generated, bundled and file-based), in the datasets' order."""
    return _import(_DATASETS).known_names()


def dataset_info(name: str, data_dir: Any = None) -> dict[str, Any]:
    """The datasets' row of a dataset: ``kind``, ``target`` ("classification" | "regression"),
    ``needs_data_dir`` (its files come from a data directory), sizes, ``available``, ...

    >>> info = dataset_info("ors-synthetic")
    >>> info["name"], info["target"], info["needs_data_dir"]
    ('ors_synthetic', 'regression', False)
    """
    rows = _import(_DATASETS).catalog(data_dir)
    for row in rows:
        if key(name) in {key(row["name"]), *(key(a) for a in row["aliases"])}:
            return row
    names = tuple(r["name"] for r in rows)
    raise UnknownName("dataset", name, suggest(name, names), names)
