"""Teacher assignments and evil teachers (Dekel & Shamir 2009 experiments).

- `random_teachers` — rows split at random into equally sized teachers (Sec. 5).
- `topic_teachers` — one teacher per topic: a fine-grained label (the paper's
  99 RCV1 low-level categories; multi-label rows go to one of their labels at
  random) or, without labels, a k-means cluster of X. Sizes are unequal (Sec. 6).
- `flip_evil` — choose evil teachers and flip all their binary labels.

>>> t = random_teachers(10, 3, seed=0)
>>> np.bincount(t).tolist()
[4, 3, 3]
>>> y_bad, evil = flip_evil(np.array([1, -1] * 5), t, n_evil=1, seed=0)
>>> bool((y_bad[t == evil[0]] == -np.array([1, -1] * 5)[t == evil[0]]).all())
True
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from .._validation import AnySeed, Integer, check_param, check_X
from ..base import make_rng

__all__ = ["random_teachers", "topic_teachers", "flip_evil"]


def random_teachers(n_samples: int, n_teachers: int, seed=0) -> np.ndarray:
    """Assign n_samples rows to n_teachers teachers at random, in equal shares.

    Teacher sizes differ by at most one (the first n_samples mod n_teachers
    teachers get one more). Returns int64 teacher ids in 0..n_teachers−1.

    >>> t = random_teachers(1000, 100, seed=1)
    >>> t.dtype.name, t.shape, set(np.bincount(t).tolist())
    ('int64', (1000,), {10})
    """
    check_param("n_samples", n_samples, Integer(1), "random_teachers")
    check_param("n_teachers", n_teachers, Integer(1, n_samples), "random_teachers")
    check_param("seed", seed, AnySeed(), "random_teachers")
    rng = make_rng(seed)
    return (rng.permutation(n_samples) % n_teachers).astype(np.int64)


def topic_teachers(X=None, n_teachers: int | None = None, *, labels=None, seed=0) -> np.ndarray:
    """One teacher per topic: by fine-grained ``labels`` or by k-means clusters of X.

    labels : 1-D array (n,) of topic labels (any values; teacher ids are their
        sorted order), or a 2-D 0/1 indicator matrix (n, L), dense or sparse, of
        possibly several topics per row — each row goes to one of its topics,
        drawn uniformly (as the paper does with RCV1's low-level categories);
        columns that receive no row are dropped. Every row needs a topic.
    X, n_teachers : without labels, the teachers are the ``n_teachers`` clusters
        of scikit-learn's KMeans on X (dense or CSR), seeded by ``seed``.

    Returns int64 teacher ids 0..k−1 (k = number of non-empty topics), sizes unequal.

    >>> topic_teachers(labels=np.array(["b", "a", "b", "c"])).tolist()
    [1, 0, 1, 2]
    >>> topic_teachers(labels=np.array([[1, 0, 0], [0, 0, 1], [0, 0, 1]])).tolist()
    [0, 1, 1]
    """
    check_param("seed", seed, AnySeed(), "topic_teachers")
    rng = make_rng(seed)
    if labels is not None:
        if sp.issparse(labels):
            L = sp.csr_matrix(labels)
        else:
            L = np.asarray(labels)
            if L.ndim == 1:
                if L.dtype.kind == "f" and not np.isfinite(L).all():
                    raise ValueError("labels of topic_teachers contain NaN or infinity.")
                return np.unique(L, return_inverse=True)[1].astype(np.int64).ravel()
            if L.ndim != 2:
                raise ValueError("labels of topic_teachers must be 1-D or a 2-D indicator matrix; "
                                 f"got shape {L.shape}.")
            L = sp.csr_matrix(L)
        L.eliminate_zeros()
        counts = np.diff(L.indptr)
        if (counts == 0).any():
            row = int(np.flatnonzero(counts == 0)[0])
            raise ValueError(f"labels of topic_teachers: row {row} has no topic (an all-zero indicator row).")
        pick = L.indptr[:-1] + np.floor(rng.random(L.shape[0]) * counts).astype(np.int64)
        topic = L.indices[pick]
        return np.unique(topic, return_inverse=True)[1].astype(np.int64).ravel()
    if X is None or n_teachers is None:
        raise TypeError("topic_teachers needs labels= or both X and n_teachers.")
    X = check_X(X, owner="topic_teachers")
    check_param("n_teachers", n_teachers, Integer(1, X.shape[0]), "topic_teachers")
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=n_teachers, n_init=1, random_state=int(rng.integers(2**31 - 1)))
    cluster = km.fit_predict(X)
    return np.unique(cluster, return_inverse=True)[1].astype(np.int64).ravel()


def flip_evil(y, teachers, n_evil: int | None = None, evil_ids=None, seed=0):
    """Make some teachers evil: flip every binary label they gave.

    Choose ``n_evil`` distinct teachers uniformly among those present (seeded), or
    pass ``evil_ids``. A flip swaps the two classes: y ∈ {−1, +1} → −y, y ∈ {0, 1}
    → 1 − y, otherwise the two distinct values of y are exchanged.

    Returns ``(y_flipped, evil_ids)``: a new array of y's dtype and the sorted
    int64 evil teacher ids.

    >>> flip_evil(np.array([0, 1, 1, 0]), np.array([0, 0, 1, 1]), evil_ids=[1])[0].tolist()
    [0, 1, 0, 1]
    """
    y = np.asarray(y)
    t = np.asarray(teachers)
    if y.ndim != 1 or t.ndim != 1 or y.shape[0] != t.shape[0]:
        raise ValueError(f"y and teachers must be 1-D of equal length; got {y.shape} and {t.shape}.")
    if t.dtype == bool or not np.issubdtype(t.dtype, np.integer):
        raise TypeError(f"teachers must hold integer teacher ids; got dtype {t.dtype}.")
    present = np.unique(t)
    if (n_evil is None) == (evil_ids is None):
        raise TypeError("flip_evil needs exactly one of n_evil and evil_ids.")
    if n_evil is not None:
        check_param("n_evil", n_evil, Integer(0, present.shape[0]), "flip_evil")
        check_param("seed", seed, AnySeed(), "flip_evil")
        evil = np.sort(make_rng(seed).choice(present, size=n_evil, replace=False)).astype(np.int64)
    else:
        evil = np.asarray(evil_ids)
        if evil.ndim != 1 or (evil.size and (evil.dtype == bool or not np.issubdtype(evil.dtype, np.integer))):
            raise TypeError(f"evil_ids must be a 1-D sequence of integer teacher ids; got {evil_ids!r}.")
        missing = np.setdiff1d(evil, present)
        if missing.size:
            raise ValueError(f"evil_ids {missing.tolist()} are not teachers of any row.")
        evil = np.unique(evil).astype(np.int64)
    values = np.unique(y)
    if values.shape[0] > 2:
        raise ValueError(f"flip_evil needs binary labels; y holds {values.shape[0]} classes.")
    mask = np.isin(t, evil)
    out = y.copy()
    if np.isin(values, [-1, 1]).all() and isinstance(_first(values), numbers.Number):
        out[mask] = -y[mask]
    elif np.isin(values, [0, 1]).all() and isinstance(_first(values), numbers.Number):
        out[mask] = 1 - y[mask]
    elif values.shape[0] == 2:
        out[mask] = np.where(y[mask] == values[0], values[1], values[0])
    else:
        raise ValueError(
            f"flip_evil cannot flip labels {values.tolist()}: with a single class other than "
            "±1 or 0/1 the other class is unknown."
        )
    return out, evil


def _first(values):
    v = values[0] if values.size else 0
    return v.item() if hasattr(v, "item") else v
