"""SquareCB: inverse-gap-weighted exploration over a linear regression oracle (Foster & Rakhlin 2020)."""

from __future__ import annotations

from ..._validation import Interval
from ...kernels.oracle import POLICY_IGW
from ._oracle import OracleBandit


class SquareCB(OracleBandit):
    r"""SquareCB: a regression oracle of the observed feedback, explored by inverse-gap weighting [1]_.

    Values v = W x̂ + b with x̂ = x/‖x‖ (one linear model per label over the unit-norm row, fitted by
    square loss to the raw, possibly flipped, 0/1 feedback of the played label; AdaGrad step by
    default; the unit norm makes the step size independent of the features' scale). With γ_t = γ_scale·(t+1)^γ_exp (t =
    updates so far; Vowpal Wabbit's ``--squarecb`` schedule) and ŷ = argmax v, the action is drawn from

        p(a) = 1 / (K + γ_t·(v_ŷ − v_a))  for a ≠ ŷ,    p(ŷ) = 1 − Σ_{a≠ŷ} p(a).

    **Flipped feedback.** E[f̃ | x, a] = ρ0 + (1−ρ0−ρ1)·P(y=a | x) is an increasing affine map of the clean
    value when flips do not depend on the class or the context, so the oracle ranks the labels
    correctly without knowing ρ0, ρ1 (they only add variance). Flip rates that depend on the class or
    on x break this (see ``_oracle.py`` and the test of that case). ``rho0``/``rho1`` only serve
    :meth:`predict_proba` (calibrated clean probabilities).

    **Sets (m > 1, ``Diluted(m)`` feedback).** The prediction for a set S is Σ_{a∈S} v_a
    (E[f̃ | x, S] = ρ0 + (1−ρ0−ρ1)·Σ_{a∈S} P(y=a | x)); every label of the set takes the same step on
    the residual f̃ − Σ_{a∈S} v_a. Inclusion probabilities π_a = p_a + (1 − p_a)·(m−1)/(K−1) (Σ π = m):
    an anchor drawn from the one-label distribution p above and m − 1 other labels uniformly, so the
    greedy label is nearly always in the set while the rest of the set stays random (a set of the top-m
    labels every round would give them all the same update and never tell them apart). The set is drawn
    by systematic sampling over a uniformly random label order, which includes each label with
    probability exactly π_a (``kernels/oracle.py``).

    Parameters
    ----------
    n_classes : int
    m : int in [1, K-1]
        1: one action, ``NoisyBandit`` feedback; m > 1: a set of m labels, ``Diluted(m)`` feedback.
    gamma_scale, gamma_exponent : float
        γ_t = gamma_scale·(t+1)^gamma_exponent (defaults chosen by a sweep on tuning data: benchmarks/RESULTS.md).
    learning_rate : float > 0
        AdaGrad step (per coordinate lr·g/√ΣG²), or the NLMS step with ``oracle="normalized"``.
    oracle : {"adagrad", "normalized", "ridge"}
        "ridge" (m = 1; for small d): per label, recursive least squares on (x̂, 1) — after every round
        the ridge solution of that label's rounds — at O(d²) memory and time a round.
    lam : float > 0
        Ridge penalty λ of ``oracle="ridge"`` (unused otherwise).
    rho0, rho1 : float
        Flip rates, used only by :meth:`predict_proba`.
    seed : int, SeedSequence or None

    Examples
    --------
    >>> import noisyfeedback as nf
    >>> X, y = nf.datasets.synsep(n_samples=2000, seed=0)
    >>> learner = nf.SquareCB(9, seed=0)
    >>> trace = nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.2, 0.2), n_rounds=20_000, seed=0)
    >>> trace.error_rate < 0.2
    True
    >>> learner.action_probabilities(X[:2]).sum(axis=1)
    array([1., 1.])

    References
    ----------
    .. [1] Foster, D. & Rakhlin, A. (2020). Beyond UCB: optimal and efficient contextual bandits with
       regression oracles. ICML.
    """

    _policy = POLICY_IGW
    _parameter_constraints = {
        **OracleBandit._common_constraints,
        "gamma_scale": Interval(0, None, closed="left"),
        "gamma_exponent": Interval(0, 1, closed="both"),
    }
    _test_params = {"n_classes": 3, "seed": 0}

    def __init__(self, n_classes: int, m: int = 1, gamma_scale: float = 10.0, gamma_exponent: float = 0.5,
                 learning_rate: float = 0.05, oracle: str = "adagrad", lam: float = 1.0, rho0: float = 0.0,
                 rho1: float = 0.0, seed: int | None = None):
        self.n_classes = n_classes
        self.m = m
        self.gamma_scale = gamma_scale
        self.gamma_exponent = gamma_exponent
        self.learning_rate = learning_rate
        self.oracle = oracle
        self.lam = lam
        self.rho0 = rho0
        self.rho1 = rho1
        self.seed = seed

    def _explore(self) -> tuple[float, float]:
        return float(self.gamma_scale), float(self.gamma_exponent)
