"""Vowpal Wabbit-style feature hashing of namespaced dicts: signed 32-bit MurmurHash3 (``mmh3``).

Input (what a VW text/JSON parser gives, or a Personalizer request): a namespaced dict
``{namespace: {feature name: value}}``; values are numbers, or strings and booleans normalised as VW's
JSON reader does (``{"k": "v"}`` is the feature ``"kv"`` with value 1; ``True`` is the feature ``"k"``
with value 1, ``False`` and ``None`` are dropped; a nested dict is a namespace of its own, named by
its key); a scalar at the top level belongs to the default namespace ``" "``; a list of such dicts
(Personalizer's ``contextFeatures``) is merged in order. Values must be finite.

**Indices** (VW's formulas; the linear ones checked against ``vowpalwabbit``'s ``hash_space`` and
``hash_feature`` in the tests):

- a namespace's hash: ``hs = H(name, 0)``; a feature's full hash: ``h = H(feature name, hs)``, where
  ``H(s, seed)`` is ``int(s) + seed`` (mod 2^32) when ``s`` is all digits (VW's hashstring), else
  MurmurHash3_x86_32(s, seed) (unsigned); the namespace ``" "`` (VW's default) hashes to 0;
- a linear weight's index is ``h & (2^b − 1)``; the constant (intercept) is VW's ``11650396 & mask``;
- a quadratic interaction between a context feature ``h1`` and an item feature ``h2`` (VW's ``-q ab``
  for namespaces whose names start with ``a`` and ``b``) is ``((h1 · 16777619) ^ h2) & mask``
  (FNV prime, VW's ``interactions_predict``).

Full 32-bit hashes are kept (not masked) so that interactions are formed from them as VW does; the
learners mask. Bit-compatibility with VW holds for the linear indices (tested); for the quadratic ones
we follow VW's published formula without a test against VW's own index (VW also multiplies by its
weight stride, which has no counterpart here).

Each example is hashed into `HashedRows`: CSR-like rows of (full hash, value, namespace id),
the namespace ids indexing ``namespaces`` (the names in order of first appearance, shared by every
row that one `FeatureHasher` call hashes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

import mmh3
import numpy as np

__all__ = ["HashedRows", "FeatureHasher", "hash_string", "namespace_hash", "feature_hash",
           "normalise_features", "interaction_index", "CONSTANT_HASH", "FNV_PRIME", "DEFAULT_NAMESPACE"]

#: VW's default namespace (features outside any named namespace)
DEFAULT_NAMESPACE = " "
#: VW's hash of the constant feature (the intercept)
CONSTANT_HASH = 11650396
#: the multiplier of VW's quadratic interaction index
FNV_PRIME = 16777619
_MASK32 = 0xFFFFFFFF


def hash_string(s: str, seed: int) -> int:
    """VW's hashstring: leading/trailing spaces removed; all digits: int(s) + seed (mod 2^32); else
    MurmurHash3_x86_32 of the UTF-8 bytes with ``seed``, unsigned. (An empty string is all digits: seed.)"""
    t = s.strip(" \t")
    if t == "" or (t.isascii() and t.isdigit()):
        return ((int(t) if t else 0) + seed) & _MASK32
    return mmh3.hash(t, seed & _MASK32, signed=False)


def namespace_hash(name: str) -> int:
    """A namespace's hash (the seed of its features' hashes); VW's default namespace ``" "`` is 0."""
    return hash_string(name, 0)


def feature_hash(name: str, ns_hash: int) -> int:
    """A feature's full 32-bit hash in the namespace whose hash is ``ns_hash``."""
    return hash_string(name, ns_hash)


def interaction_index(h1: int, h2: int, bits: int) -> int:
    """The weight index of the quadratic feature of full hashes h1 (context) and h2 (item): VW's
    ``((h1 · FNV) ^ h2) & (2^bits − 1)``."""
    return ((h1 * FNV_PRIME) ^ h2) & ((1 << bits) - 1)


#: feature values of these exact types are added as they are (the common case, checked first)
_SCALARS = frozenset((str, int, float, bool, type(None)))


def normalise_features(features: Any, where: str = "features") -> dict[str, dict[str, float]]:
    """The namespaced-dict form {namespace: {name: value}} of a VW/JSON-style feature object (module doc)."""
    out: dict[str, dict[str, float]] = {}
    if features is None:
        return out
    if isinstance(features, (list, tuple)):
        for i, part in enumerate(features):
            for ns, feats in normalise_features(part, f"{where}[{i}]").items():
                out.setdefault(ns, {}).update(feats)
        return out
    if type(features) is not dict and not isinstance(features, Mapping):
        raise TypeError(f"{where} must be a dict of namespaces (or a list of such dicts); got "
                        f"{type(features).__name__}.")

    def put(ns: str, name: str, value: Any, at: Callable[[], str]) -> None:
        """Add one feature; ``at()`` names it in an error (built only then)."""
        if value is None or value is False:
            return
        if value is True:
            out.setdefault(ns, {})[name] = 1.0
        elif isinstance(value, str):
            out.setdefault(ns, {})[name + value] = 1.0
        elif isinstance(value, (int, float, np.integer, np.floating)):
            x = float(value)
            if not math.isfinite(x):
                raise ValueError(f"{at()}: feature values must be finite; got {value!r}.")
            out.setdefault(ns, {})[name] = x
        else:
            raise TypeError(f"{at()}: a feature value must be a number, a string or a boolean; got "
                            f"{type(value).__name__}.")

    for key, value in features.items():
        key = str(key)
        if type(value) is dict or isinstance(value, Mapping):
            for name, v in value.items():
                if type(v) in _SCALARS:
                    put(key, str(name), v, lambda name=name: f"{where}[{key!r}][{name!r}]")
                elif type(v) is dict or isinstance(v, Mapping):  # deeper nesting: a namespace of its own
                    for ns, feats in normalise_features({str(name): v}, f"{where}[{key!r}]").items():
                        out.setdefault(ns, {}).update(feats)
                elif isinstance(v, (list, tuple)):
                    for i, item in enumerate(v):
                        put(key, f"{name}{i}" if not isinstance(item, str) else str(name), item,
                            lambda name=name, i=i: f"{where}[{key!r}][{name!r}][{i}]")
                else:
                    put(key, str(name), v, lambda name=name: f"{where}[{key!r}][{name!r}]")
        elif isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                      for v in value):
            for i, v in enumerate(value):  # a dense array of numbers: features key0, key1, ...
                put(DEFAULT_NAMESPACE, f"{key}{i}", v, lambda i=i: f"{where}[{key!r}][{i}]")
        else:
            put(DEFAULT_NAMESPACE, key, value, lambda: f"{where}[{key!r}]")
    return out


