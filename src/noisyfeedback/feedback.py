"""Feedback channels: how the environment corrupts what the learner is shown.

Every channel answers a batch of rounds with ``respond(y, actions, rng)`` and
draws a fixed number of uniforms per round from ``rng`` (``draws_per_round``),
so a compiled simulation that pre-draws the same uniforms reproduces it bit for
bit. The kernel-side twin of each channel lives in `noisyfeedback.kernels.channels`.
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
    "Rates",
    "rate_arrays",
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
        return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k]
                                            for k in a)

    __hash__ = None  # type: ignore[assignment]

    def _kernel_args(self, n_classes: int) -> tuple[int, float, float, np.ndarray]:
        """(code, rho0, rho1, cumulative confusion matrix) for the compiled loops."""
        raise TypeError(f"{type(self).__name__} has no compiled simulation path.")


def _r(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return np.array2string(v, precision=3, separator=", ")
    return repr(v)


class Rates:
    """A flip rate in [0, 1), or a 1-D array of them, one per action (label)."""

    def accepts(self, value: Any) -> bool:
        if np.ndim(value) == 0:
            return Interval(0, 1, closed="left").accepts(value)
        try:
            arr = np.asarray(value)
        except Exception:  # noqa: BLE001 (ragged input)
            return False
        if arr.ndim != 1 or arr.size == 0 or arr.dtype == bool or not (
                np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
            return False
        arr = arr.astype(np.float64)
        return bool(np.isfinite(arr).all() and (arr >= 0).all() and (arr < 1).all())

    def describe(self) -> str:
        return "in [0, 1), or a 1-D array of rates in [0, 1), one per action"


def per_action(rate: Any) -> bool:
    """True when a flip rate is given per action (an array), False for one rate."""
    return np.ndim(rate) != 0


def rate_arrays(owner: str, rho0: Any, rho1: Any, n_classes: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(ρ0, ρ1) as float64 arrays: of length 1 when every action has the same rates (given as scalars or
    as arrays of equal entries: the one-rate computation, bit for bit), else of length K. Checks the
    values, the length K (when ``n_classes`` is given; arrays of both must have the same length) and
    ρ0(a) + ρ1(a) < 1 for every action, with the house's messages."""
    for name, rate in (("rho0", rho0), ("rho1", rho1)):  # one rate: the messages (and TypeError) of an Interval
        check_param(name, rate, Interval(0, 1, closed="left") if np.ndim(rate) == 0 else Rates(), owner)
    r0 = np.atleast_1d(np.asarray(rho0, dtype=np.float64))
    r1 = np.atleast_1d(np.asarray(rho1, dtype=np.float64))
    for name, r in (("rho0", r0), ("rho1", r1)):
        if r.shape[0] > 1 or per_action(rho0 if name == "rho0" else rho1):
            if n_classes is not None and r.shape[0] != n_classes:
                raise ValueError(f"The {name!r} parameter of {owner} must hold one rate per action: "
                                 f"{n_classes} rates. Got {r.shape[0]} instead.")
    if r0.shape[0] != r1.shape[0] and min(r0.shape[0], r1.shape[0]) > 1:
        raise ValueError(f"The 'rho0' and 'rho1' parameters of {owner} must have the same length. "
                         f"Got {r0.shape[0]} and {r1.shape[0]} instead.")
    K = max(r0.shape[0], r1.shape[0])
    r0, r1 = np.broadcast_to(r0, (K,)).copy(), np.broadcast_to(r1, (K,)).copy()
    bad = np.flatnonzero(r0 + r1 >= 1)
    if bad.size:
        a = int(bad[0])
        which = f" for action {a}" if K > 1 else ""
        raise ValueError(
            f"The 'rho0' and 'rho1' parameters of {owner} must satisfy rho0 + rho1 < 1{which} "
            f"(otherwise the feedback carries no information). Got rho0={_r_rate(rho0, a)}, "
            f"rho1={_r_rate(rho1, a)}.")
    if K > 1 and (r0 == r0[0]).all() and (r1 == r1[0]).all():
        r0, r1 = r0[:1].copy(), r1[:1].copy()
    return r0, r1


def _r_rate(rate: Any, a: int) -> str:
    return repr(rate) if np.ndim(rate) == 0 else repr(float(np.asarray(rate, dtype=np.float64)[a]))


def _check_rates(owner: str, rho0: Any, rho1: Any) -> None:
    rate_arrays(owner, rho0, rho1)


def _stored_rate(rate: Any) -> float | np.ndarray:
    """A channel's rate: a float, or a read-only float64 copy of per-action rates."""
    if not per_action(rate):
        return float(rate)
    arr = np.array(rate, dtype=np.float64)
    arr.flags.writeable = False
    return arr


def _flip(f: np.ndarray, u: np.ndarray, rho0, rho1) -> np.ndarray:
    """f̃: a true 1 is reported as 0 with probability rho1, a true 0 as 1 with probability rho0 (scalars,
    or arrays of each round's rates)."""
    return np.where(f == 1, u >= rho1, u < rho0).astype(np.int64)


def _rates_of(rate, actions: np.ndarray, owner: str):
    """Each round's rate: the scalar, or the per-action rate of the round's action."""
    if not per_action(rate):
        return rate
    if actions.size and (actions.min() < 0 or actions.max() >= rate.shape[0]):
        raise ValueError(f"{owner} has rates for {rate.shape[0]} actions; got action {int(actions.max())}.")
    return rate[actions]


