"""Learners, one algorithm per file."""

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

__all__ = ["SquareCB", "EpsilonGreedy", "Perceptron", "Banditron", "RCNBF", "RCINE", "BPA", "SOBA", "MCSLP", "MCDBF",
           "NLMS", "ORS", "UMA", "make_kernel_uma", "CorrectedLogisticRegression", "WeightedRLS", "LinearSVM",
           "EvilTeacherSVM", "TeacherSGD", "CatalogueSquareCB", "CatalogueEpsilonGreedy"]
