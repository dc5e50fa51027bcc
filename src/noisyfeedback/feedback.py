"""Feedback channels: how the environment corrupts what the learner is shown.

Every channel answers a batch of rounds with ``respond(y, actions, rng)`` and
draws a fixed number of uniforms per round from ``rng`` (``draws_per_round``),
so a compiled simulation that pre-draws the same uniforms reproduces it bit for
bit. The kernel-side twin of each channel lives in :mod:`noisyfeedback.kernels.channels`.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

import numpy as np

from ._validation import Integer, Interval, check_param

__all__ = [
    "FeedbackChannel",
    "FullLabel",
    "NoisyBandit",
    "Diluted",
    "ConfusionNoise",
    "GaussianNoise",
    "check_confusion_matrix",
    "symmetric_confusion",
    "pair_confusion",
]

#: kernel codes of the channels (see kernels/channels.py)
from .kernels._codes import CODE_BANDIT, CODE_CONFUSION, CODE_DILUTED, CODE_FULL  # noqa: E402


class FeedbackChannel:
    """Base class. ``kind`` says what the learner sees: 'label', 'bandit', 'set' or 'target'."""

    kind: ClassVar[str] = ""

    def draws_per_round(self, n_classes: int) -> int:
        return 1

    def respond(self, y: np.ndarray, actions: Any, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def _params(self) -> dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={_r(v)}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other):
            return NotImplemented
        a, b = self._params(), other._params()  # type: ignore[attr-defined]
        return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k] for k in a)

    __hash__ = None  # type: ignore[assignment]

    def _kernel_args(self, n_classes: int) -> tuple[int, float, float, np.ndarray]:
        """(code, rho0, rho1, cumulative confusion matrix) for the compiled loops."""
        raise TypeError(f"{type(self).__name__} has no compiled simulation path.")


def _r(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return np.array2string(v, precision=3, separator=", ")
    return repr(v)


def _check_rates(owner: str, rho0: float, rho1: float) -> None:
    check_param("rho0", rho0, Interval(0, 1, closed="left"), owner)
    check_param("rho1", rho1, Interval(0, 1, closed="left"), owner)
    if rho0 + rho1 >= 1:
        raise ValueError(
            f"The 'rho0' and 'rho1' parameters of {owner} must satisfy rho0 + rho1 < 1 "
            f"(otherwise the feedback carries no information). Got rho0={rho0!r}, rho1={rho1!r}."
        )


def _flip(f: np.ndarray, u: np.ndarray, rho0: float, rho1: float) -> np.ndarray:
    """f̃: a true 1 is reported as 0 with probability rho1, a true 0 as 1 with probability rho0."""
    return np.where(f == 1, u >= rho1, u < rho0).astype(np.int64)


class FullLabel(FeedbackChannel):
    """The true label, unchanged (full information)."""

    kind = "label"

    def draws_per_round(self, n_classes: int) -> int:
        return 0

    def respond(self, y, actions=None, rng=None) -> np.ndarray:
        return np.asarray(y, dtype=np.int64).copy()

    def _kernel_args(self, n_classes):
        return CODE_FULL, 0.0, 0.0, np.zeros((1, 1))


class NoisyBandit(FeedbackChannel):
    """Bandit feedback f = 1[action = y], flipped: P(f̃=1 | f=0) = rho0, P(f̃=0 | f=1) = rho1.

    Agarwal & Manwani (2021), Section 3. ``NoisyBandit(0, 0)`` is clean bandit feedback.

    >>> ch = NoisyBandit(0.2, 0.4)
    >>> ch
    NoisyBandit(rho0=0.2, rho1=0.4)
    >>> import numpy as np
    >>> ch.respond(np.array([1, 1, 2]), np.array([1, 0, 2]), np.random.default_rng(0))
    array([1, 0, 0])
    """

    kind = "bandit"

    def __init__(self, rho0: float = 0.0, rho1: float = 0.0):
        _check_rates("NoisyBandit", rho0, rho1)
        self.rho0 = float(rho0)
        self.rho1 = float(rho1)

    def _params(self):
        return {"rho0": self.rho0, "rho1": self.rho1}

    def respond(self, y, actions, rng) -> np.ndarray:
        y = np.asarray(y)
        f = (np.asarray(actions) == y).astype(np.int64)
        u = rng.random(y.shape[0])
        return _flip(f, u, self.rho0, self.rho1)

    def _kernel_args(self, n_classes):
        return CODE_BANDIT, self.rho0, self.rho1, np.zeros((1, 1))


class Diluted(FeedbackChannel):
    """Diluted (set) bandit feedback: 1[y ∈ proposed set of m labels], optionally flipped.

    Batra & Manwani (2021). ``actions`` is an (n, m) array of labels.
    """

    kind = "set"

    def __init__(self, m: int, rho0: float = 0.0, rho1: float = 0.0):
        check_param("m", m, Integer(1), "Diluted")
        _check_rates("Diluted", rho0, rho1)
        self.m = int(m)
        self.rho0 = float(rho0)
        self.rho1 = float(rho1)

    def _params(self):
        return {"m": self.m, "rho0": self.rho0, "rho1": self.rho1}

    def respond(self, y, actions, rng) -> np.ndarray:
        y = np.asarray(y)
        sets = np.asarray(actions)
        if sets.ndim != 2 or sets.shape != (y.shape[0], self.m):
            raise ValueError(
                f"Diluted(m={self.m}) expects actions of shape ({y.shape[0]}, {self.m}); got {sets.shape}."
            )
        f = (sets == y[:, None]).any(axis=1).astype(np.int64)
        u = rng.random(y.shape[0])
        return _flip(f, u, self.rho0, self.rho1)

    def _kernel_args(self, n_classes):
        return CODE_DILUTED, self.rho0, self.rho1, np.zeros((1, 1))


def check_confusion_matrix(C: Any, owner: str = "ConfusionNoise", max_condition: float | None = None) -> np.ndarray:
    """Validate C[r, q] = P(noisy = r | true = q): square, non-negative, columns summing to 1."""
    C = np.asarray(C)
    if C.dtype == object or not np.issubdtype(C.dtype, np.number) or np.iscomplexobj(C):
        raise TypeError(f"The 'C' parameter of {owner} must be a real matrix; got dtype {C.dtype}.")
    C = C.astype(np.float64)
    if C.ndim != 2 or C.shape[0] != C.shape[1] or C.shape[0] < 2:
        raise ValueError(f"The 'C' parameter of {owner} must be a square K x K matrix with K >= 2; got shape {C.shape}.")
    if not np.isfinite(C).all() or (C < 0).any():
        raise ValueError(f"The 'C' parameter of {owner} must hold probabilities >= 0 (no NaN/inf).")
    sums = C.sum(axis=0)
    bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-9)
    if bad.size:
        q = int(bad[0])
        raise ValueError(
            f"The 'C' parameter of {owner} must have columns summing to 1 (C[r, q] = P(noisy=r | true=q)); "
            f"column {q} sums to {sums[q]!r}."
        )
    if max_condition is not None:
        cond = np.linalg.cond(C)
        if not np.isfinite(cond) or cond > max_condition:
            raise ValueError(
                f"The 'C' parameter of {owner} is singular or ill-conditioned: condition number "
                f"{cond:.3g} exceeds {max_condition:.3g}."
            )
    return C


def symmetric_confusion(n_classes: int, rate: float) -> np.ndarray:
    """Uniform label noise: C = (1 − rate) on the diagonal and rate / (K − 1) elsewhere (every wrong
    label equally likely; Louche & Ralaivola 2015's symmetric noise). The library's one builder of it.

    >>> symmetric_confusion(3, 0.3)
    array([[0.7 , 0.15, 0.15],
           [0.15, 0.7 , 0.15],
           [0.15, 0.15, 0.7 ]])
    """
    K = int(n_classes)
    if K < 2:
        raise ValueError(f"The 'n_classes' parameter of symmetric_confusion must be >= 2. Got {n_classes!r} instead.")
    if isinstance(rate, bool) or not isinstance(rate, (int, float, np.floating)) or not 0 <= rate <= 1:
        raise ValueError(f"The 'rate' parameter of symmetric_confusion must be in [0, 1]. Got {rate!r} instead.")
    C = np.full((K, K), rate / (K - 1))
    np.fill_diagonal(C, 1.0 - rate)
    return C


def pair_confusion(n_classes: int, rate: float) -> np.ndarray:
    """Pair flips: class q is reported as q + 1 (mod K) with probability ``rate``, else correctly.

    >>> pair_confusion(3, 0.2)
    array([[0.8, 0. , 0.2],
           [0.2, 0.8, 0. ],
           [0. , 0.2, 0.8]])
    """
    K = int(n_classes)
    if K < 2:
        raise ValueError(f"The 'n_classes' parameter of pair_confusion must be >= 2. Got {n_classes!r} instead.")
    if isinstance(rate, bool) or not isinstance(rate, (int, float, np.floating)) or not 0 <= rate <= 1:
        raise ValueError(f"The 'rate' parameter of pair_confusion must be in [0, 1]. Got {rate!r} instead.")
    C = np.zeros((K, K))
    for q in range(K):
        C[(q + 1) % K, q] = rate
    np.fill_diagonal(C, 1.0 - rate)
    return C


class ConfusionNoise(FeedbackChannel):
    """Full labels corrupted by a confusion matrix: noisy label ~ C[:, y].

    C[r, q] = P(noisy = r | true = q) (columns sum to 1). Louche & Ralaivola (2015).
    Drawn by inverse CDF of column y with one uniform per round.
    """

    kind = "label"

    def __init__(self, C: Any):
        self.C = check_confusion_matrix(C)

    def _params(self):
        return {"C": self.C}

    @property
    def n_classes(self) -> int:
        return self.C.shape[0]

    def _cumulative(self) -> np.ndarray:
        return np.ascontiguousarray(np.cumsum(self.C, axis=0))

    def respond(self, y, actions=None, rng=None) -> np.ndarray:
        y = np.asarray(y, dtype=np.int64)
        u = rng.random(y.shape[0])
        cum = self._cumulative()[:, y]  # (K, n)
        noisy = (u[None, :] >= cum).sum(axis=0)
        return np.minimum(noisy, self.n_classes - 1).astype(np.int64)

    def _kernel_args(self, n_classes):
        if self.n_classes != n_classes:
            raise ValueError(f"ConfusionNoise has {self.n_classes} classes but the learner has {n_classes}.")
        return CODE_CONFUSION, 0.0, 0.0, self._cumulative()


class GaussianNoise(FeedbackChannel):
    """Regression targets with additive noise: ỹ_t = y_t + N(0, v_t). Moroshko & Crammer.

    ``variance`` is a non-negative scalar, an array indexed by round (v_t), or a
    callable ``t -> v_t`` taking an int array of rounds (0-based). The schedules of
    the paper: :meth:`uniform` (v_t ~ U[0, M], drawn once), :meth:`increasing` and
    :meth:`decreasing` (linear between 0 and M over the run).

    ``respond(y, rng=..., rounds=..., n_samples=k)`` gives k independent noisy labels
    of each target, y + √v_t·z with k standard normals z a round (drawn as one
    ``rng.standard_normal((n, k))``); ``nf.simulate`` draws the same normals in chunks.
    """

    kind = "target"

    def __init__(self, variance: float | np.ndarray | Callable[[np.ndarray], np.ndarray] = 0.0):
        if callable(variance):
            self.variance = variance
        elif np.ndim(variance) == 0:
            check_param("variance", variance, Interval(0, None), "GaussianNoise")
            self.variance = float(variance)
        else:
            v = np.asarray(variance, dtype=np.float64)
            if v.ndim != 1 or not np.isfinite(v).all() or (v < 0).any():
                raise ValueError("The 'variance' parameter of GaussianNoise must be a 1-D array of finite values >= 0.")
            self.variance = v

    def _params(self):
        return {"variance": self.variance}

    def __repr__(self) -> str:
        origin = getattr(self, "_origin", None)  # set by the schedule constructors below
        return origin if origin is not None else super().__repr__()

    # ------------------------------------------------------------ schedules
    @classmethod
    def uniform(cls, M: float, n_rounds: int, seed: int | np.random.SeedSequence | None = None) -> "GaussianNoise":
        """v_t ~ U[0, M], drawn once for rounds 0..n_rounds-1 from ``seed`` (Moroshko & Crammer's noise).

        >>> ch = GaussianNoise.uniform(5.0, n_rounds=4, seed=0)
        >>> ch
        GaussianNoise.uniform(M=5.0, n_rounds=4, seed=0)
        >>> bool(((0 <= ch.variance) & (ch.variance <= 5)).all()), ch.variance.shape
        (True, (4,))
        """
        from ._validation import AnySeed
        from .base import make_rng

        M, n_rounds = _check_schedule("uniform", M, n_rounds)
        check_param("seed", seed, AnySeed(), "GaussianNoise.uniform")
        ch = cls(make_rng(seed).uniform(0.0, M, size=n_rounds))
        ch._origin = f"GaussianNoise.uniform(M={M!r}, n_rounds={n_rounds!r}, seed={seed!r})"
        return ch

    @classmethod
    def increasing(cls, M: float, n_rounds: int) -> "GaussianNoise":
        """v_t rising linearly from 0 (round 0) to M (the last round).

        >>> GaussianNoise.increasing(4.0, n_rounds=5).variance
        array([0., 1., 2., 3., 4.])
        """
        M, n_rounds = _check_schedule("increasing", M, n_rounds)
        ch = cls(np.linspace(0.0, M, n_rounds))
        ch._origin = f"GaussianNoise.increasing(M={M!r}, n_rounds={n_rounds!r})"
        return ch

    @classmethod
    def decreasing(cls, M: float, n_rounds: int) -> "GaussianNoise":
        """v_t falling linearly from M (round 0) to 0 (the last round).

        >>> GaussianNoise.decreasing(4.0, n_rounds=5).variance
        array([4., 3., 2., 1., 0.])
        """
        M, n_rounds = _check_schedule("decreasing", M, n_rounds)
        ch = cls(np.linspace(M, 0.0, n_rounds))
        ch._origin = f"GaussianNoise.decreasing(M={M!r}, n_rounds={n_rounds!r})"
        return ch

    def variance_at(self, rounds: np.ndarray) -> np.ndarray:
        rounds = np.asarray(rounds, dtype=np.int64)
        if callable(self.variance):
            v = np.asarray(self.variance(rounds), dtype=np.float64)
            if v.shape != rounds.shape or not np.isfinite(v).all() or (v < 0).any():
                raise ValueError("GaussianNoise's variance callable must return finite values >= 0, one per round.")
            return v
        if isinstance(self.variance, np.ndarray):
            if rounds.size and rounds.max() >= self.variance.shape[0]:
                raise ValueError(
                    f"GaussianNoise has variances for {self.variance.shape[0]} rounds; round {int(rounds.max())} asked."
                )
            return self.variance[rounds]
        return np.full(rounds.shape, self.variance)

    def respond(self, y, actions=None, rng=None, rounds: np.ndarray | None = None, n_samples: int = 1) -> np.ndarray:
        """Noisy targets; with ``n_samples=k`` returns (n, k) independent draws per round."""
        y = np.asarray(y, dtype=np.float64)
        if rounds is None:
            rounds = np.arange(y.shape[0])
        sd = np.sqrt(self.variance_at(rounds))
        z = rng.standard_normal((y.shape[0], n_samples))
        out = y[:, None] + sd[:, None] * z
        return out[:, 0] if n_samples == 1 else out


def _check_schedule(name: str, M: Any, n_rounds: Any) -> tuple[float, int]:
    owner = f"GaussianNoise.{name}"
    check_param("M", M, Interval(0, None), owner)
    check_param("n_rounds", n_rounds, Integer(1), owner)
    return float(M), int(n_rounds)
