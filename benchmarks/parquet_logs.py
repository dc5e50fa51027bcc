"""The Parquet path at scale: a logged-bandit Parquet file of N rows (K = 10 actions, 8 numeric features,
uniform logging) read chunk by chunk through ``SquareCB.fit_logged`` and ``nf.ope.evaluate_log``
(IPS, SNIPS and DR with normal intervals; DR's ridge reward model cross-fitted in a second pass).

Each measurement runs in a fresh process (peak RSS from ``getrusage``: the whole process, the imports
included); wall and CPU time of the call alone.

    python benchmarks/parquet_logs.py --rows 1000000 10000000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

K, D = 10, 8
ESTIMATORS = ("ips", "snips", "dr")


def write(path: Path, n: int, seed: int = 0, batch: int = 500_000) -> Path:
    """A log of n rows written batch by batch (bounded memory): action, reward (click), propensity, x0..x7."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(D, K)) / 2
    schema = pa.schema([("action", pa.int64()), ("reward", pa.float64()), ("propensity", pa.float64())]
                       + [(f"x{j}", pa.float64()) for j in range(D)])
    with pq.ParquetWriter(path, schema) as w:
        for lo in range(0, n, batch):
            m = min(batch, n - lo)
            X = rng.normal(size=(m, D))
            a = rng.integers(0, K, m)
            ctr = 1 / (1 + np.exp(-(X @ theta)[np.arange(m), a] + 1.5))
            r = (rng.random(m) < ctr).astype(np.float64)
            cols = [pa.array(a), pa.array(r), pa.array(np.full(m, 1.0 / K))] + [pa.array(X[:, j]) for j in range(D)]
            w.write_table(pa.Table.from_arrays(cols, schema=schema), row_group_size=131072)
    return path


def peak_rss_mb() -> float:
    """This process's peak RSS: Linux's VmHWM, of this program alone (``getrusage``'s ``ru_maxrss`` keeps the
    peak of the process that forked it, here the writer of the log, across ``exec``)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(mode: str, path: str) -> dict:
    import noisyfeedback as nf
    from noisyfeedback.datasets import stream_log

    first = next(iter(stream_log(path)))
    # the policy evaluated: learned from the first chunk as a stream is (a slice of rows a call)
    policy = nf.SquareCB(K, seed=0).fit_logged([first])
    policy.action_probabilities(first.X[:10])  # compiled before timing
    del first
    t0, c0 = time.perf_counter(), time.process_time()
    if mode == "fit":
        learner = nf.SquareCB(K, seed=0).fit_logged(stream_log(path))
        n, extra = int(learner.n_updates_[0]) if hasattr(learner, "n_updates_") else 0, {}
    else:
        res = nf.ope.evaluate_log(policy, path, ESTIMATORS, seed=0)
        n = res["ips"].n
        extra = {e: [round(v.value, 5), round(v.lower, 5), round(v.upper, 5)] for e, v in res.items()}
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rss = peak_rss_mb()
    return {"mode": mode, "rows": n, "wall_s": wall, "cpu_s": cpu, "rows_per_s": n / wall,
            "peak_rss_mb": rss, **extra}


def measure(sizes=(1_000_000, 10_000_000), workdir: str | None = None) -> list[dict]:
    out = []
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        for n in sizes:
            path = write(Path(tmp) / f"log-{n}.parquet", n)
            for mode in ("fit", "eval"):
                res = subprocess.run([sys.executable, __file__, "--child", mode, str(path)], capture_output=True,
                                     text=True, check=True)
                row = json.loads(res.stdout.strip().splitlines()[-1])
                row["n"] = n
                out.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
            path.unlink()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    for row in measure(args.rows):
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