@dataclass
class HashedRows:
    """Hashed examples as CSR-like rows: row i's features are ``[indptr[i], indptr[i+1])`` of
    ``hashes`` (full 32-bit hashes, int64), ``values`` (float64) and ``ns`` (int64 index into
    ``namespaces``)."""

    indptr: np.ndarray
    hashes: np.ndarray
    values: np.ndarray
    ns: np.ndarray
    namespaces: tuple[str, ...]

    @property
    def n_rows(self) -> int:
        return self.indptr.shape[0] - 1

    def __len__(self) -> int:
        return self.n_rows

    def take(self, rows: np.ndarray) -> "HashedRows":
        """The rows ``rows`` (in that order) as a new HashedRows with the same namespaces."""
        rows = np.asarray(rows, dtype=np.int64)
        lens = self.indptr[rows + 1] - self.indptr[rows]
        indptr = np.zeros(rows.shape[0] + 1, np.int64)
        np.cumsum(lens, out=indptr[1:])
        sel = np.concatenate([np.arange(self.indptr[r], self.indptr[r + 1]) for r in rows]) if rows.size \
            else np.zeros(0, np.int64)
        sel = sel.astype(np.int64)
        return HashedRows(indptr, self.hashes[sel], self.values[sel], self.ns[sel], self.namespaces)

    @classmethod
    def from_dense(cls, X: np.ndarray, namespace: str, prefix: str = "") -> "HashedRows":
        """Numeric columns as features ``prefix + str(j)`` of one namespace (zeros skipped)."""
        X = np.asarray(X, dtype=np.float64)
        hs = namespace_hash(namespace)
        col = np.array([feature_hash(f"{prefix}{j}", hs) for j in range(X.shape[1])], np.int64)
        mask = X != 0.0
        indptr = np.zeros(X.shape[0] + 1, np.int64)
        np.cumsum(mask.sum(axis=1), out=indptr[1:])
        rows, cols = np.nonzero(mask)
        return cls(indptr, col[cols], X[rows, cols], np.zeros(cols.shape[0], np.int64), (namespace,))


class FeatureHasher:
    """Hash namespaced dicts (module doc) into `HashedRows`.

    >>> h = FeatureHasher()
    >>> rows = h.transform([{"user": {"age": 31, "country": "fr"}}, {"user": {"age": 40}}])
    >>> rows.indptr.tolist(), rows.namespaces
    ([0, 2, 3], ('user',))
    """

    def __init__(self, namespaces: Iterable[str] = (), hashes: dict | None = None):
        self._names: list[str] = list(namespaces)
        self._ids = {n: i for i, n in enumerate(self._names)}
        self._ns_hash: dict[str, int] = {}
        #: feature hashes by (namespace hash, name): a dict that may be shared between hashers (a service
        #: keeps one across requests; hashes never change, so sharing changes no bit)
        self._cache: dict[tuple[int, str], int] = {} if hashes is None else hashes

    @property
    def namespaces(self) -> tuple[str, ...]:
        return tuple(self._names)

    def _ns(self, name: str) -> tuple[int, int]:
        i = self._ids.get(name)
        if i is None:
            i = self._ids[name] = len(self._names)
            self._names.append(name)
        hs = self._ns_hash.get(name)
        if hs is None:
            hs = self._ns_hash[name] = namespace_hash(name)
        return i, hs

    def transform(self, examples: Iterable[Any], where: str = "features") -> HashedRows:
        """One row per example (a namespaced dict, a JSON-style dict or a list of them)."""
        indptr = [0]
        hashes: list[int] = []
        values: list[float] = []
        ns_ids: list[int] = []
        cache = self._cache
        for e, ex in enumerate(examples):
            for ns, feats in normalise_features(ex, f"{where}[{e}]").items():
                i, hs = self._ns(ns)
                for name, v in feats.items():
                    key = (hs, name)
                    h = cache.get(key)
                    if h is None:
                        h = cache[key] = feature_hash(name, hs)
                    hashes.append(h)
                    values.append(float(v))
                    ns_ids.append(i)
            indptr.append(len(hashes))
        return HashedRows(np.asarray(indptr, np.int64), np.asarray(hashes, np.int64),
                          np.asarray(values, np.float64), np.asarray(ns_ids, np.int64), self.namespaces)
