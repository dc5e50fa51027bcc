"""Rounds of candidates described by features: the data model of the catalogue learners.

A `CandidateRounds` holds n rounds. Round i has one row of shared context features and a
list of candidates, ``offsets[i+1] − offsets[i]`` of them (any number ≥ 1, different every round),
whose features are the item rows ``offsets[i] .. offsets[i+1]`` (a ragged list stored flat, as CSR
stores rows). Features are given in one of three forms, the same form for all rounds:

- dense float arrays, ``context`` (n, d_c) and ``items`` (total, d_a);
- scipy CSR matrices of those shapes;
- hashed rows (`HashedRows`), from namespaced dicts of numbers and
  strings (VW's and Personalizer's JSON) by `CandidateRounds.from_features`.

Optional ``item_ids`` (total,) name the candidates (ints or strings: the same item in different
rounds has the same id). Everything is validated when built (shapes, finite values, offsets
increasing from 0 to the number of item rows, no round without candidates).

A stream for simulation adds the ground truth: `CandidateStream` = rounds + the clean click
probability of every candidate (``rewards``, (total,)) + optionally the examination probability of
each position (``examination``, (k,), decreasing; the position-based click model
P(click at slot j) = examination[j]·rewards[item]).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from .hashing import FeatureHasher, HashedRows

__all__ = ["CandidateRounds", "CandidateStream"]


def _check_matrix(X: Any, name: str, n_rows: int | None) -> Any:
    if isinstance(X, HashedRows):
        ip = np.asarray(X.indptr)
        if ip.ndim != 1 or ip.shape[0] < 1 or ip[0] != 0 or (np.diff(ip) < 0).any() \
                or ip[-1] != X.hashes.shape[0] or X.values.shape != X.hashes.shape or X.ns.shape != X.hashes.shape:
            raise ValueError(f"{name}: malformed hashed rows (indptr, hashes, values, ns do not agree).")
        if not np.isfinite(X.values).all():
            row = int(np.searchsorted(ip, np.flatnonzero(~np.isfinite(X.values))[0], side="right") - 1)
            raise ValueError(f"{name}: row {row} has NaN or infinite feature values.")
        if X.ns.size and (X.ns.min() < 0 or X.ns.max() >= len(X.namespaces)):
            raise ValueError(f"{name}: namespace ids outside 0..{len(X.namespaces) - 1}.")
        if n_rows is not None and X.n_rows != n_rows:
            raise ValueError(f"{name} must have {n_rows} rows; got {X.n_rows}.")
        return X
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        X.sort_indices()
        bad = ~np.isfinite(X.data)
        if bad.any():
            row = int(np.searchsorted(X.indptr, np.flatnonzero(bad)[0], side="right") - 1)
            raise ValueError(f"{name}: row {row} has NaN or infinite values.")
    else:
        arr = np.asarray(X)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold numbers; got dtype {arr.dtype}.")
        arr = np.ascontiguousarray(arr, dtype=np.float64)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be 2-D (rows × features); got shape {arr.shape}.")
        bad = ~np.isfinite(arr)
        if bad.any():
            raise ValueError(f"{name}: row {int(np.flatnonzero(bad.any(axis=1))[0])} has NaN or infinite values.")
        X = arr
    if n_rows is not None and X.shape[0] != n_rows:
        raise ValueError(f"{name} must have {n_rows} rows; got {X.shape[0]}.")
    return X


def _rows_of(X: Any, rows: np.ndarray) -> Any:
    if isinstance(X, HashedRows):
        return X.take(rows)
    return X[rows]


class CandidateRounds:
    """n rounds of (shared context, candidate list); see the module docstring.

    >>> import numpy as np
    >>> r = CandidateRounds(np.ones((2, 3)), np.eye(4), offsets=[0, 3, 4])
    >>> r.n_rounds, r.sizes.tolist(), r[1:].n_candidates
    (2, [3, 1], 1)
    """

    def __init__(self, context: Any, items: Any, offsets: Sequence[int] | np.ndarray,
                 item_ids: Sequence[Any] | np.ndarray | None = None):
        off = np.asarray(offsets)
        if off.ndim != 1 or off.shape[0] < 2 or off.dtype.kind not in "iu":
            raise ValueError("offsets must be a 1-D integer array of n_rounds + 1 entries (0, …, n_items).")
        off = off.astype(np.int64)
        if off[0] != 0:
            raise ValueError(f"offsets must start at 0; got {off[0]}.")
        sizes = np.diff(off)
        if (sizes <= 0).any():
            i = int(np.flatnonzero(sizes <= 0)[0])
            raise ValueError(f"round {i} has no candidates (offsets must increase).")
        n = off.shape[0] - 1
        self.context = _check_matrix(context, "context", n)
        self.items = _check_matrix(items, "items", int(off[-1]))
        if isinstance(self.context, HashedRows) != isinstance(self.items, HashedRows):
            raise TypeError("context and items must both be hashed rows or both be numeric arrays.")
        self.offsets = off
        if item_ids is not None:
            ids = np.asarray(item_ids)
            if ids.shape != (int(off[-1]),):
                raise ValueError(f"item_ids must have one entry per item row ({int(off[-1])}); got {ids.shape}.")
            self.item_ids = ids
        else:
            self.item_ids = None

    # ------------------------------------------------------------ shape
    @property
    def n_rounds(self) -> int:
        return self.offsets.shape[0] - 1

    def __len__(self) -> int:
        return self.n_rounds

    @property
    def n_candidates(self) -> int:
        """Item rows in all rounds together."""
        return int(self.offsets[-1])

    @property
    def sizes(self) -> np.ndarray:
        """Candidates per round."""
        return np.diff(self.offsets)

    @property
    def hashed(self) -> bool:
        return isinstance(self.context, HashedRows)

    @property
    def n_context_features(self) -> int | None:
        return None if self.hashed else int(self.context.shape[1])

    @property
    def n_item_features(self) -> int | None:
        return None if self.hashed else int(self.items.shape[1])

    def candidates(self, i: int) -> slice:
        """The item rows of round i."""
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def round_of(self) -> np.ndarray:
        """For every item row, its round."""
        return np.repeat(np.arange(self.n_rounds), self.sizes)

    # ---------------------------------------------------------- slicing
    def take(self, rounds: Sequence[int] | np.ndarray) -> "CandidateRounds":
        """The rounds ``rounds`` (in that order) as new CandidateRounds."""
        rounds = np.asarray(rounds, dtype=np.int64)
        if rounds.ndim != 1 or (rounds.size and (rounds.min() < -self.n_rounds or rounds.max() >= self.n_rounds)):
            raise IndexError(f"rounds must be 1-D indices in [0, {self.n_rounds}).")
        rounds = rounds % max(self.n_rounds, 1)
        sizes = self.sizes[rounds]
        off = np.zeros(rounds.shape[0] + 1, np.int64)
        np.cumsum(sizes, out=off[1:])
        item_rows = (np.concatenate([np.arange(self.offsets[r], self.offsets[r + 1]) for r in rounds])
                     if rounds.size else np.zeros(0, np.int64))
        return CandidateRounds(_rows_of(self.context, rounds), _rows_of(self.items, item_rows), off,
                               None if self.item_ids is None else self.item_ids[item_rows])

    def __getitem__(self, key) -> "CandidateRounds":
        if isinstance(key, (int, np.integer)):
            return self.take([int(key)])
        if isinstance(key, slice):
            return self.take(np.arange(self.n_rounds)[key])
        return self.take(key)

    # ---------------------------------------------------- construction
    @classmethod
    def from_lists(cls, context: Any, candidates: Iterable[Any], item_ids: Iterable[Iterable[Any]] | None = None
                   ) -> "CandidateRounds":
        """From a context matrix (n, d_c) and one (n_i, d_a) array of candidate features per round."""
        blocks = [np.atleast_2d(np.asarray(c, dtype=np.float64)) for c in candidates]
        off = np.zeros(len(blocks) + 1, np.int64)
        np.cumsum([b.shape[0] for b in blocks], out=off[1:])
        ids = None if item_ids is None else np.concatenate([np.asarray(list(r)) for r in item_ids])
        items = np.vstack(blocks) if blocks else np.zeros((0, 0))
        return cls(context, items, off, ids)

    @classmethod
    def from_features(cls, shared: Iterable[Any], actions: Iterable[Sequence[Any]],
                      item_ids: Iterable[Iterable[Any]] | None = None,
                      hasher: FeatureHasher | None = None) -> "CandidateRounds":
        """From namespaced dicts: ``shared[i]`` the context of round i, ``actions[i]`` its candidates' feature
        dicts (VW ADF / Personalizer form; strings hashed as VW's JSON does, see `noisyfeedback.hashing`).
        One hasher for both sides, so namespace ids are shared."""
        hasher = hasher or FeatureHasher()
        shared = list(shared)
        actions = [list(a) for a in actions]
        if len(shared) != len(actions):
            raise ValueError(f"shared has {len(shared)} rounds but actions has {len(actions)}.")
        ctx = hasher.transform(shared, "shared")
        off = np.zeros(len(actions) + 1, np.int64)
        np.cumsum([len(a) for a in actions], out=off[1:])
        items = hasher.transform([f for a in actions for f in a], "actions")
        names = hasher.namespaces  # every namespace seen, for both sides
        ctx = HashedRows(ctx.indptr, ctx.hashes, ctx.values, ctx.ns, names)
        items = HashedRows(items.indptr, items.hashes, items.values, items.ns, names)
        ids = None if item_ids is None else np.concatenate([np.asarray(list(r)) for r in item_ids])
        return cls(ctx, items, off, ids)

    def to_hashed(self, context_namespace: str = "s", item_namespace: str = "a") -> "CandidateRounds":
        """Numeric features as hashed rows: column j of the context is feature ``str(j)`` of namespace
        ``context_namespace``, column a of the items feature ``str(a)`` of ``item_namespace``."""
        if self.hashed:
            return self
        c = HashedRows.from_dense(self.context.toarray() if sp.issparse(self.context) else self.context,
                                  context_namespace)
        a = HashedRows.from_dense(self.items.toarray() if sp.issparse(self.items) else self.items, item_namespace)
        names = (context_namespace, item_namespace)
        return CandidateRounds(HashedRows(c.indptr, c.hashes, c.values, c.ns, names),
                               HashedRows(a.indptr, a.hashes, a.values, a.ns + 1, names), self.offsets,
                               self.item_ids)

    def __repr__(self) -> str:
        kind = "hashed" if self.hashed else f"d_c={self.n_context_features}, d_a={self.n_item_features}"
        return (f"CandidateRounds({self.n_rounds} rounds, {self.n_candidates} candidates, {kind}, "
                f"{int(self.sizes.min())}..{int(self.sizes.max())} a round)")


@dataclass(eq=False)
class CandidateStream:
    """Rounds with their ground truth, for simulation: ``rewards[r]`` the clean click probability of
    item row r (at the first position), ``examination`` the examination probability of each position
    (None: 1 for every slot), optionally ``item_age``."""

    rounds: CandidateRounds
    rewards: np.ndarray
    examination: np.ndarray | None = None
    #: optional: each candidate's age in rounds (catalogue churn), (total,)
    item_age: np.ndarray | None = None

    def __post_init__(self):
        if not isinstance(self.rounds, CandidateRounds):
            raise TypeError(f"rounds must be CandidateRounds; got {type(self.rounds).__name__}.")
        r = np.asarray(self.rewards, dtype=np.float64)
        if r.shape != (self.rounds.n_candidates,):
            raise ValueError(f"rewards must have one entry per item row ({self.rounds.n_candidates}); got {r.shape}.")
        bad = ~((r >= 0) & (r <= 1))
        if bad.any():
            raise ValueError(f"rewards must be probabilities in [0, 1]; item row {int(np.flatnonzero(bad)[0])} "
                             f"has {r[bad][0]!r}.")
        self.rewards = np.ascontiguousarray(r)
        if self.examination is not None:
            e = np.asarray(self.examination, dtype=np.float64)
            if e.ndim != 1 or e.size == 0 or not ((e > 0) & (e <= 1)).all():
                raise ValueError("examination must be a 1-D array of probabilities in (0, 1].")
            self.examination = np.ascontiguousarray(e)

    @property
    def n_rounds(self) -> int:
        return self.rounds.n_rounds

    def examination_for(self, k: int) -> np.ndarray:
        """The examination probabilities of k slots (ones where none are given)."""
        if self.examination is None:
            return np.ones(k)
        if self.examination.shape[0] < k:
            raise ValueError(f"the stream gives examination probabilities for {self.examination.shape[0]} "
                             f"positions; the learner fills {k} slots.")
        return self.examination[:k]

    def best_candidates(self) -> np.ndarray:
        """Per round the (first) candidate with the highest clean reward, as a position in the round."""
        out = np.empty(self.n_rounds, np.int64)
        for i in range(self.n_rounds):
            out[i] = int(np.argmax(self.rewards[self.rounds.candidates(i)]))
        return out

    def take(self, rounds) -> "CandidateStream":
        rounds = np.asarray(rounds, dtype=np.int64)
        sub = self.rounds.take(rounds)
        item_rows = np.concatenate([np.arange(self.rounds.offsets[r], self.rounds.offsets[r + 1]) for r in rounds])
        return CandidateStream(sub, self.rewards[item_rows], self.examination,
                               None if self.item_age is None else self.item_age[item_rows])
