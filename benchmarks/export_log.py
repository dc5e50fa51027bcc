"""`noisyfeedback export-log` on a large service log: peak RSS and time for N events (each rewarded), to
Parquet, CSV and VW cb.

The log is a numeric service's SQLite database (RCNBF, K = 5 actions, 8 features) started by the service
itself, whose events and rewards are then written through its storage in batches (as the writer thread
writes them, without the HTTP round trips). Each export runs in its own process; peak RSS of that
process.

    python benchmarks/export_log.py --events 1000000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

K, D = 5, 8


def make_log(db: Path, n: int, seed: int = 0, batch: int = 20_000) -> Path:
    """A service log of ``n`` rewarded events (bounded memory: a batch at a time)."""
    from noisyfeedback.service import Engine, ServiceConfig
    from noisyfeedback.service.log_rows import EventRow
    from noisyfeedback.service.storage import encode_action

    engine = Engine(ServiceConfig(db=db, learner="RCNBF", n_classes=K, n_features=D, params={"seed": seed},
                                  synchronous="NORMAL"))
    storage = engine.storage
    rng = np.random.default_rng(seed)
    dist = np.full(K, 1.0 / K).tobytes()
    now = time.time()
    for lo in range(0, n, batch):
        m = min(batch, n - lo)
        X = rng.normal(size=(m, D))
        actions = rng.integers(0, K, m)
        clicks = rng.random(m) < 0.3
        ops = []
        for j in range(m):
            seq = lo + j + 1
            ops.append(("event", EventRow(seq, f"e{seq}", now + seq * 1e-3, X[j].tobytes(),
                                          encode_action(int(actions[j])), 1.0 / K, dist, 1, "online", None,
                                          encode_action(int(actions[j])), 0)))
        ops += [("reward", f"e{lo + j + 1}", float(clicks[j]), now) for j in range(m)]
        storage.apply_batch(ops)
    engine.stop()
    storage.close()
    return db


def export(db: Path, out: Path) -> dict:
    from vw_logs import measured  # (a helper process per command: its peak RSS is the command's alone)

    cli = str(Path(sys.executable).with_name("noisyfeedback"))
    r = measured([cli, "export-log", "--db", str(db), "-o", str(out), "--force"])
    return {"format": out.suffix[1:], "wall_s": round(r["wall"], 2), "cpu_s": round(r["cpu"], 2),
            "peak_rss_mb": round(r["rss"]), "out_mb": round(out.stat().st_size / 2**20)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--work", default=None, help="folder for the log and the exports (default: a temporary one)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        db = make_log(Path(tmp) / "svc.db", args.events)
        print(json.dumps({"events": args.events, "log_mb": round(db.stat().st_size / 2**20)}), flush=True)
        for suffix in (".parquet", ".csv", ".vw"):
            print(json.dumps({"events": args.events, **export(db, Path(tmp) / f"log{suffix}")}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
