"""Export the service's log for offline work: Parquet (one row per event) and Vowpal Wabbit's text formats
(cb for numeric contexts; cb_adf and ccb, with the hashed features, for actions described by features)."""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .storage import decode_action
from .stores import open_storage

__all__ = ["export_parquet", "export_csv", "export_vw", "export_catalogue_parquet", "export_catalogue_vw", "export_log",
           "FORMATS"]

COLUMNS = ("event_seq", "event_id", "ranked_at", "context", "action", "probability", "distribution", "n_draws",
           "mode", "default_action", "greedy", "model_version", "reward_seq", "reward", "reward_timestamp",
           "reward_received_at")

#: output suffix -> format
FORMATS = {".parquet": "parquet", ".csv": "csv", ".vw": "vw"}


@contextmanager
def _replacing(path: Path):
    """A temporary file next to ``path`` that replaces it (rename) once written; removed on failure."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _columns(storage) -> dict[str, list]:
    cols: dict[str, list] = {c: [] for c in COLUMNS}
    for row in storage.log():
        for c, v in zip(COLUMNS, row):
            if c in ("context", "distribution"):
                v = np.frombuffer(v, dtype=np.float64).tolist()
            cols[c].append(v)
    return cols


def export_parquet(db: str | Path, path: str | Path, storage=None) -> Path:
    """Every logged event (in event seq order) with its reward (null when none arrived) as a Parquet file.

    ``context`` and ``distribution`` are lists of float64; ``action``, ``default_action`` and ``greedy``
    are the labels as text ("3", or "1,4,7" for sets)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    storage = storage if storage is not None else open_storage(db, create=False)
    cols = _columns(storage)
    table = pa.table({c: cols[c] for c in COLUMNS})
    path = Path(path)
    with _replacing(path) as tmp:
        pq.write_table(table, tmp)
    return path


def export_csv(db: str | Path, path: str | Path, storage=None) -> Path:
    """The Parquet export's rows as CSV, with the context spread over columns ``x0 .. x{d-1}`` and the
    distribution over ``p0 .. p{K-1}``."""
    import pandas as pd

    storage = storage if storage is not None else open_storage(db, create=False)
    cols = _columns(storage)
    ctx, dist = cols.pop("context"), cols.pop("distribution")
    df = pd.DataFrame(cols)
    if ctx:
        df = pd.concat([df, pd.DataFrame(np.array(ctx), columns=[f"x{j}" for j in range(len(ctx[0]))]),
                        pd.DataFrame(np.array(dist), columns=[f"p{k}" for k in range(len(dist[0]))])], axis=1)
    path = Path(path)
    with _replacing(path) as tmp:
        df.to_csv(tmp, index=False)
    return path


def export_vw(db: str | Path, path: str | Path, storage=None) -> Path:
    """The rewarded single-action events as VW ``--cb`` lines ``action:cost:probability | i:v ...``
    (actions 1-based, cost = −reward, only non-zero features), in reward (learning) order."""
    storage = storage if storage is not None else open_storage(db, create=False)
    path = Path(path)
    with _replacing(path) as tmp, open(tmp, "w") as fh:
        for chunk in storage.rewards_after(0):
            for _, reward, ctx, action, prob, *_ in chunk:
                a = decode_action(action)
                if isinstance(a, list):
                    raise ValueError("the VW cb format holds single actions; this log holds sets.")
                x = np.frombuffer(ctx, dtype=np.float64)
                feats = " ".join(f"{i}:{float(x[i])!r}" for i in np.flatnonzero(x))
                fh.write(f"{a + 1}:{-reward!r}:{prob!r} | {feats}\n")
    return path


