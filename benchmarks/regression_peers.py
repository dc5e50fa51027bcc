"""Noisy regression targets (issue #16): WeightedRLS vs tuned ORS, NLMS, padasip RLS/NLMS, river LinearRegression.

The paper's synthetic task (d = 20, v_t ~ U[0, M]) and channel equalization, 10,000 rounds,
mean squared error against the clean target along the stream (the paper's measure). ORS and
NLMS: r over the paper's grid 10^-1..10^4 (and β for "beta") chosen on TUNE_SEED, reported on
TEST_SEEDS. Peers see the noisy label one round at a time (predict, then learn).

    python benchmarks/regression_peers.py
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

import noisyfeedback as nf  # noqa: E402
from noisyfeedback.datasets.regression import channel_equalization, ors_synthetic  # noqa: E402

N = 10_000
TUNE_SEED = 100
TEST_SEEDS = (0, 1, 2)
R_GRID = [10.0 ** e for e in np.arange(-1, 4.01, 0.5)]


def task(data: str, M: float, seed: int):
    gen = ors_synthetic if data == "synthetic" else channel_equalization
    X, y = gen(n_samples=N, seed=seed)
    return X, y, nf.feedback.GaussianNoise.uniform(M, n_rounds=N, seed=seed + 7)


def ours(make, data, M, seed) -> float:
    X, y, ch = task(data, M, seed)
    return nf.simulate(make(), X, y, ch, n_rounds=N, seed=seed, shuffle=False).mse


def peer_stream(model, data, M, seed) -> float:
    """Prequential MSE of a peer on the same rows (in order) and the same noisy labels."""
    X, y, ch = task(data, M, seed)
    yn = ch.respond(y, rng=np.random.default_rng([seed, 99]))
    se = 0.0
    for t in range(N):
        yhat = model.predict1(X[t])
        se += (yhat - y[t]) ** 2
        model.learn1(X[t], yn[t])
    return se / N


class Padasip:
    def __init__(self, kind, d):
        import padasip as pa

        self.f = pa.filters.FilterRLS(d, mu=0.999, w="zeros") if kind == "rls" else \
            pa.filters.FilterNLMS(d, mu=0.5, w="zeros")

    def predict1(self, x):
        return float(self.f.predict(x))

    def learn1(self, x, y):
        self.f.adapt(y, x)


class River:
    def __init__(self, d):
        from river import linear_model

        self.m = linear_model.LinearRegression(intercept_lr=0.0)
        self.keys = list(range(d))

    def predict1(self, x):
        return float(self.m.predict_one(dict(zip(self.keys, x))))

    def learn1(self, x, y):
        self.m.learn_one(dict(zip(self.keys, x)), y)


def tuned(factory_grid, data, M):
    scores = [(ours(f, data, M, TUNE_SEED), i) for i, f in enumerate(factory_grid)]
    return factory_grid[min(scores)[1]]


def main() -> int:
    import pandas as pd

    rows = []
    settings = [("synthetic", M) for M in (0.5, 1.0, 3.0, 5.0)] + [("channel", M) for M in (0.5, 1.0, 5.0)]
    for data, M in settings:
        ors_known = tuned([lambda r=r, b=b: nf.ORS(r=r, scaling="beta", beta=b) for r in R_GRID
                           for b in (0.1, 1.0, 10.0)], data, M)
        ors_unknown = tuned([lambda r=r, s=s: nf.ORS(r=r, scaling=s, variance="unknown") for r in R_GRID
                             for s in ("one_sample_pred", "two_samples")], data, M)
        nlms = tuned([lambda r=r: nf.NLMS(r=r) for r in R_GRID], data, M)
        learners = {
            "WeightedRLS known": lambda: nf.WeightedRLS(lam=1.0),
            "WeightedRLS unknown (1 label)": lambda: nf.WeightedRLS(lam=1.0, variance="unknown"),
            "WeightedRLS unknown (2 labels)": lambda: nf.WeightedRLS(lam=1.0, variance="unknown", n_labels=2),
            "RLS (unweighted)": lambda: nf.WeightedRLS(lam=1.0, variance="none"),
            "ORS tuned, known": ors_known, "ORS tuned, unknown": ors_unknown, "NLMS tuned": nlms,
        }
        for s in TEST_SEEDS:
            for name, f in learners.items():
                rows.append({"data": data, "M": M, "seed": s, "learner": name, "mse": ours(f, data, M, s)})
            d = 20
            for name, mk in (("padasip RLS", lambda: Padasip("rls", d)), ("padasip NLMS", lambda: Padasip("nlms", d)),
                             ("river LinearRegression", lambda: River(d))):
                try:
                    rows.append({"data": data, "M": M, "seed": s, "learner": name, "mse": peer_stream(mk(), data, M, s)})
                except ImportError:
                    pass
        print(data, M, "done", file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    t = df.pivot_table(index=["data", "M"], columns="learner", values="mse", aggfunc="mean")
    pd.set_option("display.width", 300)
    print(t.to_string(float_format=lambda v: f"{v:.4f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
