"""Candidate streams for the catalogue learners: a multiclass set converted, and a synthetic ranking stream.

``multiclass_candidates(X, y)``: each class a candidate with one-hot features (item id = the class);
each round's candidate list is all K classes (``k_min=None``) or a random subset of size uniform in
[k_min, K] that holds the true label with probability ``p_label`` (else omits it); the reward is 1 iff
the candidate is the label.

``ranking_stream(...)``: a seeded recommender-like stream with known ground truth.

- contexts x_t ~ N(0, I_{d_c}) scaled to unit norm plus a constant feature;
- a catalogue of items with embeddings e_i ~ N(0, I_{d_a}) (the item features), each item alive for a
  random lifetime; items arrive over time and retire (``churn``): a round's candidates are drawn
  from the items alive at that round, the younger ones more often (the candidate mix of a news or a
  marketplace feed): candidates are drawn with weight exp(−age/``recency``); with the defaults
  (lifetime 800, recency 400) about half of the candidates are younger than 200 rounds (tested);
- the clean click probability at the first position r(x, i) = σ(xᵀ A e_i + bᵀ e_i + c) (A a random
  context × item matrix, the interaction; b the item-only popularity direction; c sets the base
  rate); position j is examined with probability ``examination[j]`` (position-based model: the
  click probability at slot j is examination[j]·r);
- ``rewards`` carry r for every candidate, so the clean regret of any policy is computed exactly.
"""

from __future__ import annotations

import numpy as np

from .._validation import AnySeed, Integer, Interval, check_param
from ..catalogue import CandidateRounds, CandidateStream

__all__ = ["multiclass_candidates", "ranking_stream"]


def multiclass_candidates(X, y, n_classes: int | None = None, k_min: int | None = None, p_label: float = 1.0,
                          seed=0) -> CandidateStream:
    """A multiclass set (X, y) as a candidate stream (module doc): context = X's rows (dense or CSR,
    unchanged), items = one-hot class vectors (K features) in increasing class order within a round,
    ``item_ids`` the classes, rewards 1[class = y]."""
    import scipy.sparse as sp

    y = np.asarray(y)
    if y.ndim != 1 or y.dtype.kind not in "iu":
        raise ValueError("y must be 1-D integer labels.")
    K = int(n_classes) if n_classes is not None else int(y.max()) + 1
    if y.size and (y.min() < 0 or y.max() >= K):
        raise ValueError(f"labels must be in 0..{K - 1}.")
    n = y.shape[0]
    if X.shape[0] != n:
        raise ValueError(f"X has {X.shape[0]} rows but y has {n} labels.")
    check_param("p_label", p_label, Interval(0, 1, closed="both"), "multiclass_candidates")
    check_param("seed", seed, AnySeed(), "multiclass_candidates")
    if k_min is None:
        lists = [np.arange(K)] * n
    else:
        check_param("k_min", k_min, Integer(1, K), "multiclass_candidates")
        rng = np.random.default_rng(seed)
        lists = []
        for i in range(n):
            size = int(rng.integers(k_min, K + 1))
            keep = rng.random() < p_label
            others = np.delete(np.arange(K), y[i])
            if keep:
                picked = np.concatenate([[y[i]], rng.choice(others, size - 1, replace=False)])
            else:
                picked = rng.choice(others, min(size, K - 1), replace=False)
            lists.append(np.sort(picked))
    ids = np.concatenate(lists).astype(np.int64)
    off = np.zeros(n + 1, np.int64)
    np.cumsum([len(c) for c in lists], out=off[1:])
    items = sp.csr_matrix((np.ones(ids.shape[0]), ids, np.arange(ids.shape[0] + 1)), shape=(ids.shape[0], K))
    items = items.toarray() if not sp.issparse(X) else items
    rewards = (ids == np.repeat(y, np.diff(off))).astype(np.float64)
    return CandidateStream(CandidateRounds(X, items, off, ids), rewards)