def export_catalogue_parquet(db: str | Path, path: str | Path, storage=None) -> Path:
    """An action-feature log as Parquet, one row per event in event seq order: ``actions`` (the ids it
    ranked, excluded ones left out), ``slots`` (slot ids; null for one action), ``chosen`` (the id in each
    slot), ``probabilities`` (each slot's), ``distribution`` (the first slot's, over ``actions``),
    ``deferred``, ``activated_at``, and the reward (``reward``: the mean over slots, ``slot_rewards``;
    null when none arrived). The hashed features stay in the log (they are not text)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .catalogue import decode_round

    storage = storage if storage is not None else open_storage(db, create=False)
    names = ("event_seq", "event_id", "ranked_at", "actions", "slots", "chosen", "probabilities", "distribution",
             "model_version", "deferred", "activated_at", "reward_seq", "reward", "slot_rewards", "reward_timestamp",
             "reward_received_at")
    cols: dict[str, list] = {c: [] for c in names}
    for (seq, eid, at, blob, action, _prob, dist, version, deferred, activated, rseq, reward, slots, ts,
         received) in storage.catalogue_log():
        rec = decode_round(bytes(blob))
        ids = rec["ids"]
        chosen = [ids[int(p)] if int(p) >= 0 else None for p in str(action).split(",")]
        row = (seq, eid, at, ids, rec["slots"], chosen, rec["probs"].tolist(),
               np.frombuffer(dist, dtype=np.float64).tolist(), version, bool(deferred), activated, rseq, reward,
               None if rseq is None else ([float(v) for v in slots.split(",")] if slots else [float(reward)]), ts,
               received)
        for c, v in zip(names, row):
            cols[c].append(v)
    path = Path(path)
    with _replacing(path) as tmp:
        pq.write_table(pa.table(cols), tmp)
    return path


def _vw_number(x: float) -> str:
    """A float as VW text, exactly (the shortest repr; "1" for 1.0, "0" for ±0.0)."""
    x = float(x) + 0.0  # −0.0 -> 0.0
    t = repr(x)
    return t.removesuffix(".0")


def _vw_features(rows, r: int) -> str:
    """Row r of hashed rows as VW text segments whose features hash back to the same full hashes: in
    namespace N a feature named by the digits of (h − hash(N)) mod 2^32 hashes to h (VW's hash of an
    all-digit name is its value plus the namespace's hash, :func:`~noisyfeedback.hashing.hash_string`).
    The namespace classes of the log (first letters, "" for the others) keep the interactions: "" is
    written as VW's default namespace."""
    from ..hashing import namespace_hash

    lo, hi = int(rows.indptr[r]), int(rows.indptr[r + 1])
    groups: dict[str, list[str]] = {}
    for h, v, ns in zip(rows.hashes[lo:hi].tolist(), rows.values[lo:hi].tolist(), rows.ns[lo:hi].tolist()):
        name = rows.namespaces[ns] if rows.namespaces else ""
        name = name or " "
        groups.setdefault(name, []).append(f"{(int(h) - namespace_hash(name)) & 0xFFFFFFFF}:{_vw_number(v)}")
    if not groups:
        return "|"
    return " ".join(f"|{'' if n == ' ' else n} {' '.join(f)}" for n, f in groups.items())


def export_catalogue_vw(db: str | Path, path: str | Path, storage=None) -> Path:
    """The rewarded events of an action-feature log as VW text, in event seq order: ``--cb_adf`` examples
    (one slot: ``shared`` line, one line per ranked action, ``0:cost:probability`` on the chosen one) or
    ``--ccb_explore_adf`` examples (several slots: ``ccb slot chosen:cost:probability`` per slot), a blank
    line after each; cost = −reward (VW minimises cost: a click is −1). The features are the hashed ones
    the service learned from, written so that they hash back to the same indices (:func:`_vw_features`):
    ``noisyfeedback train`` on this file learns from exactly the service's rows, and VW reads it too."""
    from .catalogue import decode_round

    storage = storage if storage is not None else open_storage(db, create=False)
    path = Path(path)
    with _replacing(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for (_seq, _eid, _at, blob, action, _prob, _dist, _version, _deferred, _activated, rseq, reward, slots, _ts,
             _received) in storage.catalogue_log():
            if rseq is None:
                continue
            rec = decode_round(bytes(blob))
            ctx, items, probs = rec["context"], rec["items"], rec["probs"]
            chosen = [int(p) for p in str(action).split(",")]
            per_slot = [float(v) for v in slots.split(",")] if slots else [float(reward)]
            ccb = len(chosen) > 1
            shared = _vw_features(ctx, 0)
            lines = [f"{'ccb shared' if ccb else 'shared'} {shared}"] if shared != "|" or ccb else []
            for r in range(items.n_rows):
                label = f"0:{_vw_number(-per_slot[0])}:{_vw_number(probs[0])} " if not ccb and r == chosen[0] else ""
                lines.append(f"{'ccb action ' if ccb else ''}{label}{_vw_features(items, r)}")
            if ccb:
                for s, c in enumerate(chosen):
                    lab = f"{c}:{_vw_number(-per_slot[s])}:{_vw_number(probs[s])} " if c >= 0 else ""
                    lines.append(f"ccb slot {lab}|")
            fh.write("\n".join(lines) + "\n\n")
    return path


def export_log(db: str | Path, out: str | Path, force: bool = False) -> Path:
    """Export to ``out`` in the format of its suffix (``.parquet``, ``.csv``, ``.vw``); an existing file is
    replaced only with ``force`` (the new file is written aside and renamed over it). Every problem is one
    ``ValueError`` naming the path."""
    out = Path(out)
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise ValueError(f"-o {str(out)!r}: the format is chosen by the suffix: {', '.join(FORMATS)}.")
    if out.is_dir():
        raise ValueError(f"-o {str(out)!r} is a folder; give a file name.")
    if out.exists() and not force:
        raise ValueError(f"-o {str(out)!r} exists; add --force to replace it.")
    if not out.parent.is_dir():
        raise ValueError(f"-o {str(out)!r}: the folder {str(out.parent)!r} does not exist.")
    if not os.access(out.parent, os.W_OK):
        raise ValueError(f"-o {str(out)!r}: the folder {str(out.parent)!r} is not writable.")
    storage = open_storage(db, create=False)
    try:
        conf = storage.get_meta("config")
        if conf is not None and json.loads(conf).get("action_features"):
            if fmt == "csv":
                raise ValueError(f"{db} serves action features: export its log as .parquet (the ids ranked and "
                                 "chosen, the probabilities and the rewards) or .vw (VW cb_adf or ccb examples "
                                 "with the hashed features, for 'noisyfeedback train'); CSV holds numeric contexts.")
            writer = export_catalogue_vw if fmt == "vw" else export_catalogue_parquet
            return writer(db, out, storage=storage)
        writer = {"parquet": export_parquet, "csv": export_csv, "vw": export_vw}[fmt]
        try:
            return writer(db, out, storage=storage)
        except PermissionError as exc:
            raise ValueError(f"-o {str(out)!r} cannot be written ({exc.strerror}).") from None
    finally:
        storage.close()
