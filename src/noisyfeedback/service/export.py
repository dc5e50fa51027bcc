"""Export the service's log for offline work: Parquet (one row per event) and Vowpal Wabbit's cb format."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .storage import decode_action
from .stores import open_storage

__all__ = ["export_parquet", "export_vw"]

COLUMNS = ("event_seq", "event_id", "ranked_at", "context", "action", "probability", "distribution", "n_draws",
           "mode", "default_action", "greedy", "model_version", "reward_seq", "reward", "reward_timestamp",
           "reward_received_at")


def export_parquet(db: str | Path, path: str | Path, storage=None) -> Path:
    """Every logged event (in event seq order) with its reward (null when none arrived) as a Parquet file.

    ``context`` and ``distribution`` are lists of float64; ``action``, ``default_action`` and ``greedy``
    are the labels as text ("3", or "1,4,7" for sets)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    storage = storage if storage is not None else open_storage(db)
    cols: dict[str, list] = {c: [] for c in COLUMNS}
    for row in storage.log():
        for c, v in zip(COLUMNS, row):
            if c in ("context", "distribution"):
                v = np.frombuffer(v, dtype=np.float64).tolist()
            cols[c].append(v)
    table = pa.table({c: cols[c] for c in COLUMNS})
    path = Path(path)
    pq.write_table(table, path)
    return path


def export_vw(db: str | Path, path: str | Path, storage=None) -> Path:
    """The rewarded single-action events as VW ``--cb`` lines ``action:cost:probability | i:v ...``
    (actions 1-based, cost = −reward, only non-zero features), in reward (learning) order."""
    storage = storage if storage is not None else open_storage(db)
    path = Path(path)
    with open(path, "w") as fh:
        for chunk in storage.rewards_after(0):
            for _, reward, ctx, action, prob in chunk:
                a = decode_action(action)
                if isinstance(a, list):
                    raise ValueError("the VW cb format holds single actions; this log holds sets.")
                x = np.frombuffer(ctx, dtype=np.float64)
                feats = " ".join(f"{i}:{float(x[i])!r}" for i in np.flatnonzero(x))
                fh.write(f"{a + 1}:{-reward!r}:{prob!r} | {feats}\n")
    return path
