"""The sweep that chose the defaults of CatalogueSquareCB (oracle, γ_scale, learning rate), on tuning data only.

Tuning data (never the reported seeds 0–2 of ``catalogue_peers.py``):

- ``churn``: the churn stream of seed 100 (the stream VW's grid is searched on), 200,000 rounds, flips (0, 0)
  and (0.2, 0.3), simulation seeds 100, 101, 102 (the learner's exploration and the clicks);
- ``letter``: Letter converted with the tuning seeds 100, 101, 102 (order and candidate lists; seed 100 is
  VW's tuning stream), flips (0.2, 0.4), one pass (16,000 rounds);
- ``digits``: scikit-learn's digits converted with seeds 100, 101, 102, flips (0.2, 0.4), 20,000 rounds
  (the 1,797 rows cycled);
- ``mnist-test``: MNIST's *test* split (10,000 rows; the reported runs use the training split) converted with
  seeds 100, 101, 102, flips (0.2, 0.4), one pass: the only tuning set with more weights than ``oracle="auto"``
  gives the ridge oracle (784 × 10 one-hot: D = 8,635), where the AdaGrad oracle runs.

Each row: the setting, the configuration, the mean over the three seeds of the mean clean regret of the
played candidate (churn) or of the played error (letter, digits: regret 1 exactly when a list holding the
label is missed), the per-seed values and the CPU seconds.

    nice -n 10 python benchmarks/tune_catalogue.py --data-dir DATA --out benchmarks/results/tune_catalogue.csv
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

SEEDS = (100, 101, 102)
GAMMAS = (10.0, 30.0, 100.0, 300.0, 1000.0)
CONFIGS = ([{"oracle": "adagrad", "gamma_scale": g, "learning_rate": lr} for g in GAMMAS for lr in (0.02, 0.05, 0.2)]
           + [{"oracle": "ridge", "gamma_scale": g, "lam": lam} for g in GAMMAS for lam in (1.0,)])
#: ``--greedy-first``: the ridge oracle's greedy first (``gamma_scale="adaptive"``, high 3,000) against fixed
#: γ_scale up to 10,000 (both high values tried, 3,000 and 10,000, and the families' best region), with the
#: context as given (``context_norm="none"``, the ridge oracle's "auto") and at unit norm
GREEDY_FIRST = ([{"oracle": "ridge", "gamma_scale": "adaptive", "context_norm": cn} for cn in ("none", "unit")]
                + [{"oracle": "ridge", "gamma_scale": g, "context_norm": cn} for cn in ("none", "unit")
                   for g in GAMMAS + (3000.0, 10000.0)])


def settings(data_dir):
    """(name, [(stream, n_rounds, flips, seed)]) of the tuning settings."""
    out = []
    churn = nf.datasets.ranking_stream(n_rounds=200_000, seed=100, examination=None)
    for flips in ((0.0, 0.0), (0.2, 0.3)):
        out.append((f"churn {flips}", [(churn, 200_000, flips, s) for s in SEEDS]))
    for name in ("letter", "digits", "mnist-test"):
        if name == "digits":
            X, y = nf.datasets.load("digits")
        elif not data_dir:
            continue
        elif name == "letter":
            X, y = nf.datasets.load("letter", split="train", data_dir=data_dir)
        else:
            X, y = nf.datasets.load("mnist", split="test", data_dir=data_dir)
        K = int(y.max()) + 1
        runs = []
        for s in SEEDS:
            perm = np.random.default_rng(s).permutation(X.shape[0])
            st = nf.datasets.multiclass_candidates(X[perm], y[perm], n_classes=K, k_min=min(5, K), p_label=0.9,
                                                   seed=s)
            runs.append((st, 20_000 if name == "digits" else X.shape[0], (0.2, 0.4), s))
        out.append((name, runs))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--out", default="tune_catalogue.csv")
    ap.add_argument("--only", action="append", help="settings whose name starts with this (churn, letter, digits, "
                                                     "mnist-test)")
    ap.add_argument("--oracle", action="append", help="only these oracles of the grid (adagrad, ridge)")
    ap.add_argument("--greedy-first", action="store_true", help="greedy first against fixed γ_scale (ridge)")
    args = ap.parse_args(argv)
    configs = GREEDY_FIRST if args.greedy_first else CONFIGS
    with open(args.out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["setting", "oracle", "gamma_scale", "learning_rate", "lam", "context_norm", "mean", "per_seed",
                    "cpu_s"])
        for name, runs in settings(args.data_dir):
            if args.only and not any(name.startswith(o) for o in args.only):
                continue
            for cfg in configs:
                if args.oracle and cfg["oracle"] not in args.oracle:
                    continue
                t0 = time.process_time()
                vals = []
                for st, n, flips, s in runs:
                    tr = nf.simulate(nf.CatalogueSquareCB(seed=s, **cfg), st, None, nf.feedback.NoisyBandit(*flips),
                                     n_rounds=n, seed=s)
                    vals.append(tr.metrics["regret_rate"])
                row = [name, cfg["oracle"], cfg["gamma_scale"], cfg.get("learning_rate", ""), cfg.get("lam", ""),
                       cfg.get("context_norm", "auto"), f"{np.mean(vals):.5f}", " ".join(f"{v:.5f}" for v in vals),
                       f"{time.process_time() - t0:.1f}"]
                w.writerow(row)
                fh.flush()
                print(*row, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
