"""Finding the mislabelled rows: ``nf.find_label_issues`` vs cleanlab's ``find_label_issues``, and the
estimated confusion matrix vs cleanlab's confident-joint estimate.

Settings: digits (all 1,797 rows) and UCI Letter (the 16,000-row training split, or a stratified
subsample of ``--letter-rows``, from ``--data-dir``), each with its features as shipped (``raw``),
standardised (``standard``) or every row scaled to unit Euclidean norm (``unitnorm``); symmetric
(C[q, q] = 1 − ρ, the rest ρ/(K − 1)) and pair (C[q+1 mod K, q] = ρ) noise at ρ = 0.2, 0.4, and a random
confusion matrix (``random``: C[q, q] = 0.65, the rest of each column 0.35 times a flat Dirichlet draw, one
matrix per seed). Per seed the labels are flipped by ``ConfusionNoise(C)``; the truly flipped rows are those
whose noisy label differs from the clean one.

Model classes:

- ``linear``: ours = ``nf.find_label_issues`` with its defaults (``confusion="estimate"``, no estimator:
  the features standardised inside, the regularisation cross-validated, the estimate of C and the scores
  chosen by held-out log-loss); cleanlab = scikit-learn ``LogisticRegression(max_iter=1000)`` 5-fold
  out-of-fold probabilities of the noisy labels on the features as given (what ``CleanLearning`` does by
  default), then ``cleanlab.filter.find_label_issues``.
- ``knn``: 15 nearest neighbours on the standardised features, for both.

Rows: F1 (precision, recall) of the flagged rows against the truly flipped rows for ours with C
estimated (``confusion="estimate"``), ours with C known, and cleanlab (``filter_by="prune_by_noise_rate"``,
its default); max |Ĉ − C_emp| where C_emp is the realised confusion of the training labels (clean labels
used only for scoring), for ours and cleanlab's ``estimate_py_and_noise_matrices_from_probabilities``.

    python benchmarks/label_issues.py --data-dir DATA [--datasets digits,letter] [--models linear,knn]
        [--scalings raw,standard,unitnorm] [--kinds symmetric,pair,random] [--seeds 0,1,2]
        [--letter-rows 4000] [--out runs.csv]

``ours`` also times the whole call (C estimated) against ``ours_known_C`` (C given): ``est/known``.
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
from noisyfeedback.learners.label_noise import estimate_label_confusion  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from label_noise import confusion  # noqa: E402

KINDS = ("symmetric", "pair", "random")
SCALINGS = ("raw", "standard", "unitnorm")
RHOS = (0.2, 0.4)


def load(name: str, data_dir, letter_rows: int | None, scaling: str = "standard"):
    if name == "digits":
        X, y = nf.datasets.load("digits")
    elif name == "letter":
        X, y = nf.datasets.load("letter", split="train", data_dir=data_dir)
        if letter_rows and letter_rows < len(y):
            from sklearn.model_selection import train_test_split

            X, _, y, _ = train_test_split(X, y, train_size=letter_rows, stratify=y, random_state=31)
    else:
        raise ValueError(name)
    return scale(np.asarray(X, dtype=np.float64), scaling), np.asarray(y)


def scale(X: np.ndarray, scaling: str) -> np.ndarray:
    from sklearn.preprocessing import StandardScaler, normalize

    if scaling == "raw":
        return X
    if scaling == "standard":
        return StandardScaler().fit_transform(X)
    if scaling == "unitnorm":
        return normalize(X)
    raise ValueError(scaling)


def noise_matrix(kind: str, rho: float, K: int, seed: int) -> np.ndarray:
    """``random``: C[q, q] = 0.65 and the other entries of column q 0.35 × Dirichlet(1, ..., 1) (ρ unused)."""
    if kind != "random":
        return confusion(kind, rho, K)
    rng = np.random.default_rng([17, seed])
    C = np.zeros((K, K))
    for q in range(K):
        C[np.arange(K) != q, q] = 0.35 * rng.dirichlet(np.ones(K - 1))
        C[q, q] = 0.65
    return C


def f1(flagged: np.ndarray, flipped: np.ndarray) -> tuple[float, float, float]:
    tp = float(flipped[flagged].sum())
    p = tp / max(len(flagged), 1)
    r = tp / max(flipped.sum(), 1)
    return (2 * p * r / (p + r) if p + r > 0 else 0.0), p, r


def realised(y_noisy, y, K) -> np.ndarray:
    emp = np.zeros((K, K))
    np.add.at(emp, (y_noisy, y), 1.0)
    return emp / np.maximum(emp.sum(axis=0, keepdims=True), 1.0)


def run_setting(name, X, y, kind, rho, seed, models, scaling="standard") -> list[dict]:
    from cleanlab.count import estimate_py_and_noise_matrices_from_probabilities
    from cleanlab.filter import find_label_issues as cl_find
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.neighbors import KNeighborsClassifier

    K = int(y.max()) + 1
    C = noise_matrix(kind, rho, K, seed)
    yn = nf.feedback.ConfusionNoise(C).respond(y, rng=np.random.default_rng([31, seed, 1]))
    flipped = yn != y
    emp = realised(yn, y, K)
    base = {"data": name, "scaling": scaling, "kind": kind, "rho": rho if kind != "random" else 0.35, "seed": seed,
            "n": len(y), "flipped": int(flipped.sum()), "emp_vs_C": float(np.abs(emp - C).max())}
    rows = []
    for model in models:
        est = None if model == "linear" else KNeighborsClassifier(15)
        peer = LogisticRegression(max_iter=1000) if model == "linear" else KNeighborsClassifier(15)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            idx = nf.find_label_issues(X, yn, estimator=est)
            t_ours = time.perf_counter() - t0
            Chat = estimate_label_confusion(X, yn, estimator=est)
            t0 = time.perf_counter()
            idx_known = nf.find_label_issues(X, yn, C, estimator=est, seed=seed)
            t_known = time.perf_counter() - t0
            t0 = time.perf_counter()
            folds = StratifiedKFold(5, shuffle=True, random_state=seed)
            pp = cross_val_predict(peer, X, yn, cv=folds, method="predict_proba")
            idx_cl = cl_find(yn, pp, return_indices_ranked_by="self_confidence", n_jobs=1)
            _, nm, _, _ = estimate_py_and_noise_matrices_from_probabilities(yn, pp)
            t_cl = time.perf_counter() - t0
        for lib, flagged, Cest, secs in (("ours", idx, Chat, t_ours), ("ours_known_C", idx_known, None, t_known),
                                         ("cleanlab", idx_cl, nm, t_cl)):
            F, p, r = f1(np.asarray(flagged, dtype=np.int64), flipped)
            row = dict(base, model=model, lib=lib, f1=F, precision=p, recall=r, n_flagged=len(flagged),
                       seconds=secs, est_over_known=t_ours / t_known)
            if Cest is not None:
                row["C_vs_emp"] = float(np.abs(Cest - emp).max())
                row["C_vs_true"] = float(np.abs(Cest - C).max())
            rows.append(row)
    return rows


def estimate_speed(X, y, C, params: dict, seed: int, repeats: int = 1) -> dict:
    """Wall and CPU seconds of ``CorrectedLogisticRegression(**params).fit`` with C given and with
    ``confusion="estimate"`` (the best of ``repeats``), and the estimate's max |Ĉ − C_emp|."""
    K = C.shape[0]
    yn = nf.feedback.ConfusionNoise(C).respond(y, rng=np.random.default_rng([31, seed, 2]))
    emp = realised(yn, y, K)
    out = {}
    for name, conf in (("known", C), ("estimate", "estimate")):
        best = None
        for _ in range(repeats):
            w, c = time.perf_counter(), time.process_time()
            m = nf.CorrectedLogisticRegression(confusion=conf, seed=seed, **params).fit(X, yn)
            t = (time.perf_counter() - w, time.process_time() - c)
            best = t if best is None or t[0] < best[0] else best
        out[f"{name}_wall"], out[f"{name}_cpu"] = best
        if name == "estimate":
            out["C_vs_emp"] = float(np.abs(m.confusion_ - emp).max())
            out["C_vs_true"] = float(np.abs(m.confusion_ - C).max())
    out["wall_ratio"] = out["estimate_wall"] / out["known_wall"]
    out["cpu_ratio"] = out["estimate_cpu"] / out["known_cpu"]
    return out


