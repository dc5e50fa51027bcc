"""MC-DBF: multiclass classification from diluted (set-valued) bandit feedback (Batra & Manwani 2021)."""

from __future__ import annotations

import math

import numpy as np

from ..._validation import AnySeed, Integer, Interval
from ...base import Tags
from ...feedback import CODE_DILUTED, Rates, kernel_feedback, rate_arrays
from ...kernels.diluted import mcdbf_act, mcdbf_learn, mcdbf_simulate
from .._linear import LoggedLearning, kernel_view, row_range
from ..bandit.rcnbf import RCNBF
from ._sets import SetPredictor


class MCDBF(LoggedLearning, SetPredictor):
    r"""MC-DBF: explore with a random set of m labels, learn from 1[y ∈ set] (docs/algorithms.md §4.9).

    Each round: Ŷ = the top-m labels of s = W x (ties lowest index first);
    P(r) = (1−γ)/m·1[r∈Ŷ] + γ/K; the set Ỹ of m distinct labels is drawn by
    successive sampling without replacement ∝ P (m uniforms, one per draw:
    inverse CDF over the labels not drawn yet, in increasing label order,
    weights renormalised); the learner sees f = 1[y ∈ Ỹ] — or f̃, f flipped
    with P(f̃=1 | f=0) = ρ0, P(f̃=0 | f=1) = ρ1 — and updates [1]_

        W[r] += (h(f̃)·1[r∈Ỹ] / (Z(Ỹ)·τ1) − 1[r∈Ŷ]/m − τ2) · x   for every r,

    τ1 = C(K−2, m−1), τ2 = (m−1)/(K−m), h(f̃) = (f̃ − ρ0)/(1 − ρ0 − ρ1)
    (h(f) = f without flips), Z(A) = the exact probability that the sampler
    returns the set A.

    **Z(A)** sums over A's m! draw orders. P takes the value a = γ/K + (1−γ)/m on
    Ŷ and b = γ/K elsewhere, so every order of A has the same numerator
    a^i·b^j (i = |A∩Ŷ|, j = m−i) and a denominator that depends only on how many
    labels of each kind were drawn before: after p of Ŷ and q others, the mass
    left is R(p, q) = (m−p)·a + (K−m−q)·b. With G(p, q) = P(the first p+q draws
    are p of A∩Ŷ and q of A∖Ŷ, in any order), G(0,0) = 1,
    G(p,q) = G(p−1,q)·(i−p+1)·a/R(p−1,q) + G(p,q−1)·(j−q+1)·b/R(p,q−1), and
    Z(A) = G(i, j): O(m²) a round (`noisyfeedback.kernels.diluted.set_probability`).

    **Unbiasedness.** Σ_A Z(A)·1[y∈A]1[r∈A]/(Z(A)·τ1) = N(y, r)/τ1 with N(y, r) the
    number of m-sets holding y and r: C(K−2, m−2) for r ≠ y and C(K−1, m−1) =
    C(K−2, m−1) + C(K−2, m−2) for r = y. With τ1 = C(K−2, m−1) and
    C(K−2, m−2)/C(K−2, m−1) = (m−1)/(K−m) = τ2, the first term has expectation
    1[r=y] + τ2 for *every* r, so subtracting τ2 from every row (whatever f)
    gives E[Ũ] = (e_y − 1[r∈Ŷ]/m) ⊗ x, MC-SLP's update, exactly. The paper's
    formula (6) thus holds as printed once its "m^{k−2}P_{m−1}" is read as the
    binomial coefficient C(k−2, m−1). With flips, E[h(f̃) | f] = f, so averaging
    over f̃ and then over Ỹ gives the same U. The τ2·x subtracted from every row
    shifts all scores of any input by the same amount: it changes no ranking,
    prediction or draw, only keeps W equal to its unbiased definition.

    With m = 1 (τ1 = 1, τ2 = 0, Z = P(ỹ)) MC-DBF is Banditron (RCNBF with flips)
    bit for bit: the same draw helper, the same W[ỹ] += h/P·x then W[ŷ] −= x.

    The importance weight 1/(Z·τ1) is large for sets far from Ŷ (Z ≈ m!·(γ/K)^m
    when Ỹ ∩ Ŷ = ∅), so the variance of the estimate grows fast as γ shrinks and
    the best γ grows with m (SynSep, m = 3, 1e5 rounds: error 0.003 at γ = 0.4,
    0.03 at 0.1, 0.5-0.7 at 0.02).

    ``act`` returns the drawn sets (n, m) in increasing label order and their
    probabilities Z (n,); ``learn(X, actions, feedback, propensities)`` takes
    logged sets, 0/1 feedback and Z of each set, and recomputes Ŷ from the
    current W row by row.

    Parameters
    ----------
    n_classes : int
        Number of classes K.
    m : int in [1, K-1], default 2 (the smallest set of the paper's experiments; K = 2 needs m = 1)
        Size of the proposed label set.
    gamma : float in (0, 1)
        Exploration rate γ.
    rho0, rho1 : float in [0, 1), or arrays of K such rates (one per label); rho0 + rho1 < 1 (per label)
        Flip rates of the feedback (beyond the paper; 0 = clean diluted feedback). Per label, a set S
        flips with its labels' mean rates ρ(S) = (1/m)·Σ_{a∈S} ρ(a) (``Diluted``'s per-label channel) and
        h(f̃, S) = (f̃ − ρ0(S))/(1 − ρ0(S) − ρ1(S)); with m = 1 RCNBF's per-action h, bit for bit.
    seed : int, SeedSequence or None
        Seed of the exploration draws; with None, ``nf.simulate`` seeds them.

    Examples
    --------
    >>> import noisyfeedback as nf
    >>> X, y = nf.datasets.synsep(n_samples=2000, seed=0)
    >>> learner = nf.MCDBF(9, m=3, gamma=0.1, seed=0)
    >>> sets, probs = learner.act(X[:2])
    >>> sets.shape, probs.shape
    ((2, 3), (2,))
    >>> trace = nf.simulate(learner, X, y, nf.feedback.Diluted(3), n_rounds=20_000, seed=0)
    >>> sorted(trace.metrics)
    ['set_miss_curve', 'set_miss_rate']

    References
    ----------
    .. [1] Batra, G. & Manwani, N. (2021). Multiclass classification using dilute
       bandit feedback. Algorithm 2.
    """

    feedback_kind = "set"
    #: what it is, for every front door (noisyfeedback.base.Tags)
    _tags = Tags(family="diluted", online=True, servable=True)
    _parameter_constraints = {
        "m": Integer(1),
        "gamma": Interval(0, 1, closed="neither"),
        "rho0": Rates(),
        "rho1": Rates(),
        "seed": AnySeed(),
    }
    _test_params = {"n_classes": 4, "m": 2, "gamma": 0.3, "rho0": 0.1, "rho1": 0.1, "seed": 0}

    def __init__(self, n_classes: int, m: int = 2, gamma: float = 0.1, rho0: float = 0.0, rho1: float = 0.0,
                 seed: int | None = None):
        self.n_classes = n_classes
        self.m = m
        self.gamma = gamma
        self.rho0 = rho0
        self.rho1 = rho1
        self.seed = seed

    @property
    def draws_per_round(self) -> int:  # type: ignore[override]
        """m uniforms a round, one per draw of the set."""
        return int(self.m)

    def _check_params(self) -> None:
        super()._check_params()
        rate_arrays(type(self).__name__, self.rho0, self.rho1, self.n_classes)
        try:
            float(math.comb(self.n_classes - 2, self.m - 1))
        except OverflowError:
            raise ValueError(
                f"MCDBF with n_classes={self.n_classes} and m={self.m}: tau1 = C(n_classes-2, m-1) overflows "
                "a float; use a smaller m."
            ) from None

    def _taus(self) -> tuple[float, float]:
        """(τ1, τ2) = (C(K−2, m−1), (m−1)/(K−m))."""
        K, m = self.n_classes, self.m
        return float(math.comb(K - 2, m - 1)), (m - 1) / (K - m)

    def _h(self) -> tuple[float, float]:
        """(h(0), h(1)) with h(f̃) = (f̃ − ρ0)/(1 − ρ0 − ρ1); (0.0, 1.0) without flips (one pair of rates;
        with per-label rates the kernels compute h per set from `_label_rates`)."""
        r0, r1 = rate_arrays(type(self).__name__, self.rho0, self.rho1, self.n_classes)
        if r0.shape[0] > 1:
            return 0.0, 1.0
        return RCNBF._estimate(float(r0[0]), float(r1[0]))

    _NO_RATES = np.zeros(0)

    def _label_rates(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-label rates (K,) when they differ between labels; else empty arrays (the pair h0, h1 is used)."""
        r0, r1 = rate_arrays(type(self).__name__, self.rho0, self.rho1, self.n_classes)
        return (r0, r1) if r0.shape[0] > 1 else (self._NO_RATES, self._NO_RATES)

    def act(self, X, allowed=None, excluded=None) -> tuple[np.ndarray, np.ndarray]:
        """Draw one set per row: returns (sets (n, m) int64, increasing; Z(set) (n,)).

        ``allowed``/``excluded`` (m = 1 only): one action per row drawn from the distribution restricted to
        the actions a row may take, renormalised (see `Banditron.act`); returns shape (n,)."""
        if allowed is not None or excluded is not None:
            return self._act_restricted(X, allowed, excluded)
        X = self._check_X(X, fitting=True)
        m = int(self.m)
        u = self.rng_.random(X.shape[0] * m)
        sets = np.empty((X.shape[0], m), dtype=np.int64)
        probs = np.empty(X.shape[0], dtype=np.float64)
        mcdbf_act(self.W_, *kernel_view(X), m, float(self.gamma), u, sets, probs)
        return sets, probs

    def inclusion_probabilities(self) -> tuple[float, float]:
        """(P(a label of Ŷ is in Ỹ), P(a label outside Ŷ is in Ỹ)) under the successive sampler.

        Every draw order of the labels of each kind has the same probability, so only the counts
        (p of Ŷ, q others drawn) matter: a DP over (p, q) gives E[p]; each label of Ŷ is drawn with
        probability E[p]/m, each other label with (m − E[p])/(K − m)."""
        K, m, g = self.n_classes, int(self.m), float(self.gamma)
        a, b = g / K + (1 - g) / m, g / K
        G = {(0, 0): 1.0}
        for _ in range(m):
            nxt: dict[tuple[int, int], float] = {}
            for (p, q), pr in G.items():
                R = (m - p) * a + (K - m - q) * b
                if m - p > 0:
                    nxt[(p + 1, q)] = nxt.get((p + 1, q), 0.0) + pr * (m - p) * a / R
                if K - m - q > 0:
                    nxt[(p, q + 1)] = nxt.get((p, q + 1), 0.0) + pr * (K - m - q) * b / R
            G = nxt
        ep = sum(p * pr for (p, _), pr in G.items())
        return ep / m, (m - ep) / (K - m)

    def action_probabilities(self, X, allowed=None, excluded=None) -> np.ndarray:
        """P(label ∈ Ỹ) for every row and label, shape (n_samples, n_classes); rows sum to m
        (the inclusion probabilities of the set ``act`` draws; with m = 1 Banditron's distribution,
        restricted to ``allowed`` minus ``excluded`` and renormalised when given)."""
        top = self.predict_set(X)
        p_in, p_out = self.inclusion_probabilities()
        out = np.full((top.shape[0], self.n_classes), p_out)
        np.put_along_axis(out, top, p_in, axis=1)
        return self._restrict_probabilities(out, self._mask(allowed, excluded, out.shape[0]))

    def learn(self, X, actions, feedback, propensities) -> "MCDBF":
        """Update from logged rows in order: the proposed set, 0/1 feedback, the set's probability Z."""
        X = self._check_X(X, fitting=True)
        n = X.shape[0]
        sets = self._check_sets(actions, n)
        feedback = self._check_binary(feedback, n)
        propensities = self._check_propensities(propensities, n)
        tau1, tau2 = self._taus()
        h0, h1 = self._h()
        m = int(self.m)
        r0, r1 = self._label_rates()
        self._guarded(n, lambda lo, hi: mcdbf_learn(self.W_, *kernel_view(row_range(X, lo, hi)), m, tau1, tau2, h0,
                                                    h1, sets[lo:hi], feedback[lo:hi], propensities[lo:hi], r0, r1))
        return self

    def _simulate_chunk(self, X, y, order, u_learner, feedback, u_feedback, mistakes, extras=None):
        code, rho0, rho1 = kernel_feedback(feedback, self.n_classes)
        if code != CODE_DILUTED:
            raise TypeError(f"MCDBF learns from diluted (set) feedback; got {feedback!r}.")
        if feedback.m != self.m:
            raise ValueError(f"MCDBF proposes sets of m={self.m} labels, but the channel is {feedback!r}.")
        tau1, tau2 = self._taus()
        h0, h1 = self._h()
        mcdbf_simulate(self.W_, *kernel_view(X), y, order, int(self.m), float(self.gamma), tau1, tau2, h0, h1,
                       rho0, rho1, u_learner, u_feedback, mistakes, self._set_miss_out(extras, order.shape[0]),
                       *self._label_rates())
