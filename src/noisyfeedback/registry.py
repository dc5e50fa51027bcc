"""One registry of what the library offers by name: learner classes and feedback channels.

Used by :func:`noisyfeedback.load` (only a class listed here may be built from a model file),
by the command line and by the experiment configs. A new learner is one line in
:data:`LEARNERS`; names are looked up case-insensitively, ignoring ``-``, ``_`` and spaces.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["LEARNERS", "CHANNELS", "key", "learner_classes", "resolve_learner", "channel_classes",
           "resolve_channel", "STREAMS", "resolve_stream"]

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


def key(name: str) -> str:
    """The lookup key of a name: lower case, without ``-``, ``_`` and spaces."""
    return re.sub(r"[\s_\-]+", "", str(name)).lower()


def _import(target: str) -> type:
    import importlib

    module, _, qualname = target.partition(":")
    return getattr(importlib.import_module(module), qualname)


def learner_classes() -> dict[str, type]:
    """Every registered learner class, by class name."""
    return {name: _import(target) for name, target in LEARNERS.items()}


def channel_classes() -> dict[str, type]:
    """Every registered feedback channel class, by class name."""
    return {name: _import(target) for name, target in CHANNELS.items()}


def _resolve(table: dict[str, str], name: Any, what: str) -> type:
    by_key = {key(n): n for n in table}
    found = by_key.get(key(name)) if isinstance(name, str) else None
    if found is None:
        raise ValueError(f"unknown {what} {name!r}; allowed: {', '.join(table)}.")
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


def resolve_channel(name: str) -> type:
    """The registered feedback channel called ``name``.

    >>> resolve_channel("noisy_bandit").__name__
    'NoisyBandit'
    """
    return _resolve(CHANNELS, name, "feedback channel")
