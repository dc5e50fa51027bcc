"""Learners, one algorithm per file."""

from .bandit.banditron import Banditron
from .bandit.bpa import BPA
from .bandit.perceptron import Perceptron
from .bandit.soba import SOBA
from .bandit.rcine import RCINE
from .bandit.rcnbf import RCNBF
from .diluted.mcdbf import MCDBF
from .diluted.mcslp import MCSLP
from .label_noise.uma import UMA, make_kernel_uma
from .regression.nlms import NLMS
from .regression.ors import ORS
from .teachers import EvilTeacherSVM, LinearSVM, TeacherSGD

__all__ = ["Perceptron", "Banditron", "RCNBF", "RCINE", "BPA", "SOBA", "MCSLP", "MCDBF", "NLMS", "ORS", "UMA", "make_kernel_uma", "LinearSVM", "EvilTeacherSVM", "TeacherSGD"]
