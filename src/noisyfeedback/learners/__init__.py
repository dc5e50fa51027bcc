"""Learners, one algorithm per file."""

from .bandit.banditron import Banditron
from .bandit.perceptron import Perceptron

__all__ = ["Perceptron", "Banditron"]
