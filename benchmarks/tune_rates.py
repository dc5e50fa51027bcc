"""When and how fast SquareCB's estimated per-action flip rates start, chosen on tuning streams.

``SquareCB(rho0="estimate", rho1="estimate")`` reads the rates off its own anchors (see the Algorithms page):
a first estimate after ``RATE_WARMUP`` rounds, then one every ``RATE_EVERY``, the right-play tallies decayed by
``RATE_DECAY`` after each (a memory of RATE_EVERY / (1 − RATE_DECAY) rounds), ρ0 shrunk toward 0 by
``RATE_PRIOR`` pseudo-anchors. Each setting of ``GRID`` is a subclass with those class attributes.

Tuning streams, not the reported ones: the MNIST and Fashion-MNIST *test* splits and scikit-learn's digits, rows
scaled to unit norm; seeds 100-107; 300,000 rounds; the channels of ``benchmarks/per_action_mnist.py`` (ρ0 = 0.3 for
labels 0-4 and ρ1 = 0.5 for labels 5-9; uniform flips (0.15, 0.25)). Criterion: the mean over the three streams of
the share of the gap between ``SquareCB()`` with and without the action-dependent flips that the estimating
learner closes, with the uniform flips kept near 1.00x ``SquareCB()``.

    nice -n 10 python benchmarks/tune_rates.py --data-dir DATA --out tuning/rates.csv
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import noisyfeedback as nf  # noqa: E402

#: name -> (RATE_WARMUP, RATE_EVERY, RATE_DECAY, RATE_PRIOR); the first is the former default
GRID = {
    "20k/10k, decay .5, prior 10": (20_000, 10_000, 0.5, 10.0),
    "50k/10k, decay .5, prior 10": (50_000, 10_000, 0.5, 10.0),
    "30k/10k, decay .5, prior 10": (30_000, 10_000, 0.5, 10.0),
    "10k/10k, decay .5, prior 10": (10_000, 10_000, 0.5, 10.0),
    "10k/10k, decay .5, prior 3": (10_000, 10_000, 0.5, 3.0),
    "5k/5k, decay .75, prior 3": (5_000, 5_000, 0.75, 3.0),
    "2.5k/2.5k, decay .875, prior 1": (2_500, 2_500, 0.875, 1.0),
    "2.5k/2.5k, decay .875, prior 3": (2_500, 2_500, 0.875, 3.0),
    "2.5k/2.5k, decay .875, prior 10": (2_500, 2_500, 0.875, 10.0),
    "1k/1k, decay .95, prior 3": (1_000, 1_000, 0.95, 3.0),
}
K = 10
R0 = np.r_[np.full(5, 0.3), np.zeros(5)]
R1 = np.r_[np.zeros(5), np.full(5, 0.5)]
CHANNELS = {"action-dependent": (R0, R1), "uniform (0.15, 0.25)": (0.15, 0.25)}


def streams(data_dir) -> dict:
    return {"mnist-test": nf.datasets.load("mnist", split="test", data_dir=data_dir, normalize=True),
            "fashion-mnist-test": nf.datasets.load("fashion_mnist", split="test", data_dir=data_dir, normalize=True),
            "digits": nf.datasets.load("digits", normalize=True)}


def learner_class(setting: tuple, base=None):
    warmup, every, decay, prior = setting
    base = base or nf.SquareCB
    return type("Tuned" + base.__name__, (base,), {"RATE_WARMUP": warmup, "RATE_EVERY": every, "RATE_DECAY": decay,
                                                   "RATE_PRIOR": prior})


def run(data_dir, rounds: int, seeds, grid: dict, learner: str = "SquareCB") -> pd.DataFrame:
    """One row per (stream, seed, channel, learner): the online error. ``learner``: the class run plain, told
    the rates and estimating them with each setting (SquareCB or EpsilonGreedy, defaults otherwise)."""
    base_cls = getattr(nf, learner)
    rows = []
    for name, (X, y) in streams(data_dir).items():
        for seed in seeds:
            def error(learner, channel) -> float:
                return float(nf.simulate(learner, X, y, nf.feedback.NoisyBandit(*channel), n_rounds=rounds,
                                         seed=seed).error_rate)

            base = {"stream": name, "seed": seed, "rounds": rounds}
            rows.append({**base, "channel": "no flips", "learner": learner,
                         "error": error(base_cls(K, seed=seed), (0.0, 0.0))})
            for channel, rates in CHANNELS.items():
                rows.append({**base, "channel": channel, "learner": learner,
                             "error": error(base_cls(K, seed=seed), rates)})
                if channel == "action-dependent":
                    rows.append({**base, "channel": channel, "learner": "known rates",
                                 "error": error(base_cls(K, rho0=R0, rho1=R1, seed=seed), rates)})
                for setting, params in grid.items():
                    cls = learner_class(params, base_cls)
                    rows.append({**base, "channel": channel, "learner": f"estimated, {setting}",
                                 "error": error(cls(K, rho0="estimate", rho1="estimate", seed=seed), rates)})
            print(name, seed, file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame, learner: str = "SquareCB") -> pd.DataFrame:
    """Per learner: the share of the gap closed on each stream (mean over seeds) and their mean; the worst
    ratio to the plain ``learner`` under the uniform flips."""
    key = ["stream", "seed"]
    plain = df[(df.channel == "action-dependent") & (df.learner == learner)].set_index(key).error
    clean = df[df.channel == "no flips"].set_index(key).error
    uni = df[(df.channel == "uniform (0.15, 0.25)") & (df.learner == learner)].set_index(key).error
    out = []
    for name, g in df[df.learner != learner].groupby("learner", sort=False):
        ad = g[g.channel == "action-dependent"].set_index(key).error
        share = ((plain - ad) / (plain - clean)).groupby("stream").mean()
        row = {"learner": name, **{f"share {s}": share[s] for s in share.index}, "mean share": share.mean()}
        u = g[g.channel == "uniform (0.15, 0.25)"].set_index(key).error
        if len(u):
            row["worst uniform ratio"] = (u / uni).groupby("stream").mean().max()
        out.append(row)
    return pd.DataFrame(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--rounds", type=int, default=300_000)
    ap.add_argument("--seeds", default="100,101,102,103,104,105,106,107")
    ap.add_argument("--only", default=None, help="names of GRID settings, separated by ';'")
    ap.add_argument("--learner", default="SquareCB", choices=("SquareCB", "EpsilonGreedy"))
    ap.add_argument("--out", default="rates.csv")
    args = ap.parse_args(argv)
    grid = {k: v for k, v in GRID.items() if args.only is None or k in args.only.split(";")}
    df = run(args.data_dir, args.rounds, [int(s) for s in args.seeds.split(",")], grid, args.learner)
    df.to_csv(args.out, index=False)
    print(summary(df, args.learner).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
