"""SquareCB's default (adaptive) γ_scale against fixed values on generated streams of other shapes than the tuning
and reported data: 3 and 26 classes (scikit-learn's make_classification, 20 and 30 features) and 5 Gaussian blobs
whose features are 50 times larger (8 features), 20,000 rows each; clean, flips (0.2, 0.4) and (0.4, 0.4);
``SquareCB(K, seed=s)`` with its defaults and with γ_scale 3, 10, 30, 100; online error, mean over the seeds; the
ratio of the default to the best fixed value.

    python benchmarks/index_gamma_generated.py --rounds 300000 --seeds 0,1 --out results/index_gamma_generated.csv
"""

from __future__ import annotations

import argparse
import itertools
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from joblib import Parallel, delayed  # noqa: E402

FIXED = (3.0, 10.0, 30.0, 100.0)
CHANNELS = ((0.0, 0.0), (0.2, 0.4), (0.4, 0.4))
STREAMS = ("classification-3", "classification-26", "blobs-5-scaled")


def stream(name: str):
    from sklearn.datasets import make_blobs, make_classification

    if name == "classification-3":
        X, y = make_classification(20_000, 20, n_informative=10, n_classes=3, n_clusters_per_class=2, class_sep=1.0,
                                   random_state=7)
    elif name == "classification-26":
        X, y = make_classification(20_000, 30, n_informative=20, n_classes=26, n_clusters_per_class=1, class_sep=1.5,
                                   random_state=7)
    else:
        X, y = make_blobs(20_000, n_features=8, centers=5, cluster_std=3.0, random_state=7)
        X = X * 50.0
    return X, y.astype(np.int64)


def run(name: str, channel, gamma, seed: int, rounds: int) -> dict:
    import noisyfeedback as nf

    X, y = stream(name)
    learner = nf.SquareCB(int(y.max()) + 1, seed=seed, **({} if gamma == "adaptive" else {"gamma_scale": gamma}))
    trace = nf.simulate(learner, X, y, nf.feedback.NoisyBandit(*channel), n_rounds=rounds, seed=seed)
    return {"stream": name, "channel": str(channel), "gamma": str(gamma), "seed": seed, "error": trace.error_rate}


def summary(df: pd.DataFrame) -> pd.DataFrame:
    m = df.groupby(["stream", "channel", "gamma"])["error"].mean().unstack("gamma")
    fixed = [c for c in m.columns if c != "adaptive"]
    m["best fixed"] = m[fixed].min(axis=1)
    m["default / best"] = m["adaptive"] / m["best fixed"]
    return m


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=300_000)
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--out", default="index_gamma_generated.csv")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    jobs = itertools.product(STREAMS, CHANNELS, ("adaptive",) + FIXED, seeds)
    rows = Parallel(n_jobs=args.jobs)(delayed(run)(n, c, g, s, args.rounds) for n, c, g, s in jobs)
    df = pd.DataFrame(rows)
    df.to_csv(args.out, index=False)
    with pd.option_context("display.width", 200):
        print(summary(df).round(4).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
