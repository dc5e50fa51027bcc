"""The sweep that chose the constant of SquareCB's adaptive γ_scale (``gamma_scale="adaptive"``, the default; see
benchmarks/RESULTS.md, "How the defaults of SquareCB and EpsilonGreedy were chosen").

Tuning data only (as `tune_oracle.py`): the MNIST and Fashion-MNIST *test* splits, scikit-learn's digits and SynSep
(seed 100), the five noise settings of Agarwal & Manwani, simulation seeds 100 and up, with ``oracle="auto"`` and
``features="auto"`` (the defaults). Every run is 1e6 rounds, and its online error is read at three horizons
(50,000, 200,000 and 1e6 rounds: the first rounds of a longer run are the shorter run, bit for bit). Next to the
adaptive γ_scale with each constant c of ``--constants`` run the fixed values of ``--fixed``, so that each stream
has its best fixed γ_scale in hindsight; the criterion is the ratio of a setting's error to that best, its worst
and its mean over the streams and horizons.

    python benchmarks/tune_gamma.py --data-dir DATA --out benchmarks/tuning/adaptive_gamma.csv -j 2
    python benchmarks/tune_gamma.py --summary benchmarks/tuning/adaptive_gamma.csv [more files ...]

(c is the first entry of ``learners.bandit.squarecb.ADAPTIVE_GAMMA``; the sweep sets it for each run.)
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from joblib import Parallel, delayed  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tune_oracle import SETTINGS, datasets  # noqa: E402

HORIZONS = (50_000, 200_000, 1_000_000)
FIXED = (10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0)
CONSTANTS = (0.5, 1.0, 1.5, 2.0, 3.0, 5.0)
COLUMNS = ["dataset", "rho0", "rho1", "seed", "gamma", "horizon", "error", "gamma_in_use", "sigma", "seconds"]


def run(data_dir, dname, r0, r1, seed, gamma, rounds):
    """One simulation; gamma is a fixed γ_scale (float) or ("adaptive", c)."""
    import noisyfeedback as nf
    from noisyfeedback.learners.bandit import squarecb

    if not _CACHE:
        _CACHE.update(datasets(data_dir))
    X, y = _CACHE[dname]
    K = int(y.max()) + 1
    if isinstance(gamma, tuple):
        squarecb.ADAPTIVE_GAMMA = (gamma[1],) + tuple(squarecb.ADAPTIVE_GAMMA[1:])
        learner = nf.SquareCB(K, seed=seed)
        label = f"adaptive c={gamma[1]:g}"
    else:
        learner = nf.SquareCB(K, gamma_scale=gamma, seed=seed)
        label = f"{gamma:g}"
    hs = [h for h in HORIZONS if h <= rounds]
    t0 = time.perf_counter()
    tr = nf.simulate(learner, X, y, nf.feedback.NoisyBandit(r0, r1), n_rounds=rounds, seed=seed, checkpoints=hs)
    sec = time.perf_counter() - t0
    sigma = float(np.sqrt(learner.noise_[0] / learner.noise_[1]))
    return [[dname, r0, r1, seed, label, h, float(e), learner.gamma_scale_in_use(), sigma, sec]
            for h, e in zip(hs, tr.curve)]


_CACHE: dict = {}


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per adaptive constant: the ratio of its mean error (over seeds) to the best fixed γ_scale's, worst and mean
    over the streams (data set × setting × horizon). Only the γ settings run on every seed count."""
    seeds = df.groupby("gamma")["seed"].nunique()
    df = df[df["gamma"].isin(seeds.index[seeds == seeds.max()])]
    mean = df.groupby(["dataset", "rho0", "rho1", "horizon", "gamma"])["error"].mean().unstack("gamma")
    fixed = [c for c in mean.columns if not c.startswith("adaptive")]
    best = mean[fixed].min(axis=1)
    ratio = mean.div(best, axis=0)
    last = ratio.index.get_level_values("horizon").max()
    out = pd.DataFrame({"worst": ratio.max(), "mean": ratio.mean(),
                        f"worst at {last:,}": ratio.xs(last, level="horizon").max(),
                        "over 1.25": (ratio > 1.25).sum()})
    return out.sort_values("worst")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--seeds", default="100,101")
    ap.add_argument("--only", default=None, help="comma-separated dataset names")
    ap.add_argument("--fixed", default=",".join(f"{g:g}" for g in FIXED))
    ap.add_argument("--constants", default=",".join(f"{c:g}" for c in CONSTANTS))
    ap.add_argument("--out", default="adaptive_gamma.csv")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--summary", nargs="+", default=None, help="print the summary of results files and stop")
    args = ap.parse_args(argv)
    if args.summary:
        with pd.option_context("display.width", 200):
            print(summary(pd.concat([pd.read_csv(f) for f in args.summary])).round(3).to_string())
        return 0
    names = list(datasets(args.data_dir))
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    gammas = [float(g) for g in args.fixed.split(",") if g] + \
             [("adaptive", float(c)) for c in args.constants.split(",") if c]
    seeds = [int(s) for s in args.seeds.split(",")]
    jobs = [(d, r0, r1, s, g) for d, (r0, r1), s, g in itertools.product(names, SETTINGS, seeds, gammas)]
    rows = Parallel(n_jobs=args.jobs, verbose=5)(
        delayed(run)(args.data_dir, d, r0, r1, s, g, args.rounds) for d, r0, r1, s, g in jobs)
    df = pd.DataFrame([r for rs in rows for r in rs], columns=COLUMNS)
    df.to_csv(args.out, index=False)
    with pd.option_context("display.width", 200):
        print(summary(df).round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