def set_rates(rate, sets: np.ndarray, owner: str):
    """Each round's rate of a set: the scalar, or the mean of its labels' rates (summed in label-column
    order, as the compiled loops do)."""
    if not per_action(rate):
        return rate
    r = _rates_of(rate, sets, owner)
    total = r[:, 0].copy()
    for j in range(1, r.shape[1]):
        total += r[:, j]
    return total / r.shape[1]


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

    Agarwal & Manwani (2021), Section 3. ``NoisyBandit(0, 0)`` is clean bandit feedback. ``rho0`` and
    ``rho1`` may also be arrays of one rate per action: the flips of a round then follow the played
    action a, P(f̃=1 | f=0, a) = rho0[a], P(f̃=0 | f=1, a) = rho1[a] (accidental clicks on some items,
    missed ones on others).

    >>> ch = NoisyBandit(0.2, 0.4)
    >>> ch
    NoisyBandit(rho0=0.2, rho1=0.4)
    >>> import numpy as np
    >>> ch.respond(np.array([1, 1, 2]), np.array([1, 0, 2]), np.random.default_rng(0))
    array([1, 0, 0])
    """

    kind = "bandit"

    def __init__(self, rho0: float | np.ndarray = 0.0, rho1: float | np.ndarray = 0.0):
        _check_rates("NoisyBandit", rho0, rho1)
        self.rho0 = _stored_rate(rho0)
        self.rho1 = _stored_rate(rho1)

    def _params(self):
        return {"rho0": self.rho0, "rho1": self.rho1}

    def respond(self, y, actions, rng) -> np.ndarray:
        y = np.asarray(y)
        actions = np.asarray(actions)
        f = (actions == y).astype(np.int64)
        u = rng.random(y.shape[0])
        return _flip(f, u, _rates_of(self.rho0, actions, "NoisyBandit"), _rates_of(self.rho1, actions, "NoisyBandit"))

    def _kernel_args(self, n_classes):
        if per_action(self.rho0) or per_action(self.rho1):
            raise TypeError(f"{self!r} has per-action rates: the compiled loop reads them from _kernel_rates.")
        return CODE_BANDIT, self.rho0, self.rho1, np.zeros((1, 1))

    def _kernel_rates(self, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        """(rho0, rho1) for the compiled loops: float64 arrays of length 1 (every action alike) or K."""
        return rate_arrays(type(self).__name__, self.rho0, self.rho1, n_classes)


class Diluted(FeedbackChannel):
    """Diluted (set) bandit feedback: 1[y ∈ proposed set of m labels], optionally flipped.

    Batra & Manwani (2021). ``actions`` is an (n, m) array of labels. ``rho0``/``rho1`` may be arrays of
    one rate per label: a set S is then flipped with the mean rates of its labels,
    ρ(S) = (1/m)·Σ_{a∈S} ρ(a) (with m = 1 the per-action rates of ``NoisyBandit``).
    """

    kind = "set"

    def __init__(self, m: int, rho0: float = 0.0, rho1: float = 0.0):
        check_param("m", m, Integer(1), "Diluted")
        _check_rates("Diluted", rho0, rho1)
        self.m = int(m)
        self.rho0 = _stored_rate(rho0)
        self.rho1 = _stored_rate(rho1)

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
        return _flip(f, u, set_rates(self.rho0, sets, "Diluted"), set_rates(self.rho1, sets, "Diluted"))

    def _kernel_args(self, n_classes):
        if per_action(self.rho0) or per_action(self.rho1):
            raise TypeError(f"{self!r} has per-label rates: the compiled loop reads them from _kernel_rates.")
        return CODE_DILUTED, self.rho0, self.rho1, np.zeros((1, 1))

    def _kernel_rates(self, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        """(rho0, rho1) for the compiled loops: float64 arrays of length 1 (every label alike) or K."""
        return rate_arrays(type(self).__name__, self.rho0, self.rho1, n_classes)


def kernel_feedback(feedback: FeedbackChannel, n_classes: int) -> tuple[int, np.ndarray, np.ndarray]:
    """(code, rho0, rho1) of a bandit or set channel for the compiled loops: the rates as float64 arrays
    of one value (every action alike) or one per action (``kernels.channels.rate_at``)."""
    rates = getattr(feedback, "_kernel_rates", None)
    if rates is None:
        code, r0, r1, _ = feedback._kernel_args(n_classes)
        return code, np.array([r0], dtype=np.float64), np.array([r1], dtype=np.float64)
    r0, r1 = rates(n_classes)
    return (CODE_DILUTED if feedback.kind == "set" else CODE_BANDIT), r0, r1


def check_confusion_matrix(C: Any, owner: str = "ConfusionNoise", max_condition: float | None = None) -> np.ndarray:
    """Validate C[r, q] = P(noisy = r | true = q): square, non-negative, columns summing to 1."""
    C = np.asarray(C)
    if C.dtype == object or not np.issubdtype(C.dtype, np.number) or np.iscomplexobj(C):
        raise TypeError(f"The 'C' parameter of {owner} must be a real matrix; got dtype {C.dtype}.")
    C = C.astype(np.float64)
    if C.ndim != 2 or C.shape[0] != C.shape[1] or C.shape[0] < 2:
        raise ValueError(f"The 'C' parameter of {owner} must be a square K x K matrix with K >= 2; "
                         f"got shape {C.shape}.")
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
    the paper: `uniform` (v_t ~ U[0, M], drawn once), `increasing` and
    `decreasing` (linear between 0 and M over the run).

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
