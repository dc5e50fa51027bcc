"""noisyfeedback: learning from imperfect feedback.

>>> import noisyfeedback as nf
>>> X, y = nf.datasets.synsep(n_samples=2000, seed=3)
>>> trace = nf.simulate(nf.Banditron(9, gamma=0.1, seed=0), X, y,
...                     feedback=nf.feedback.NoisyBandit(0.2, 0.4), n_rounds=10_000, seed=1)
>>> 0 <= trace.error_rate <= 1
True
"""

from typing import TYPE_CHECKING

from ._lazy import lazy_attributes

from ._version import __version__

if TYPE_CHECKING:  # the names below are imported on first use (lazy_attributes)
    from . import datasets, feedback, metrics, noise
    from . import ope
    from .base import Learner, load
    from .learners.label_noise import find_label_issues
    from .learners import BPA, RCINE, RCNBF, SOBA, Banditron, Perceptron
    from .learners import MCDBF, MCSLP
    from .learners import EpsilonGreedy, SquareCB
    from .learners import NLMS, ORS, UMA, make_kernel_uma
    from .learners import CorrectedLogisticRegression, WeightedRLS
    from .learners import EvilTeacherSVM, LinearSVM, TeacherSGD
    from .learners import CatalogueEpsilonGreedy, CatalogueSquareCB
    from .catalogue import CandidateRounds, CandidateStream
    from .simulate import Trace, fit_batch, simulate

_LAZY = {
    'datasets': '',
    'feedback': '',
    'metrics': '',
    'noise': '',
    'ope': '',
    'Learner': '.base',
    'load': '.base',
    'find_label_issues': '.learners.label_noise',
    'BPA': '.learners',
    'RCINE': '.learners',
    'RCNBF': '.learners',
    'SOBA': '.learners',
    'Banditron': '.learners',
    'Perceptron': '.learners',
    'MCDBF': '.learners',
    'MCSLP': '.learners',
    'EpsilonGreedy': '.learners',
    'SquareCB': '.learners',
    'NLMS': '.learners',
    'ORS': '.learners',
    'UMA': '.learners',
    'make_kernel_uma': '.learners',
    'CorrectedLogisticRegression': '.learners',
    'WeightedRLS': '.learners',
    'EvilTeacherSVM': '.learners',
    'LinearSVM': '.learners',
    'TeacherSGD': '.learners',
    'CatalogueEpsilonGreedy': '.learners',
    'CatalogueSquareCB': '.learners',
    'CandidateRounds': '.catalogue',
    'CandidateStream': '.catalogue',
    'Trace': '.simulate',
    'fit_batch': '.simulate',
    'simulate': '.simulate',  # the function (see _lazy: the submodule does not replace it)
}
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())

__all__ = [
    "__version__",
    "datasets",
    "feedback",
    "metrics",
    "noise",
    "ope",
    "Learner",
    "load",
    "simulate",
    "fit_batch",
    "find_label_issues",
    "Trace",
    "Perceptron",
    "Banditron",
    "RCNBF",
    "RCINE",
    "BPA",
    "SOBA",
    "SquareCB",
    "EpsilonGreedy",
    "MCSLP",
    "MCDBF",
    "NLMS",
    "ORS",
    "UMA",
    "CorrectedLogisticRegression",
    "WeightedRLS",
    "make_kernel_uma",
    "LinearSVM",
    "EvilTeacherSVM",
    "TeacherSGD",
    "CatalogueSquareCB", "CatalogueEpsilonGreedy", "CandidateRounds", "CandidateStream",
]
