"""The logged form of an action-feature request: one hashed round of
`CandidateRounds` as bytes (the ``context`` column of its event), the
rounds of many events read back as one, namespaces reduced to their interaction classes, and the digest
of a request (a retried rank with the same event id gets the logged answer).
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any

import numpy as np
import orjson

from ..catalogue import CandidateRounds
from ..hashing import HashedRows

__all__ = ["encode_round", "decode_round", "rounds_of", "canonical_namespaces", "request_digest"]

_HEAD = struct.Struct("<I")


def encode_round(rounds: CandidateRounds, ids: list[str], slots: list[str] | None, probs: np.ndarray) -> bytes:
    """One hashed round as bytes: a JSON head (namespaces, action ids, slot ids, sizes), then the context
    and item rows (indptr, hashes, values, namespace ids) and each slot's probability, little-endian."""
    c, a = rounds.context, rounds.items
    head = orjson.dumps({"ns": list(c.namespaces), "ids": ids, "slots": slots, "nc": int(c.hashes.shape[0]),
                         "na": int(a.hashes.shape[0]), "nr": int(a.n_rows), "k": int(probs.shape[0])})
    parts = [_HEAD.pack(len(head)), head]
    for arr, dt in ((c.indptr, "<i8"), (c.hashes, "<i8"), (c.values, "<f8"), (c.ns, "<i8"), (a.indptr, "<i8"),
                    (a.hashes, "<i8"), (a.values, "<f8"), (a.ns, "<i8"), (probs, "<f8")):
        parts.append(np.ascontiguousarray(arr, dtype=dt).tobytes())
    return b"".join(parts)


def decode_round(blob: bytes) -> dict[str, Any]:
    """Inverse of `encode_round`: the head's fields plus ``context``, ``items`` (HashedRows) and
    ``probs``."""
    (n,) = _HEAD.unpack_from(blob, 0)
    head = orjson.loads(blob[4:4 + n])
    pos = 4 + n

    def take(count, dt):
        nonlocal pos
        arr = np.frombuffer(blob, dtype=dt, count=count, offset=pos)
        pos += 8 * count
        return arr.astype(dt[1:] if dt[0] == "<" else dt)

    names = tuple(head["ns"])
    nc, na, nr = head["nc"], head["na"], head["nr"]
    c = HashedRows(take(2, "<i8"), take(nc, "<i8"), take(nc, "<f8"), take(nc, "<i8"), names)
    a = HashedRows(take(nr + 1, "<i8"), take(na, "<i8"), take(na, "<f8"), take(na, "<i8"), names)
    return {**head, "context": c, "items": a, "probs": take(head["k"], "<f8")}


def rounds_of(records: list[dict]) -> CandidateRounds:
    """Logged rounds as one CandidateRounds (namespace ids mapped onto the union of their names)."""
    names: dict[str, int] = {}
    maps = []
    for r in records:
        maps.append(np.array([names.setdefault(n, len(names)) for n in r["context"].namespaces] or [0], np.int64))
    all_names = tuple(names)

    def cat(side: str) -> HashedRows:
        indptr, hashes, values, ns = [np.zeros(1, np.int64)], [], [], []
        base = 0
        for r, m in zip(records, maps):
            h = r[side]
            indptr.append(h.indptr[1:] + base)
            base += int(h.indptr[-1])
            hashes.append(h.hashes)
            values.append(h.values)
            ns.append(m[h.ns] if h.ns.size else h.ns)
        return HashedRows(np.concatenate(indptr), np.concatenate(hashes), np.concatenate(values),
                          np.concatenate(ns), all_names)

    off = np.zeros(len(records) + 1, np.int64)
    np.cumsum([r["nr"] for r in records], out=off[1:])
    return CandidateRounds(cat("context"), cat("items"), off)


def canonical_namespaces(rounds: CandidateRounds, interactions) -> CandidateRounds:
    """The rounds with each namespace replaced by its class under ``interactions`` (VW's -q pairs of first
    letters): its first letter when a pair names that letter, else one class for all the others ("" ; every
    namespace in one class when ``interactions`` is None). Which feature pairs interact is unchanged (the
    learners read namespaces only through that table, and the table is all ones exactly when it was), so
    the model computes the same bits; the table stays small whatever names a request invents, and logged
    rounds share their namespace classes."""
    names = rounds.context.namespaces
    letters = set() if interactions is None else {ch for pair in interactions for ch in pair} - {":"}
    cls = [n[:1] if n[:1] in letters else "" for n in names]
    uniq = list(dict.fromkeys(cls)) or [""]
    idmap = np.array([uniq.index(c) for c in cls] or [0], np.int64)

    def remap(h: HashedRows) -> HashedRows:
        return HashedRows(h.indptr, h.hashes, h.values, idmap[h.ns] if h.ns.size else h.ns, tuple(uniq))

    return CandidateRounds(remap(rounds.context), remap(rounds.items), rounds.offsets)


def request_digest(kind: str, context_features, actions, excluded, slots, defer: bool) -> str:
    """The SHA-256 of a rank request's content (the same for its native and Personalizer forms)."""
    body = orjson.dumps([kind, context_features, actions, sorted(set(excluded or ())), slots, bool(defer)],
                        option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(body).hexdigest()