def ranking_stream(n_rounds: int = 100_000, n_candidates: int = 10, context_dim: int = 20, item_dim: int = 10,
                   lifetime: int = 800, recency: int = 400, examination=(1.0, 0.6, 0.35),
                   interaction: float = 3.0, popularity: float = 1.0, base: float = -1.5, seed=0,
                   ) -> CandidateStream:
    """The synthetic ranking stream (module doc). Items arrive at a steady rate so that about
    n_candidates·4 are alive at any time, each living ``lifetime`` rounds on average (exponential);
    candidates are drawn without replacement among the alive items with weight exp(−age/recency)
    (younger items more often; with the defaults about half the candidates are younger than 200 rounds).
    ``item_ids`` are the items' catalogue numbers; ``examination`` the position examination probabilities.
    """
    for name, v, c in (("n_rounds", n_rounds, Integer(1)), ("n_candidates", n_candidates, Integer(1)),
                       ("context_dim", context_dim, Integer(1)), ("item_dim", item_dim, Integer(1)),
                       ("lifetime", lifetime, Integer(1)), ("recency", recency, Integer(1)),
                       ("seed", seed, AnySeed())):
        check_param(name, v, c, "ranking_stream")
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
    alive_target = 4 * n_candidates
    rate = alive_target / lifetime  # arrivals a round
    # the catalogue: enough items for the whole stream
    n_items = int(alive_target + rate * n_rounds * 1.2) + 10
    birth = np.concatenate([np.zeros(alive_target), np.sort(rng.uniform(0, n_rounds, n_items - alive_target))])
    birth[:alive_target] = -rng.uniform(0, lifetime, alive_target)  # the catalogue at the start, of mixed ages
    death = birth + rng.exponential(lifetime, n_items) + 1.0
    emb = rng.normal(size=(n_items, item_dim)) / np.sqrt(item_dim)
    A = rng.normal(size=(context_dim, item_dim)) * interaction / np.sqrt(context_dim)
    b = rng.normal(size=item_dim) * popularity
    ctx = rng.normal(size=(n_rounds, context_dim))
    ctx /= np.linalg.norm(ctx, axis=1, keepdims=True)
    ctx[:, -1] = 1.0  # a constant context feature (the intercept of the interaction: per-item effects)
    order = np.argsort(birth, kind="stable")
    birth_s = birth[order]
    ids = np.empty(n_rounds * n_candidates, np.int64)
    gumbel = -np.log(-np.log(rng.uniform(1e-300, 1.0, size=(n_rounds, 8 * n_candidates))))
    lo = 0
    for t in range(n_rounds):
        hi = int(np.searchsorted(birth_s, t, side="right"))
        while lo < hi and death[order[lo]] <= t - 5 * lifetime:  # long gone: never scanned again
            lo += 1
        cand = order[lo:hi]
        cand = cand[death[cand] > t]
        if cand.shape[0] < n_candidates:  # a thin catalogue: add the next items to arrive
            cand = np.concatenate([cand, order[hi:hi + n_candidates - cand.shape[0]]])
        # weighted sampling without replacement by the Gumbel top-k trick: weight exp(−age/recency)
        key = -np.maximum(t - birth[cand], 0.0) / recency + gumbel[t, :cand.shape[0]] \
            if cand.shape[0] <= gumbel.shape[1] else -np.maximum(t - birth[cand], 0.0) / recency \
            - np.log(-np.log(rng.uniform(1e-300, 1.0, cand.shape[0])))
        pick = np.argsort(-key, kind="stable")[:n_candidates]
        ids[t * n_candidates:(t + 1) * n_candidates] = cand[pick]
    off = np.arange(n_rounds + 1, dtype=np.int64) * n_candidates
    items = emb[ids]
    x_rep = np.repeat(ctx, n_candidates, axis=0)
    logit = np.einsum("ij,jk,ik->i", x_rep, A, items) + items @ b + base
    r = 1.0 / (1.0 + np.exp(-logit))
    return CandidateStream(CandidateRounds(ctx, items, off, ids), r,
                           None if examination is None else np.asarray(examination, dtype=np.float64),
                           np.repeat(np.arange(n_rounds), n_candidates) - birth[ids])
