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


#: the Parquet export's columns and types (fixed, so that every chunk of the file agrees)
def _schema():
    import pyarrow as pa

    lst = pa.list_(pa.float64())
    types = {"event_seq": pa.int64(), "event_id": pa.string(), "ranked_at": pa.float64(), "context": lst,
             "action": pa.string(), "probability": pa.float64(), "distribution": lst, "n_draws": pa.int64(),
             "mode": pa.string(), "default_action": pa.string(), "greedy": pa.string(), "model_version": pa.int64(),
             "reward_seq": pa.int64(), "reward": pa.float64(), "reward_timestamp": pa.float64(),
             "reward_received_at": pa.float64()}
    return pa.schema([(c, types[c]) for c in COLUMNS])


#: events a chunk of the export (the file is written a chunk at a time: memory stays bounded; the size
#: chosen by peak RSS at the same speed: benchmarks/results/export_log.md)
EXPORT_CHUNK_ROWS = 16384


def parse_bound(value: str | int | float | None, name: str) -> tuple[str, float] | None:
    """``--since``/``--until``: an integer is an event sequence number (``event_seq``), anything else an
    ISO 8601 time (``2026-11-28T03:00``, UTC when no zone is given) compared with ``ranked_at``.
    Returns ("seq", n), ("time", unix seconds) or None."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return "seq", float(value)
    text = str(value).strip()
    if text.lstrip("-").isdigit():
        return "seq", float(int(text))
    import datetime as dt

    try:
        t = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"--{name} {text!r} is neither an event sequence number nor an ISO 8601 time "
                         "(e.g. 2026-11-28T03:00:00Z).") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    return "time", t.timestamp()


def _log_rows(storage, since=None, until=None):
    """The export's rows in event order, those with ``since <= event <= until`` (``parse_bound`` pairs; a
    sequence bound ends the scan once passed)."""
    lo = parse_bound(since, "since") if not isinstance(since, tuple) else since
    hi = parse_bound(until, "until") if not isinstance(until, tuple) else until
    for row in storage.log():
        seq, ranked_at = row[0], row[2]
        if lo is not None and (seq if lo[0] == "seq" else ranked_at) < lo[1]:
            continue
        if hi is not None and (seq if hi[0] == "seq" else ranked_at) > hi[1]:
            if hi[0] == "seq":
                return
            continue
        yield row


def _chunks(rows, size: int):
    chunk = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _arrow_chunk(rows: list[tuple], schema):
    """One chunk of rows as an Arrow table: the context and distribution blobs (float64 bytes) joined
    into list columns without Python floats."""
    import pyarrow as pa

    cols = list(zip(*rows))
    arrays = []
    for j, c in enumerate(COLUMNS):
        if c in ("context", "distribution"):
            blobs = cols[j]
            lengths = np.fromiter((len(b) // 8 for b in blobs), dtype=np.int32, count=len(blobs))
            offsets = np.zeros(len(blobs) + 1, dtype=np.int32)
            np.cumsum(lengths, out=offsets[1:])
            values = np.frombuffer(b"".join(blobs), dtype=np.float64)
            arrays.append(pa.ListArray.from_arrays(pa.array(offsets), pa.array(values)))
        else:
            arrays.append(pa.array(cols[j], type=schema.field(c).type))
    return pa.Table.from_arrays(arrays, schema=schema)


def export_parquet(db: str | Path, path: str | Path, storage=None, since=None, until=None,
                   chunk_rows: int = EXPORT_CHUNK_ROWS) -> Path:
    """Every logged event (in event seq order) with its reward (null when none arrived) as a Parquet file,
    written ``chunk_rows`` events at a time (``pyarrow.parquet.ParquetWriter``: memory bounded by a chunk).
    ``since``/``until``: the first and last event kept (`parse_bound`: a sequence number or a time).

    ``context`` and ``distribution`` are lists of float64; ``action``, ``default_action`` and ``greedy``
    are the labels as text ("3", or "1,4,7" for sets)."""
    import pyarrow.parquet as pq

    storage = storage if storage is not None else open_storage(db, create=False)
    schema = _schema()
    path = Path(path)
    with _replacing(path) as tmp:
        with pq.ParquetWriter(tmp, schema) as writer:
            for rows in _chunks(_log_rows(storage, since, until), chunk_rows):
                writer.write_table(_arrow_chunk(rows, schema))
    return path


def export_csv(db: str | Path, path: str | Path, storage=None, since=None, until=None,
               chunk_rows: int = EXPORT_CHUNK_ROWS) -> Path:
    """The Parquet export's rows as CSV, with the context spread over columns ``x0 .. x{d-1}`` and the
    distribution over ``p0 .. p{K-1}``; written a chunk of events at a time."""
    import pandas as pd

    storage = storage if storage is not None else open_storage(db, create=False)
    path = Path(path)
    plain = [c for c in COLUMNS if c not in ("context", "distribution")]
    with _replacing(path) as tmp, open(tmp, "w", newline="") as fh:
        first = True
        for rows in _chunks(_log_rows(storage, since, until), chunk_rows):
            cols = dict(zip(COLUMNS, zip(*rows)))
            df = pd.DataFrame({c: list(cols[c]) for c in plain})
            ctx = np.array([np.frombuffer(b, dtype=np.float64) for b in cols["context"]])
            dist = np.array([np.frombuffer(b, dtype=np.float64) for b in cols["distribution"]])
            df = pd.concat([df, pd.DataFrame(ctx, columns=[f"x{j}" for j in range(ctx.shape[1])]),
                            pd.DataFrame(dist, columns=[f"p{k}" for k in range(dist.shape[1])])], axis=1)
            df.to_csv(fh, index=False, header=first)
            first = False
        if first:
            pd.DataFrame({c: [] for c in COLUMNS}).to_csv(fh, index=False)
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
    ``deferred``, ``activated_at``, and the reward (``reward``: the mean over the request's slots,
    ``slot_rewards``, one a slot of the learner's, clicks or graded rewards in [-1, 1]; null when none arrived). The
    hashed features stay in the log (they are not text)."""
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
    all-digit name is its value plus the namespace's hash, `hash_string`).
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
    the service learned from, written so that they hash back to the same indices (`_vw_features`):
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


