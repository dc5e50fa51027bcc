"""The sweep that chose ``oracle="auto"``'s dimension threshold (SquareCB, EpsilonGreedy; m = 1).

The ridge oracle (recursive least squares per label) costs O(d²) a round and O(K·d²) memory, AdaGrad
O(nnz). The sweep runs SquareCB with defaults and each oracle on tuning data only — synthetic linear
streams of several dimensions d (Gaussian rows, a random linear teacher, 10 % of labels redrawn),
UCI digits (d = 64), SynSep seed 100 (d = 400) and the MNIST test split (d = 784, when ``--data-dir``
has it) — under NoisyBandit(0.1, 0.2), and records the online error and rounds/s.

Rule (fixed before the run): ``auto`` takes the ridge oracle at dimension d when, at every tuning
set of dimension <= d, the ridge oracle errs less than AdaGrad and runs at least 1/20 of AdaGrad's
rounds/s; the threshold is the largest such grid dimension.

    nice -n 10 python benchmarks/auto_oracle_sweep.py --data-dir DATA --out auto_oracle.csv
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

import noisyfeedback as nf  # noqa: E402

DIMS = (8, 16, 32, 64, 96, 128, 192, 256)


def linear_stream(d: int, K: int = 10, n: int = 20_000, seed: int = 100):
    rng = np.random.default_rng([seed, d])
    W = rng.normal(size=(K, d))
    X = rng.normal(size=(n, d))
    y = np.argmax(X @ W.T, axis=1)
    redraw = rng.random(n) < 0.1
    y[redraw] = rng.integers(0, K, redraw.sum())
    return X, y


def datasets(data_dir):
    out = {f"linear-d{d}": linear_stream(d) for d in DIMS}
    out["digits"] = nf.datasets.load("digits")
    out["synsep-100"] = nf.datasets.synsep(n_samples=10_000, seed=100)
    if data_dir:
        try:
            out["mnist-test"] = nf.datasets.load("mnist", split="test", data_dir=data_dir)
        except Exception as exc:  # noqa: BLE001
            print(f"mnist not loaded: {exc}", file=sys.stderr)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--rounds", type=int, default=100_000)
    ap.add_argument("--out", default="auto_oracle.csv")
    args = ap.parse_args(argv)
    rows = []
    ch = nf.feedback.NoisyBandit(0.1, 0.2)
    warm = linear_stream(4, n=200)
    Xs, ys = nf.datasets.synsep(n_samples=500, seed=1)  # sparse rows: simulate reads them as coded rows
    for oracle in ("adagrad", "ridge"):  # compile every row form first: timings without the JIT
        nf.simulate(nf.SquareCB(10, oracle=oracle, seed=0), *warm, ch, n_rounds=100, seed=0)
        nf.simulate(nf.SquareCB(9, oracle=oracle, seed=0), Xs, ys, ch, n_rounds=100, seed=0)
    for name, (X, y) in datasets(args.data_dir).items():
        K, d = int(y.max()) + 1, X.shape[1]
        for oracle in ("adagrad", "ridge"):
            rounds = args.rounds if (oracle == "adagrad" or d <= 400) else args.rounds // 10
            learner = nf.SquareCB(K, oracle=oracle, seed=100)
            t0 = time.perf_counter()
            tr = nf.simulate(learner, X, y, ch, n_rounds=rounds, seed=100)
            wall = time.perf_counter() - t0
            row = {"data": name, "d": d, "K": K, "oracle": oracle, "rounds": rounds,
                   "error": round(tr.error_rate, 4), "rounds_per_s": round(rounds / wall)}
            rows.append(row)
            print(row, flush=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    # the rule
    by = {}
    for r in rows:
        by.setdefault((r["data"], r["d"]), {})[r["oracle"]] = r
    ok = {}
    for (name, d), v in by.items():
        a, r = v["adagrad"], v["ridge"]
        ok[(name, d)] = r["error"] < a["error"] and r["rounds_per_s"] * 20 >= a["rounds_per_s"]
    threshold = 0
    for d in sorted({d for _, d in ok}):
        if all(good for (_, dd), good in ok.items() if dd <= d):
            threshold = d
        else:
            break
    print(f"threshold (largest d with ridge better and >= 1/20 of AdaGrad's speed at every d' <= d): {threshold}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
