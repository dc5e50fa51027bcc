"""Logged bandit data in the formats practitioners have: Vowpal Wabbit contextual-bandit text, and
CSV/Parquet tables with named columns. Every reader returns a `BanditLog`
(X, actions, rewards, propensities) ready for `noisyfeedback.ope.evaluate` and ``fit_logged``.

**Vowpal Wabbit ``--cb`` text** [1]_: one example a line, ``action:cost:probability [tag]| features``,
e.g. ``2:-1:0.25 |user age:0.3 tall |item red``. Actions are 1-based in the file and 0-based here;
rewards are ``−cost`` (VW minimises cost; pass ``reward="one_minus_cost"`` for 0/1 costs
meaning "no click"). Features: after each ``|`` an optional namespace name (``|user``, optionally
scaled ``|user:0.5``), then ``name`` or ``name:value`` tokens; a feature is identified by
``namespace^name``. Columns are indexed (``features="index"``: in order of first
appearance, or in the order of ``feature_names`` if given), numbered (``features="column"``: every
feature name is a column number 0, 1, … in the default namespace, as the decision service's
``export-log -o log.vw`` writes them; ``n_features`` gives the width, default the largest number + 1)
or hashed (``features="hash"``: crc32 of ``namespace^name`` modulo 2**``n_bits`` — not VW's murmur
hash, so column numbers differ from VW's). The default (``features=None``) is ``"column"`` when every
feature of the file is such a number, else ``"index"``. Blank lines are skipped; a UTF-8 byte-order
mark at the start of the file is skipped. Multi-line (``--cb_adf``, ``shared``) examples and
unlabelled lines are not supported; a malformed line (bad UTF-8, a non-finite or overflowing value or
namespace scale, an action beyond int64, a probability outside (0, 1]) raises ValueError naming the
file and line.

**Tables** (`read_log`): CSV or Parquet with columns ``action`` (0-based ints), ``reward``,
``propensity`` and features; or the decision service's ``export-log -o log.parquet`` (recognised by its
columns: ``context`` lists become the features ``0``, ``1``, …, ``probability`` the propensity, the text
``action`` an int; events without a reward are left out). Every value is checked: a non-numeric feature
cell, an action that is not an int in [0, 2**63), a propensity outside (0, 1] or a non-finite reward
raises ValueError naming the column and the data row.

.. [1] Vowpal Wabbit wiki, "Contextual Bandit Example" and "Input format".
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from .streams import BanditLog, concat_chunks, stream_log

__all__ = ["BanditLog", "read_vw_cb", "write_vw_cb", "read_log", "write_log"]


def _lines(source) -> tuple[str, list[str]]:
    """(name, lines) of a path, a string with newlines, or an iterable of lines; a file's bytes are
    decoded line by line, so invalid UTF-8 is reported with its line; a leading BOM is dropped."""
    if isinstance(source, (str, os.PathLike)) and not (isinstance(source, str) and "\n" in source):
        path = Path(source)
        raw = path.read_bytes()
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        lines = []
        for lineno, line in enumerate(raw.splitlines(), 1):
            try:
                lines.append(line.decode("utf-8"))
            except UnicodeDecodeError as e:
                raise ValueError(f"{path}, line {lineno}: not valid UTF-8 (byte {e.start + 1} of the line).") from None
        return str(path), lines
    if isinstance(source, str):
        lines = source.splitlines()
    else:
        lines = list(source)
    name = "<text>" if isinstance(source, str) else "<lines>"
    if lines and isinstance(lines[0], str) and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    return name, lines


_INT64_MAX = np.iinfo(np.int64).max


def _column_number(fname: str) -> int | None:
    """The column of a feature named by a plain ASCII decimal number, else None."""
    return int(fname) if fname.isascii() and fname.isdigit() else None


def read_vw_cb(source: str | os.PathLike | Iterable[str], features: str | None = None, n_bits: int = 18,
               feature_names: Sequence[str] | None = None, reward: str = "negative_cost",
               n_features: int | None = None) -> BanditLog:
    """Read VW contextual-bandit text (a path, a string with newlines, or an iterable of lines).

    ``features``: ``"index"``, ``"column"``, ``"hash"`` or None (``"column"`` when every feature name
    is a column number in the default namespace, else ``"index"``); see the module docstring.
    ``n_bits`` (hash): an int in [1, 32]. ``n_features`` (column): the width of X.

    >>> log = read_vw_cb("1:0:0.5 |u a b:2\\n\\n2:-1:0.25 |u b |v c:0.5\\n")
    >>> log.actions.tolist(), log.rewards.tolist(), log.propensities.tolist(), log.feature_names
    ([0, 1], [0.0, 1.0], [0.5, 0.25], ['u^a', 'u^b', 'v^c'])
    >>> log.X.toarray().tolist()
    [[1.0, 2.0, 0.0], [0.0, 1.0, 0.5]]
    >>> read_vw_cb("1:0:0.5 | 2:0.5 0:1\\n", n_features=4).X.toarray().tolist()
    [[1.0, 0.0, 0.5, 0.0]]
    """
    if features not in (None, "index", "column", "hash"):
        raise ValueError(f"features must be 'index', 'column', 'hash' or None; got {features!r}.")
    if features == "hash" and (isinstance(n_bits, bool) or not isinstance(n_bits, (int, np.integer))
                               or not 1 <= n_bits <= 32):
        raise ValueError(f"n_bits must be an int in [1, 32] (crc32 has 32 bits); got {n_bits!r}.")
    if n_features is not None and (isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer))
                                   or n_features < 0):
        raise ValueError(f"n_features must be an int >= 0 or None; got {n_features!r}.")
    if reward not in ("negative_cost", "one_minus_cost"):
        raise ValueError(f"reward must be 'negative_cost' or 'one_minus_cost'; got {reward!r}.")
    name, lines = _lines(source)
    if features is None:
        features = "index" if feature_names is not None or not _all_numbered(lines) else "column"
    if features == "column" and feature_names is not None:
        raise ValueError("feature_names is for features='index'; with features='column' the names are the columns.")
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
            if not (parts[0].isascii() and parts[0].isdigit()):
                raise ValueError
            a, c, p = int(parts[0]), float(parts[1]), float(parts[2])
        except ValueError:
            raise bad(f"the label {label[0]!r} is not 'action:cost:probability' with numbers") from None
        if a < 1:
            raise bad(f"actions are 1-based; got {a}")
        if a - 1 > _INT64_MAX:
            raise bad(f"the action {parts[0][:30]} is beyond int64")
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
                if not np.isfinite(scale):
                    raise bad(f"namespace scale {scale_s!r} of {ns!r} is not finite")
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
                elif features == "column":
                    j = _column_number(fname) if ns == " " else None
                    if j is None:
                        raise bad(f"feature {key!r} is not a column number in the default namespace "
                                  "(features='column')")
                    if n_features is not None and j >= n_features:
                        raise bad(f"feature column {j} is beyond n_features={n_features}")
                    if j > _INT64_MAX // 2:
                        raise bad(f"feature column {fname[:30]} is too large")
                else:
                    j = vocab.get(key)
                    if j is None:
                        if fixed:
                            raise bad(f"feature {key!r} is not in feature_names")
                        j = vocab[key] = len(vocab)
                total = row.get(j, 0.0) + v * scale
                if not np.isfinite(total):
                    raise bad(f"feature {key!r} times its namespace scale {scale!r} overflows")
                row[j] = total
        cols = sorted(row)
        indices += cols
        data += [row[j] for j in cols]
        indptr.append(len(indices))
        actions.append(a - 1)
        costs.append(c)
        probs.append(p)
    if not actions:
        raise ValueError(f"{name}: no examples.")
    if features == "hash":
        d = 1 << n_bits
    elif features == "column":
        d = n_features if n_features is not None else (max(indices) + 1 if indices else 0)
    else:
        d = len(vocab)
    X = sp.csr_matrix((np.array(data, dtype=np.float64), np.array(indices, dtype=np.int64),
                       np.array(indptr, dtype=np.int64)), shape=(len(actions), d))
    cost = np.array(costs, dtype=np.float64)
    rewards = 0.0 - cost if reward == "negative_cost" else 1.0 - cost  # 0.0 - 0.0: no -0.0
    names = None if features == "hash" else [str(j) for j in range(d)] if features == "column" else list(vocab)
    return BanditLog(X, np.array(actions, dtype=np.int64), rewards, np.array(probs, dtype=np.float64), names)


def _all_numbered(lines: list[str]) -> bool:
    """Whether every feature of every example is a column number in the default namespace ("| 0:1.5 3")."""
    seen = False
    for line in lines:
        if not line.strip() or "|" not in line:
            continue
        for sp_text in line.split("|")[1:]:
            if sp_text[:1].strip():  # a named namespace
                return False
            for tok in sp_text.split():
                fname = tok.rpartition(":")[0] if ":" in tok else tok
                if _column_number(fname) is None:
                    return False
                seen = True
    return seen


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
    cost = 0.0 - rewards if reward == "negative_cost" else 1.0 - rewards  # no -0.0 written
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


def read_log(path: Any, action: str = "action", reward: str = "reward", propensity: str = "propensity",
             features: Sequence[str] | None = None, *, format: str | None = None, **options: Any) -> BanditLog:
    """Read a CSV or Parquet log with named columns: ``action`` (0-based ints), ``reward``,
    ``propensity``, and feature columns (``features``, default every other column, each of which must
    then be numeric). The decision service's ``export-log -o log.parquet`` is read as such (see the
    module docstring). Every value is checked; a bad one raises ValueError naming column and row.

    ``path``: a file, a directory of files, a glob, a list of paths or a ``pyarrow.dataset.Dataset``.
    The whole log in memory: the chunks of `noisyfeedback.datasets.streams.stream_log`
    concatenated (for a log larger than memory, stream it)."""
    return concat_chunks(stream_log(path, format=format, action=action, reward=reward, propensity=propensity,
                                    features=features, **options))


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
