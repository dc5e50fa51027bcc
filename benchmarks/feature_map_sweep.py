"""The sweep that checked ``features="auto"`` (the degree-2 map for few features; SquareCB, m = 1).

With ``oracle="auto"`` the ridge oracle fits each label's feedback by least squares on the unit-norm row;
on data whose classes are not linearly separable (Letter: 16 features, 26 classes) that model is the
limit, whatever the exploration. The degree-2 map φ(x) = (x̂, x̂_j·x̂_k) (``kernels/features.py``) makes the
same oracle quadratic in x̂. Its d + d(d+1)/2 columns cost the ridge oracle O(d⁴) a round, so ``auto``
takes it only while that dimension is within AUTO_RIDGE_MAX_FEATURES (d <= 21: the cost ``auto`` already
accepts for the ridge oracle on raw features).

Tuning data only (never the reported runs): the MNIST and Fashion-MNIST *test* splits projected on their
first k principal components (PCA fitted on those rows, random_state 100), and synthetic streams
(scikit-learn ``make_classification``: k informative features, 10 classes (8 at k = 4) of 2 clusters each,
random_state 100, 20,000 rows), k in DIMS. SquareCB with defaults and ``features="linear"`` or
``"quadratic"`` under NoisyBandit(0.1, 0.2), simulation seed 100, 100,000 rounds; online error and
rounds per CPU second. Then, at k = 16 and with the map, the ridge penalty λ and the exploration scale
γ_scale around their defaults, at (0, 0) and (0.2, 0.4).

Rule (fixed before the run): the map is the default at dimension k when it errs less than the raw
features at every tuning set of that k and its dimension is <= AUTO_RIDGE_MAX_FEATURES; λ and γ_scale
keep their defaults unless another value has a lower mean error over the tuning sets and settings.

    nice -n 10 python benchmarks/feature_map_sweep.py --data-dir DATA --out feature_map.csv
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

DIMS = (4, 8, 12, 16, 21, 24)
SEED = 100


def datasets(data_dir, dims=DIMS):
    from sklearn.datasets import make_classification
    from sklearn.decomposition import PCA

    out = {}
    for k in dims:
        X, y = make_classification(n_samples=20_000, n_features=k, n_informative=k, n_redundant=0,
                                   n_classes=min(10, 2 ** k // 2),
                                   n_clusters_per_class=2, random_state=SEED)
        out[f"synthetic-k{k}"] = (X, y)
    if data_dir:
        for name in ("mnist", "fashion_mnist"):
            try:
                X, y = nf.datasets.load(name, split="test", data_dir=data_dir)
            except Exception as exc:  # noqa: BLE001
                print(f"{name} not loaded: {exc}", file=sys.stderr)
                continue
            Z = PCA(max(dims), random_state=SEED).fit_transform(np.asarray(X, dtype=np.float64))
            for k in dims:
                out[f"{name}-test-pca{k}"] = (np.ascontiguousarray(Z[:, :k]), y)
    return out


def run(X, y, setting, rounds, **params):
    K = int(y.max()) + 1
    learner = nf.SquareCB(K, seed=SEED, **params)
    cpu = time.process_time()
    tr = nf.simulate(learner, X, y, nf.feedback.NoisyBandit(*setting), n_rounds=rounds, seed=SEED)
    cpu = time.process_time() - cpu
    return {"error": tr.error_rate, "cpu_rate": rounds / cpu if cpu > 0 else float("nan"),
            "features_": learner.features_, "oracle_": learner.oracle_, "D": learner.W_.shape[1]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--rounds", type=int, default=100_000)
    ap.add_argument("--out", default="feature_map.csv")
    args = ap.parse_args(argv)
    sets = datasets(args.data_dir)
    rows = []
    for name, (X, y) in sets.items():  # the map against the raw features, every dimension
        for features in ("linear", "quadratic"):
            r = run(X, y, (0.1, 0.2), args.rounds, features=features)
            rows.append({"set": name, "k": X.shape[1], "setting": "(0.1, 0.2)", "features": features, "lam": 1.0,
                         "gamma_scale": 10.0, **r})
            print(rows[-1], file=sys.stderr, flush=True)
    for name, (X, y) in sets.items():  # λ and γ_scale with the map, k = 16
        if X.shape[1] != 16:
            continue
        for setting in ((0.0, 0.0), (0.2, 0.4)):
            for lam, gs in ((0.1, 10.0), (0.3, 10.0), (1.0, 10.0), (3.0, 10.0), (1.0, 3.0), (1.0, 30.0)):
                r = run(X, y, setting, args.rounds, features="quadratic", lam=lam, gamma_scale=gs)
                rows.append({"set": name, "k": 16, "setting": f"({setting[0]:g}, {setting[1]:g})",
                             "features": "quadratic", "lam": lam, "gamma_scale": gs, **r})
                print(rows[-1], file=sys.stderr, flush=True)
    with open(args.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