def speed_table(data_dir, seeds=(0, 1, 2)) -> list[dict]:
    """confusion="estimate" against a fit with C given: digits (1,257 rows, pair 0.3) and, with ``data_dir``,
    a 4,000-row stratified subsample of Letter (symmetric 0.2); class defaults and the recommended grid."""
    from label_noise import RECOMMENDED

    sets = [("digits 1,257 rows, pair 0.3", "digits", None, "pair", 0.3)]
    if data_dir:
        sets.append(("Letter 4,000 rows, symmetric 0.2", "letter", 4000, "symmetric", 0.2))
    rows = []
    for label, name, n_rows, kind, rho in sets:
        X, y = load(name, data_dir, n_rows)
        if name == "digits":
            p = np.random.default_rng(31).permutation(len(y))[:1257]
            X, y = X[p], y[p]
        C = confusion(kind, rho, int(y.max()) + 1)
        for pname, params in (("class defaults", {}), ("Cs grid, 3 folds", RECOMMENDED)):
            r = [estimate_speed(X, y, C, params, s) for s in seeds]
            rows.append({"data": label, "params": pname,
                         **{k: float(np.mean([v[k] for v in r])) for k in r[0]}})
    return rows


def report(df) -> str:
    import pandas as pd

    def ms(s):
        s = s.dropna()
        return f"{s.mean():.3f} ± {s.std(ddof=1) / np.sqrt(len(s)):.3f}" if len(s) > 1 else f"{s.mean():.3f}"

    out = []
    if "scaling" not in df:
        df = df.assign(scaling="standard")
    for model, g in df.groupby("model"):
        out.append(f"\nmodel: {model}\n")
        out.append("| data | scaling | noise | F1 ours (C estimated) | F1 ours (C known) | F1 cleanlab | not below | "
                   "max abs(Ĉ − C_emp) ours | cleanlab | not above | time est/known |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for (d, sc, k, r), h in g.groupby(["data", "scaling", "kind", "rho"]):
            o, kn, c = (h[h.lib == x] for x in ("ours", "ours_known_C", "cleanlab"))
            se = np.nan_to_num(np.sqrt(o.f1.var(ddof=1) / len(o) + c.f1.var(ddof=1) / len(c)))
            ok_f1 = o.f1.mean() >= c.f1.mean() - se
            se_c = np.nan_to_num(np.sqrt(o.C_vs_emp.var(ddof=1) / len(o) + c.C_vs_emp.var(ddof=1) / len(c)))
            ok_c = o.C_vs_emp.mean() <= c.C_vs_emp.mean() + se_c
            noise = "random 0.65" if k == "random" else f"{k} {r}"
            out.append(f"| {d} | {sc} | {noise} | {ms(o.f1)} | {ms(kn.f1)} | {ms(c.f1)} | {'yes' if ok_f1 else 'NO'} | "
                       f"{ms(o.C_vs_emp)} | {ms(c.C_vs_emp)} | {'yes' if ok_c else 'NO'} | "
                       f"{o.est_over_known.mean():.1f}x |")
    _ = pd
    return "\n".join(out)


def section(data_dir, seeds=(0, 1, 2), letter_rows: int = 6000) -> str:
    """The full comparison (digits, and Letter when ``data_dir`` holds it) as Markdown, for ``make bench``."""
    import pandas as pd

    rows = []
    for name in ("digits", "letter"):
        if name == "letter" and not data_dir:
            continue
        X0, y = load(name, data_dir, letter_rows, "raw")
        for scaling in SCALINGS:
            X = scale(X0, scaling)
            for kind in KINDS:
                for rho in (RHOS if kind != "random" else (0.35,)):
                    for s in seeds:
                        rows += run_setting(name, X, y, kind, rho, s, ["linear"], scaling)
    return report(pd.DataFrame(rows)) + "\n"


def _tune_cases(seed: int):
    """``--tune``: scikit-learn ``make_classification`` (1,500 rows, 20 features, 6 classes, two clusters a class)
    and Gaussian blobs (1,500 rows, 10 features, 6 classes), features raw, standardised, unit-norm rows, or columns
    scaled by 10^(−3..3); symmetric 0.3 and pair 0.3 noise."""
    from sklearn.datasets import make_blobs, make_classification

    gens = {"make_classification": make_classification(1500, 20, n_informative=10, n_classes=6,
                                                       n_clusters_per_class=2, random_state=seed),
            "blobs": make_blobs(1500, 10, centers=6, cluster_std=3.0, random_state=seed)}
    for gname, (X0, y) in gens.items():
        for sc in ("raw", "standard", "unitnorm", "columns"):
            X = X0 * np.logspace(-3, 3, X0.shape[1]) if sc == "columns" else scale(X0, sc)
            for kind in ("symmetric", "pair"):
                yield gname, sc, kind, 0.3, X, y


def _tune_wide_cases(seed: int):
    """``--tune-wide``: ``make_classification`` with one cluster a class (3,000 rows, 30 features, 10 classes) and
    with two (3,000 rows, 20 features, 4 classes), Gaussian blobs with σ = 5 (3,000 rows, 20 features, 10 classes)
    and σ = 8 (2,000 rows, 10 features, 6 classes); raw and unit-norm rows; symmetric and pair 0.2 and 0.4."""
    from sklearn.datasets import make_blobs, make_classification

    gens = {"make_classification-1": make_classification(3000, 30, n_informative=15, n_classes=10,
                                                         n_clusters_per_class=1, class_sep=1.5, random_state=seed),
            "make_classification-2": make_classification(3000, 20, n_informative=10, n_classes=4,
                                                         n_clusters_per_class=2, class_sep=2.0, random_state=seed),
            "blobs-5": make_blobs(3000, 20, centers=10, cluster_std=5.0, random_state=seed),
            "blobs-8": make_blobs(2000, 10, centers=6, cluster_std=8.0, random_state=seed)}
    for gname, (X0, y) in gens.items():
        for sc in ("raw", "unitnorm"):
            for kind, rho in (("symmetric", 0.2), ("symmetric", 0.4), ("pair", 0.2), ("pair", 0.4)):
                yield gname, sc, kind, rho, scale(X0, sc), y


def tune_table(seeds=(0, 1, 2), wide: bool = False) -> list[dict]:
    """The default pipeline's two estimates and its choice on GENERATED data (not the benchmark's data sets;
    `_tune_cases`, or `_tune_wide_cases` with ``wide``): F1 of each method and of "auto", and the max error of
    each Ĉ against the realised confusion."""
    from noisyfeedback.learners.label_noise.label_issues import _default_pipeline
    from noisyfeedback.noise.label_issues import flag_issues, flip_posterior

    rows = []
    for seed in seeds:
        for gname, sc, kind, rho, X, y in (_tune_wide_cases if wide else _tune_cases)(seed):
            K = int(y.max()) + 1
            C = confusion(kind, rho, K)
            yn = nf.feedback.ConfusionNoise(C).respond(y, rng=np.random.default_rng([7, seed]))
            fit = _default_pipeline(X, yn, K, 5, 0, None, "auto")
            emp = realised(yn, y, K)
            row = {"data": gname, "scaling": sc, "noise": f"{kind} {rho}", "seed": seed, "auto": fit["method"]}
            for m, (Ch, P) in list(fit["candidates"].items()) + [("auto", (fit["C"], fit["P"]))]:
                row[f"F1 {m}"] = f1(flag_issues(flip_posterior(P, yn, Ch), yn, Ch, "expected_flips", 0.5), yn != y)[0]
                row[f"C error {m}"] = float(np.abs(Ch - emp).max())
            rows.append(row)
            print(row, file=sys.stderr, flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--datasets", default="digits,letter")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--rhos", default=",".join(str(r) for r in RHOS))
    ap.add_argument("--models", default="linear")
    ap.add_argument("--scalings", default=",".join(SCALINGS))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--letter-rows", type=int, default=None, help="stratified subsample of Letter's training split")
    ap.add_argument("--out", default=None)
    ap.add_argument("--speed", action="store_true", help="only the timing of confusion='estimate' vs C given")
    ap.add_argument("--tune", action="store_true", help="only the default pipeline on generated data")
    ap.add_argument("--tune-wide", action="store_true", help="only the default pipeline on a wider generated set")
    a = ap.parse_args(argv)
    import pandas as pd

    if a.tune or a.tune_wide:
        df = pd.DataFrame(tune_table(tuple(int(v) for v in a.seeds.split(",")), wide=a.tune_wide))
        if a.out:
            df.to_csv(a.out, index=False)
        print(df.round(3).to_string(index=False))
        print(df.filter(regex="^(F1|C error) ").mean().round(4).to_string())
        return 0
    if a.speed:
        print(pd.DataFrame(speed_table(a.data_dir)).round(3).to_string(index=False))
        return 0

    rows = []
    for name in a.datasets.split(","):
        X0, y = load(name, a.data_dir, a.letter_rows, "raw")
        for scaling in a.scalings.split(","):
            X = scale(X0, scaling)
            for kind in a.kinds.split(","):
                for rho in ((float(r) for r in a.rhos.split(",")) if kind != "random" else (0.35,)):
                    for s in (int(v) for v in a.seeds.split(",")):
                        rows += run_setting(name, X, y, kind, rho, s, a.models.split(","), scaling)
                        if a.out:
                            pd.DataFrame(rows).to_csv(a.out, index=False)
                    f1 = pd.DataFrame(rows).groupby("lib").f1.mean().round(3).to_dict()
                    print(name, scaling, kind, rho, "done", f1, file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    print(report(df))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
