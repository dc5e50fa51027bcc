"""Catalogue stream families of our own making, for choosing and checking the catalogue learners' defaults on
streams that are not the benchmarks' (``nf.datasets.ranking_stream`` is never used here).

Every family is a logistic click model over a fixed catalogue: a user context u (raw scale kept: its norm
can carry information), each round n candidates drawn from the catalogue (uniformly, without replacement),
item features z, and the clean click probability

    r(u, z) = σ(uᵀ A z + bᵀ z + c),

A the user × item interaction, b the items' popularity direction, c set so that the mean click rate is about
the family's base rate. The families differ in the candidates per round, the catalogue's size and feature
count, the features' scales (some far from unit norm, one where the utility grows with ‖u‖), the base click
rate and the horizon (50,000 to 500,000 rounds). The rounds are drawn for ``min(horizon, UNIQUE_ROUNDS)``
contexts and cycled (a simulation runs the stream's rounds in order, again from the first after the last):
i.i.d. contexts in a fixed order, without holding hundreds of millions of candidate rows in memory.

    >>> import numpy as np
    >>> from stream_families import FAMILIES, family_stream
    >>> len(FAMILIES) >= 6 and len({f.candidates for f in FAMILIES}) >= 4
    True
    >>> s = family_stream(FAMILIES[0], n_rounds=2000, seed=0)
    >>> s.rounds.n_rounds, bool(s.rounds.sizes[0] == FAMILIES[0].candidates)
    (2000, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import noisyfeedback as nf
from noisyfeedback.catalogue import CandidateRounds, CandidateStream

#: at most this many distinct rounds are drawn; longer horizons cycle them
UNIQUE_ROUNDS = 100_000


@dataclass(frozen=True)
class Family:
    """One stream family: see the module doc."""

    name: str
    candidates: int  # candidates a round
    n_items: int  # catalogue size
    context_dim: int
    item_dim: int
    context_scale: float  # u ~ N(0, context_scale²·I) (before ``norm_utility``)
    item_scale: float  # z ~ N(0, item_scale²·I)
    base_rate: float  # the mean clean click rate aimed at
    horizon: int  # rounds of the family's benchmark
    interaction: float = 2.0  # the logits' spread from uᵀ A z
    popularity: float = 0.7  # the logits' spread from bᵀ z
    norm_utility: bool = False  # the user norm varies (log-normal) and scales the interaction logit


FAMILIES = (
    Family("shop", candidates=12, n_items=600, context_dim=6, item_dim=10, context_scale=1.0, item_scale=1.0,
           base_rate=0.10, horizon=200_000),
    Family("pairs", candidates=3, n_items=150, context_dim=8, item_dim=5, context_scale=1.0, item_scale=1.0,
           base_rate=0.30, horizon=50_000),
    Family("rare-clicks", candidates=30, n_items=3000, context_dim=10, item_dim=8, context_scale=1.0,
           item_scale=1.0, base_rate=0.02, horizon=500_000, interaction=2.5),
    Family("raw-scale", candidates=8, n_items=400, context_dim=5, item_dim=6, context_scale=50.0, item_scale=0.01,
           base_rate=0.15, horizon=100_000),
    Family("norm-utility", candidates=10, n_items=500, context_dim=6, item_dim=8, context_scale=1.0,
           item_scale=1.0, base_rate=0.10, horizon=200_000, norm_utility=True),
    Family("high-rate", candidates=20, n_items=300, context_dim=12, item_dim=12, context_scale=1.0, item_scale=1.0,
           base_rate=0.50, horizon=100_000, interaction=1.5, popularity=0.3),
    Family("wide", candidates=6, n_items=2000, context_dim=24, item_dim=48, context_scale=1.0, item_scale=3.0,
           base_rate=0.08, horizon=300_000),
)

FAMILY = {f.name: f for f in FAMILIES}


def family_stream(family: Family, n_rounds: int | None = None, seed: int = 0) -> CandidateStream:
    """A stream of ``family`` (rounds: ``min(n_rounds or horizon, UNIQUE_ROUNDS)``, cycled beyond), seeded."""
    f = family
    rng = np.random.default_rng([seed, 20_261_128, sum(map(ord, f.name))])
    n = min(int(n_rounds or f.horizon), UNIQUE_ROUNDS)
    items = rng.normal(size=(f.n_items, f.item_dim)) * f.item_scale
    A = rng.normal(size=(f.context_dim, f.item_dim)) * f.interaction / np.sqrt(f.context_dim * f.item_dim)
    b = rng.normal(size=f.item_dim) * f.popularity / np.sqrt(f.item_dim)
    u = rng.normal(size=(n, f.context_dim)) * f.context_scale
    # the logits on the unit scale of the features (u/context_scale, z/item_scale): the scales do not change
    # the click model, only what the learner is shown
    us = u / f.context_scale
    if f.norm_utility:  # ‖u‖ log-normal, the interaction proportional to it
        us = us / np.linalg.norm(us, axis=1, keepdims=True) * np.sqrt(f.context_dim) \
            * np.exp(rng.normal(0.0, 0.6, size=(n, 1)))
        u = us * f.context_scale
    zs = items / f.item_scale
    ids = _distinct_draws(rng, n, f.candidates, f.n_items).ravel()
    rows = np.repeat(np.arange(n), f.candidates)
    logit = np.einsum("ij,jk,ik->i", us[rows], A, zs[ids]) + zs[ids] @ b
    c = _offset(logit, f.base_rate)
    r = 1.0 / (1.0 + np.exp(-(logit + c)))
    off = np.arange(n + 1, dtype=np.int64) * f.candidates
    return CandidateStream(CandidateRounds(u, items[ids], off, ids), r)


def _distinct_draws(rng, n: int, k: int, n_items: int) -> np.ndarray:
    """(n, k) item ids, distinct within each row, uniform (rows with a repeat are drawn again)."""
    ids = rng.integers(0, n_items, size=(n, k))
    while True:
        s = np.sort(ids, axis=1)
        bad = (s[:, 1:] == s[:, :-1]).any(axis=1)
        if not bad.any():
            return ids.astype(np.int64)
        ids[bad] = rng.integers(0, n_items, size=(int(bad.sum()), k))


def _offset(logit: np.ndarray, rate: float) -> float:
    """c with mean σ(logit + c) = rate (bisection)."""
    lo, hi = -30.0, 30.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if (1.0 / (1.0 + np.exp(-(logit + mid)))).mean() < rate:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def regret(learner, stream: CandidateStream, n_rounds: int, flips=(0.0, 0.0), seed: int = 0) -> float:
    """Mean clean regret per round of ``learner`` simulated on the stream."""
    tr = nf.simulate(learner, stream, None, nf.feedback.NoisyBandit(*flips), n_rounds=n_rounds, seed=seed)
    return float(tr.metrics["regret_rate"])
