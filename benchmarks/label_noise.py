"""Label noise with a known confusion matrix: CorrectedLogisticRegression vs UMA, plain logistic
regression on the noisy labels and cleanlab's CleanLearning(LogisticRegression()).

Settings: digits (1,200 training rows, the rest test), UCI Letter (16,000 / 4,000, from
``--data-dir``) and the UMA toy (K = 10, d = 10, margin 0.05, 4,000 / 4,000); symmetric
(C[q, q] = 1 − ρ, the rest ρ/(K − 1)) and pair-flip (C[q, q] = 1 − ρ, C[q+1 mod K, q] = ρ)
noise at ρ = 0.2, 0.4, 0.6. Features standardised on the training rows (the same for all).
Seeds: ``TEST_SEEDS`` for the reported numbers; ``TUNE_SEEDS`` (disjoint) for choosing defaults.

    python benchmarks/label_noise.py --data-dir DATA [--tune] [--datasets digits,toy]
        [--kinds symmetric,pair] [--rhos 0.2,0.4,0.6] [--out runs.csv]

benchmarks/label_noise_report.py merges the CSVs into the label-noise tables of RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

import noisyfeedback as nf  # noqa: E402

TEST_SEEDS = (0, 1, 2, 3, 4)
TUNE_SEEDS = (100, 101, 102)
RHOS = (0.2, 0.4, 0.6)
#: the recommended parameters (chosen on TUNE_SEEDS of digits and the toy: C by cross-validated
#: corrected log-loss of the noisy labels over this grid; a fixed C=1 overfits digits, C≤0.1 underfits the toy)
RECOMMENDED = {"Cs": (0.01, 0.03, 0.1, 0.3, 1.0, 3.0), "n_folds": 3}
KINDS = ("symmetric", "pair")


def confusion(kind: str, rho: float, K: int) -> np.ndarray:
    return (nf.feedback.symmetric_confusion if kind == "symmetric" else nf.feedback.pair_confusion)(K, rho)


def identifiable(C: np.ndarray) -> bool:
    return bool(np.all(np.argmax(C, axis=0) == np.arange(C.shape[0])))


def load(name: str, seed: int, data_dir):
    """(Xtr, ytr, Xte, yte) standardised on the training rows; the split depends on the seed."""
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng([16, seed])
    if name == "digits":
        X, y = nf.datasets.load("digits")
        p = rng.permutation(len(y))
        tr, te = p[:1200], p[1200:]
        Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    elif name == "letter":
        Xtr, ytr = nf.datasets.load("letter", split="train", data_dir=data_dir)
        Xte, yte = nf.datasets.load("letter", split="test", data_dir=data_dir)
    elif name == "toy":
        from noisyfeedback.datasets.uma_toy import uma_toy

        X, y = uma_toy(8000, n_classes=10, n_features=10, margin=0.05, seed=int(rng.integers(2**31)))
        Xtr, ytr, Xte, yte = X[:4000], y[:4000], X[4000:], y[4000:]
    else:
        raise ValueError(name)
    sc = StandardScaler().fit(Xtr)
    return sc.transform(Xtr), np.asarray(ytr), sc.transform(Xte), np.asarray(yte)


def learners(C: np.ndarray, seed: int, params: dict | None = None) -> dict:
    """name -> factory (fit(X, y_noisy) -> predict)."""
    from sklearn.linear_model import LogisticRegression

    params = RECOMMENDED if params is None else params
    out = {
        "CorrectedLR": lambda: nf.CorrectedLogisticRegression(confusion=C, **params),
        # the class defaults (C = 1, no Cs search): what a user gets without the recommended grid
        "CorrectedLR_defaults": lambda: nf.CorrectedLogisticRegression(confusion=C),
        "CorrectedLR_est": lambda: nf.CorrectedLogisticRegression(confusion="estimate", seed=seed, **params),
        # the estimate from the neighbours' noisy-label shares (for data a linear model does not fit: Letter)
        "CorrectedLR_est_knn": lambda: nf.CorrectedLogisticRegression(confusion="estimate", proba_model="knn",
                                                                      seed=seed, **params),
        "LogReg": lambda: LogisticRegression(max_iter=1000),
        "UMA": lambda: nf.UMA(confusion=C, max_iter=1000),
    }
    try:
        from cleanlab.classification import CleanLearning

        out["cleanlab"] = lambda: CleanLearning(LogisticRegression(max_iter=1000), seed=seed)
    except ImportError:
        pass
    return out


def run_setting(name, kind, rho, seed, data_dir, only=None, params=None) -> list[dict]:
    Xtr, ytr, Xte, yte = load(name, seed, data_dir)
    K = int(max(ytr.max(), yte.max()) + 1)
    C = confusion(kind, rho, K)
    y_noisy = nf.feedback.ConfusionNoise(C).respond(ytr, rng=np.random.default_rng([16, seed, 1]))
    rows = []
    for lname, make in learners(C, seed, params).items():
        if only and lname not in only:
            continue
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = make().fit(Xtr, y_noisy)
        err = float(np.mean(m.predict(Xte) != yte))
        row = {"data": name, "kind": kind, "rho": rho, "seed": seed, "learner": lname, "error": err,
               "seconds": time.perf_counter() - t0}
        if lname.startswith("CorrectedLR_est"):
            row["C_maxabs"] = float(np.abs(m.confusion_ - C).max())
            # the floor: the confusion of the REALISED noisy labels (what a perfect estimator could see)
            emp = np.zeros((K, K))
            np.add.at(emp, (y_noisy, ytr), 1.0)
            emp /= np.maximum(emp.sum(axis=0, keepdims=True), 1.0)
            row["C_emp_maxabs"] = float(np.abs(emp - C).max())
            row["C_vs_emp_maxabs"] = float(np.abs(m.confusion_ - emp).max())
        rows.append(row)
    return rows


def summary(rows: list[dict]):
    import pandas as pd

    df = pd.DataFrame(rows)
    g = df.groupby(["data", "kind", "rho", "learner"])["error"]
    t = pd.DataFrame({"mean": g.mean(), "se": g.std(ddof=1) / np.sqrt(g.count())}).reset_index()
    t["cell"] = t.apply(lambda r: f"{r['mean']:.3f} ± {r['se']:.3f}", axis=1)
    wide = t.pivot_table(index=["data", "kind", "rho"], columns="learner", values="cell", aggfunc="first")
    return df, t, wide


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--datasets", default="digits,toy,letter")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--rhos", default=",".join(str(r) for r in RHOS))
    ap.add_argument("--learners", default=None, help="comma-separated subset of the learners (default: all)")
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    seeds = TUNE_SEEDS if a.tune else TEST_SEEDS
    rows = []
    for name in a.datasets.split(","):
        for kind in a.kinds.split(","):
            for rho in (float(r) for r in a.rhos.split(",")):
                for s in seeds:
                    rows += run_setting(name, kind, rho, s, a.data_dir,
                                        only=a.learners.split(",") if a.learners else None)
                print(name, kind, rho, "done", file=sys.stderr, flush=True)
    df, t, wide = summary(rows)
    if a.out:
        df.to_csv(a.out, index=False)
    print(wide.to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
