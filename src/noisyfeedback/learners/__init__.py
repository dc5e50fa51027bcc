"""Learners, one algorithm per file."""

from .bandit.banditron import Banditron
from .bandit.bpa import BPA
from .bandit.perceptron import Perceptron
from .bandit.soba import SOBA
from .bandit.rcnbf import RCNBF

__all__ = ["Perceptron", "Banditron", "RCNBF", "BPA", "SOBA"]
