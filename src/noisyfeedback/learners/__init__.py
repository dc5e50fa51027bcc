"""Learners, one algorithm per file."""

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below are imported on first use (lazy_attributes)
    from .bandit.banditron import Banditron
    from .bandit.bpa import BPA
    from .bandit.perceptron import Perceptron
    from .bandit.soba import SOBA
    from .bandit.epsilon_greedy import EpsilonGreedy
    from .bandit.squarecb import SquareCB
    from .bandit.rcine import RCINE
    from .bandit.rcnbf import RCNBF
    from .diluted.mcdbf import MCDBF
    from .diluted.mcslp import MCSLP
    from .label_noise.uma import UMA, make_kernel_uma
    from .regression.nlms import NLMS
    from .regression.ors import ORS
    from .label_noise.corrected_logistic import CorrectedLogisticRegression
    from .regression.wrls import WeightedRLS
    from .teachers import EvilTeacherSVM, LinearSVM, TeacherSGD
    from .catalogue import CatalogueEpsilonGreedy, CatalogueSquareCB

_LAZY = {
    'Banditron': '.bandit.banditron',
    'BPA': '.bandit.bpa',
    'Perceptron': '.bandit.perceptron',
    'SOBA': '.bandit.soba',
    'EpsilonGreedy': '.bandit.epsilon_greedy',
    'SquareCB': '.bandit.squarecb',
    'RCINE': '.bandit.rcine',
    'RCNBF': '.bandit.rcnbf',
    'MCDBF': '.diluted.mcdbf',
    'MCSLP': '.diluted.mcslp',
    'UMA': '.label_noise.uma',
    'make_kernel_uma': '.label_noise.uma',
    'NLMS': '.regression.nlms',
    'ORS': '.regression.ors',
    'CorrectedLogisticRegression': '.label_noise.corrected_logistic',
    'WeightedRLS': '.regression.wrls',
    'EvilTeacherSVM': '.teachers',
    'LinearSVM': '.teachers',
    'TeacherSGD': '.teachers',
    'CatalogueEpsilonGreedy': '.catalogue',
    'CatalogueSquareCB': '.catalogue',
}
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())

__all__ = ["SquareCB", "EpsilonGreedy", "Perceptron", "Banditron", "RCNBF", "RCINE", "BPA", "SOBA", "MCSLP", "MCDBF",
           "NLMS", "ORS", "UMA", "make_kernel_uma", "CorrectedLogisticRegression", "WeightedRLS", "LinearSVM",
           "EvilTeacherSVM", "TeacherSGD", "CatalogueSquareCB", "CatalogueEpsilonGreedy"]
