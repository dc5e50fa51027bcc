"""Logged bandit data in the formats practitioners have: Vowpal Wabbit contextual-bandit text, and
CSV/Parquet tables with named columns. Every reader returns a :class:`BanditLog`
(X, actions, rewards, propensities) ready for :func:`noisyfeedback.ope.evaluate` and ``fit_logged``.

**Vowpal Wabbit ``--cb`` text** [1]_: one example a line, ``action:cost:probability [tag]| features``,
e.g. ``2:-1:0.25 |user age:0.3 tall |item red``. Actions are 1-based in the file and 0-based here;
rewards are ``−cost`` (VW minimises cost; pass ``reward="one_minus_cost"`` for 0/1 costs
meaning "no click"). Features: after each ``|`` an optional namespace name (``|user``, optionally
scaled ``|user:0.5``), then ``name`` or ``name:value`` tokens; a feature is identified by
``namespace^name``. Columns are either indexed (``features="index"``: in order of first
appearance, or in the order of ``feature_names`` if given) or hashed (``features="hash"``: crc32 of
``namespace^name`` modulo 2**``n_bits`` — not VW's murmur hash, so column numbers differ from VW's).
Blank lines are skipped. Multi-line (``--cb_adf``, ``shared``) examples and unlabelled lines are not
supported; a malformed line raises ValueError naming the file and line.

.. [1] Vowpal Wabbit wiki, "Contextual Bandit Example" and "Input format".
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import scipy.sparse as sp

__all__ = ["BanditLog", "read_vw_cb", "write_vw_cb", "read_log", "write_log"]


@dataclass
class BanditLog:
    """Logged rows: X (n, d) (CSR from VW text, dense from tables), actions (n,) int64 0-based,
    rewards (n,) float64, propensities (n,) float64, feature_names (d names, or None when hashed)."""

    X: Any
    actions: np.ndarray
    rewards: np.ndarray
    propensities: np.ndarray
    feature_names: list[str] | None = None

    def __iter__(self):  # X, actions, rewards, propensities = log
        return iter((self.X, self.actions, self.rewards, self.propensities))


def _lines(source) -> tuple[str, Iterable[str]]:
    if isinstance(source, (str, os.PathLike)) and not (isinstance(source, str) and "\n" in source):
        path = Path(source)
        return str(path), path.read_text(encoding="utf-8").splitlines()
    if isinstance(source, str):
        return "<text>", source.splitlines()
    return "<lines>", list(source)


def read_vw_cb(source: str | os.PathLike | Iterable[str], features: str = "index", n_bits: int = 18,
               feature_names: Sequence[str] | None = None, reward: str = "negative_cost") -> BanditLog:
    """Read VW contextual-bandit text (a path, a string with newlines, or an iterable of lines).

    >>> log = read_vw_cb("1:0:0.5 |u a b:2\\n\\n2:-1:0.25 |u b |v c:0.5\\n")
    >>> log.actions.tolist(), log.rewards.tolist(), log.propensities.tolist(), log.feature_names
    ([0, 1], [-0.0, 1.0], [0.5, 0.25], ['u^a', 'u^b', 'v^c'])
    >>> log.X.toarray().tolist()
    [[1.0, 2.0, 0.0], [0.0, 1.0, 0.5]]
    """
    if features not in ("index", "hash"):
        raise ValueError(f"features must be 'index' or 'hash'; got {features!r}.")
    if reward not in ("negative_cost", "one_minus_cost"):
        raise ValueError(f"reward must be 'negative_cost' or 'one_minus_cost'; got {reward!r}.")
    name, lines = _lines(source)
    fixed = feature_names is not None
    vocab: dict[str, int] = {f: j for j, f in enumerate(feature_names)} if fixed else {}
    indptr, indices, data = [0], [], []
    actions, costs, probs = [], [], []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue

        def bad(msg: str) -> ValueError:
            return ValueError(f"{name}, line {lineno}: {msg} (in {line.strip()[:60]!r}).")

        if line.lstrip().startswith("shared"):
            raise bad("multi-line (cb_adf) examples are not supported")
        if "|" not in line:
            raise bad("no '|' before the features")
        head, *spaces = line.split("|")
        label = [t for t in head.split() if not t.startswith("'")]
        if len(label) != 1:
            raise bad("expected one label 'action:cost:probability' before '|'")
        parts = label[0].split(":")
        if len(parts) != 3:
            raise bad(f"the label {label[0]!r} is not 'action:cost:probability'")
        try:
            a, c, p = int(parts[0]), float(parts[1]), float(parts[2])
        except ValueError:
            raise bad(f"the label {label[0]!r} is not 'action:cost:probability' with numbers") from None
        if a < 1:
            raise bad(f"actions are 1-based; got {a}")
        if not (0 < p <= 1) or not np.isfinite(c):
            raise bad(f"the probability must be in (0, 1] and the cost finite; got {parts[2]}, {parts[1]}")
        row: dict[int, float] = {}
        for sp_text in spaces:
            toks = sp_text.split()
            if sp_text[:1].strip():  # "|ns ..." — a namespace name right after the pipe
                ns_tok, toks = toks[0], toks[1:]
                ns, _, scale_s = ns_tok.partition(":")
                try:
                    scale = float(scale_s) if scale_s else 1.0
                except ValueError:
                    raise bad(f"namespace scale {scale_s!r} is not a number") from None
            else:
                ns, scale = " ", 1.0
            for tok in toks:
                fname, colon, val = tok.rpartition(":") if ":" in tok else (tok, "", "")
                try:
                    v = float(val) if colon else 1.0
                except ValueError:
                    raise bad(f"feature value {val!r} of {fname!r} is not a number") from None
                if not np.isfinite(v):
                    raise bad(f"feature value of {fname!r} is not finite")
                key = f"{ns}^{fname}"
                if features == "hash":
                    j = zlib.crc32(key.encode("utf-8")) % (1 << n_bits)
                else:
                    j = vocab.get(key)
                    if j is None:
                        if fixed:
                            raise bad(f"feature {key!r} is not in feature_names")
                        j = vocab[key] = len(vocab)
                row[j] = row.get(j, 0.0) + v * scale
        cols = sorted(row)
        indices += cols
        data += [row[j] for j in cols]
        indptr.append(len(indices))
        actions.append(a - 1)
        costs.append(c)
        probs.append(p)
    if not actions:
        raise ValueError(f"{name}: no examples.")
    d = (1 << n_bits) if features == "hash" else len(vocab)
    X = sp.csr_matrix((np.array(data, dtype=np.float64), np.array(indices, dtype=np.int64),
                       np.array(indptr, dtype=np.int64)), shape=(len(actions), d))
    cost = np.array(costs, dtype=np.float64)
    rewards = -cost if reward == "negative_cost" else 1.0 - cost
    names = None if features == "hash" else list(vocab)
    return BanditLog(X, np.array(actions, dtype=np.int64), rewards, np.array(probs, dtype=np.float64), names)


def write_vw_cb(path: str | os.PathLike, X: Any, actions: Any, rewards: Any, propensities: Any,
                feature_names: Sequence[str] | None = None, reward: str = "negative_cost") -> Path:
    """Write logged rows as VW contextual-bandit text (zero features left out; floats written exactly).

    ``feature_names`` may be ``"namespace^name"`` (written in that namespace) or plain names
    (namespace ``f``); default ``f^0, f^1, ...``."""
    Xc = sp.csr_matrix(X, dtype=np.float64)
    n, d = Xc.shape
    actions, rewards, props = np.asarray(actions), np.asarray(rewards, dtype=np.float64), np.asarray(propensities,
                                                                                                    dtype=np.float64)
    names = [f"f^{j}" for j in range(d)] if feature_names is None else [
        f if "^" in f else f"f^{f}" for f in feature_names]
    if len(names) != d:
        raise ValueError(f"feature_names has {len(names)} names; X has {d} columns.")
    for f in names:
        if any(ch in f for ch in " |:\t\n"):
            raise ValueError(f"feature name {f!r} holds a space, '|' or ':', which VW text cannot carry.")
    cost = -rewards if reward == "negative_cost" else 1.0 - rewards
    out = []
    for i in range(n):
        lo, hi = Xc.indptr[i], Xc.indptr[i + 1]
        by_ns: dict[str, list[str]] = {}
        for j, v in zip(Xc.indices[lo:hi], Xc.data[lo:hi]):
            if v == 0:
                continue
            ns, _, fname = names[j].partition("^")
            by_ns.setdefault(ns, []).append(fname if v == 1.0 else f"{fname}:{float(v)!r}")
        feats = " ".join(f"|{ns} " + " ".join(toks) for ns, toks in by_ns.items()) or "|"
        out.append(f"{int(actions[i]) + 1}:{float(cost[i])!r}:{float(props[i])!r} {feats}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def read_log(path: str | os.PathLike, action: str = "action", reward: str = "reward",
             propensity: str = "propensity", features: Sequence[str] | None = None) -> BanditLog:
    """Read a CSV or Parquet log with named columns: ``action`` (0-based ints), ``reward``,
    ``propensity``, and feature columns (``features``, default every other numeric column)."""
    import pandas as pd

    path = Path(path)
    df = pd.read_parquet(path) if path.suffix in (".parquet", ".pq") else pd.read_csv(path)
    for col in (action, reward, propensity):
        if col not in df.columns:
            raise ValueError(f"{path}: no column named {col!r}; the columns are {list(df.columns)}.")
    if features is None:
        features = [c for c in df.columns if c not in (action, reward, propensity)
                    and pd.api.types.is_numeric_dtype(df[c])]
    missing = [c for c in features if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: feature column(s) {missing} not found.")
    X = np.ascontiguousarray(df[list(features)].to_numpy(dtype=np.float64))
    bad = ~np.isfinite(X).all(axis=1)
    if bad.any():
        raise ValueError(f"{path}: a feature is missing or not finite in data row {int(np.flatnonzero(bad)[0])}.")
    a = df[action].to_numpy()
    if not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{path}: column {action!r} must hold integer action indices; got dtype {a.dtype}.")
    return BanditLog(X, a.astype(np.int64), df[reward].to_numpy(dtype=np.float64),
                     df[propensity].to_numpy(dtype=np.float64), [str(c) for c in features])


def write_log(path: str | os.PathLike, X: Any, actions: Any, rewards: Any, propensities: Any,
              feature_names: Sequence[str] | None = None) -> Path:
    """Write a log as CSV or Parquet (by suffix) with columns action, reward, propensity and the features."""
    import pandas as pd

    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    names = [f"x{j}" for j in range(X.shape[1])] if feature_names is None else list(feature_names)
    df = pd.DataFrame(X, columns=names)
    df.insert(0, "propensity", np.asarray(propensities, dtype=np.float64))
    df.insert(0, "reward", np.asarray(rewards, dtype=np.float64))
    df.insert(0, "action", np.asarray(actions, dtype=np.int64))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix in (".parquet", ".pq"):
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False, float_format=None)
    return path