def export_log(db: str | Path, out: str | Path, force: bool = False, since=None, until=None) -> Path:
    """Export to ``out`` in the format of its suffix (``.parquet``, ``.csv``, ``.vw``); an existing file is
    replaced only with ``force`` (the new file is written aside and renamed over it). Every problem is one
    ``ValueError`` naming the path. ``since``/``until`` (Parquet and CSV of numeric contexts): the first
    and last event exported, an event sequence number or an ISO 8601 time (`parse_bound`)."""
    out = Path(out)
    bounds = (parse_bound(since, "since"), parse_bound(until, "until"))
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
            if bounds != (None, None):
                raise ValueError("--since/--until select the events of a numeric-context log (.parquet or .csv); "
                                 f"{db} serves action features.")
            writer = export_catalogue_vw if fmt == "vw" else export_catalogue_parquet
            return writer(db, out, storage=storage)
        if fmt == "vw" and bounds != (None, None):
            raise ValueError(f"-o {str(out)!r}: --since/--until select events for the .parquet and .csv exports "
                             "(the VW export is in reward order).")
        try:
            if fmt == "vw":
                return export_vw(db, out, storage=storage)
            writer = {"parquet": export_parquet, "csv": export_csv}[fmt]
            return writer(db, out, storage=storage, since=bounds[0], until=bounds[1])
        except PermissionError as exc:
            raise ValueError(f"-o {str(out)!r} cannot be written ({exc.strerror}).") from None
    finally:
        storage.close()
