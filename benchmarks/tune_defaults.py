"""The sweep that chose the defaults of NLMS, ORS and TeacherSGD (and the CLI's regression noise level).

A default must give a meaningful result untuned: within 1.5x of the learner's tuned error on every data
set of its reproduction. The defaults are CHOSEN on tuning data and CHECKED on other data:

- NLMS(r), ORS(r) (scaling="one_sample_pred", variance="known"): the settings of the moroshko reproduction
  (synthetic M = 5; channel equalization M = 0.5, 1, 5; the speech substitute). The default is r="auto" (members
  over a grid of r, the prediction of the one with the smallest discounted running squared error); its grid and
  discount were chosen on the tuning sequences (data seed 999, noise seed 998, simulation seed 997) at the quick
  and the full sizes (``--only regression-auto``), and it is checked on report seeds 0, 1, 2: online MSE of the
  default against the best r of the grid on that very sequence (``--only regression`` at the quick sizes,
  ``--only regression-full`` at the full ones).
- TeacherSGD(lam, eps): the dekel2009 protocol (class pairs, random half splits, 20 random teachers of which
  k are evil, their labels flipped; test error on clean labels). Chosen on UCI digits (classes 1, 3, 7, 8,
  the quick reproduction's data) and breast_cancer (standardized and raw), checked on MNIST (3, 5, 8, 9,
  the full reproduction's data; 2,000 training rows a split) when --data-dir has it. The tuned error is the
  best (lam, eps) of the grid on the same split.

    python benchmarks/tune_defaults.py [--data-dir DATA] [--out tune_defaults.csv] [--only regression|teachers]
    python benchmarks/tune_defaults.py --only regression-auto --out defaults_regression_auto.csv
    python benchmarks/tune_defaults.py --only regression-full --out defaults_regression_full.csv
    python benchmarks/tune_defaults.py --data-dir DATA --only teachers-full --out defaults_teachers_full.csv

The ``*-full`` parts check the shipped defaults (no new choice) at the full reproductions' sizes: moroshko
(50,000 rounds; the speech substitute with 1,024 taps) and dekel2009 (MNIST, 100 teachers, k of the paper).

Results of the run that chose the defaults: benchmarks/results/defaults_regression_auto.csv (r="auto"'s rule),
tune_defaults_regression.csv (NLMS and ORS checked, and the CLI's noise level), tune_defaults_teachers.csv
(TeacherSGD per data set) and tune_defaults_teachers_grid.csv (its mean test error at every grid point).
Regression part ~1 min (regression-auto ~2 min, regression-full ~1 min), TeacherSGD part ~10 min on one core.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

import noisyfeedback as nf  # noqa: E402
from noisyfeedback.datasets.regression import (  # noqa: E402
    channel_equalization,
    hammer_variance,
    ors_synthetic,
    speech_substitute,  # noqa: E402
)

R_GRID = [float(round(10.0 ** e, 6)) for e in np.arange(-2, 4 + 1e-9, 0.25)]
LAM_GRID = [3e-1, 1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4]
EPS_GRID = [0.01, 0.03, 0.1, 0.3, 1.0, None]
N_TEACHERS = 20
EVIL = (2, 4, 6, 8)


#: the sizes of the moroshko reproduction: quick (where the defaults were chosen) and full (the paper's sizes)
QUICK_SIZES = {"synthetic": 10_000, "channel": 10_000, "speech": (8_000, 256, 256)}
FULL_SIZES = {"synthetic": 50_000, "channel": 50_000, "speech": (20_000, 1024, 1024)}


# ---------------------------------------------------------------- regression
def regression_settings(seed_data: int, seed_noise: int, sizes=QUICK_SIZES):
    """(label, X, y, channel) of the moroshko settings (``sizes``: quick or full) for one data / noise seed."""
    out = []
    n = sizes["synthetic"]
    X, y = ors_synthetic(n_samples=n, seed=seed_data)
    out.append(("synthetic M=5", X, y, nf.feedback.GaussianNoise.uniform(5.0, n, seed=seed_noise)))
    n = sizes["channel"]
    X, y = channel_equalization(n_samples=n, seed=seed_data)
    for M in (0.5, 1.0, 5.0):
        out.append((f"channel M={M:g}", X, y, nf.feedback.GaussianNoise.uniform(M, n, seed=seed_noise)))
    n, taps, room = sizes["speech"]
    X, y = speech_substitute(n_samples=n, n_taps=taps, room_length=room, seed=0)
    n0 = n // 5  # tuning: the first 20 % (as the recipe), report: the rest
    rows = slice(0, n0) if seed_data == 999 else slice(n0, n)
    Xs, ys = X[rows], y[rows]
    out.append(("speech", Xs, ys, nf.feedback.GaussianNoise(hammer_variance(len(ys), peak=5.0, floor=0.05,
                                                                             seed=seed_noise))))
    return out


def regression_mse(make, X, y, ch, sim_seed: int) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(nf.simulate(make(), X, y, ch, n_rounds=len(y), seed=sim_seed, shuffle=False).mse)


LEARNERS = {
    "NLMS": lambda r: nf.NLMS(r=r),
    "ORS": lambda r: nf.ORS(r=r, scaling="one_sample_pred", variance="known"),
}


def tune_regression(rows: list[dict]) -> dict[str, float | str]:
    """On the tuning settings (quick sizes): every r of the grid and r="auto" (the shipped default); prints the
    best single fixed r (the smallest worst ratio to each setting's best) for comparison. Returns "auto"."""
    tune = regression_settings(999, 998)
    for name, make in LEARNERS.items():
        table = {}
        for label, X, y, ch in tune:
            table[label] = {r: regression_mse(lambda: make(r), X, y, ch, 997) for r in R_GRID + ["auto"]}
        worst = {r: max(table[s][r] / min(v for q, v in table[s].items() if q != "auto") for s in table)
                 for r in R_GRID + ["auto"]}
        single = min(R_GRID, key=lambda r: (worst[r], r))
        for s in table:
            best = min(R_GRID, key=table[s].get)
            rows.append({"part": "tune", "learner": name, "setting": s, "best_r": best, "best": table[s][best],
                         "chosen_r": "auto", "at_chosen": table[s]["auto"],
                         "ratio": table[s]["auto"] / table[s][best]})
        print(f"{name}: r='auto' worst tuning ratio {worst['auto']:.3f}; best single r = {single:g} "
              f"(worst {worst[single]:.3f})", flush=True)
    return {name: "auto" for name in LEARNERS}


def check_regression(rows: list[dict], chosen: dict[str, float], seeds=(0, 1, 2), sizes=QUICK_SIZES,
                     part: str = "check") -> None:
    for s in seeds:
        for label, X, y, ch in regression_settings(s, 1000 + s, sizes):
            for name, make in LEARNERS.items():
                grid = {r: regression_mse(lambda: make(r), X, y, ch, s) for r in R_GRID}
                best = min(grid, key=grid.get)
                print(f"{part}: seed {s} {label} {name} grid done", flush=True)
                at = regression_mse(lambda: make(chosen[name]), X, y, ch, s)
                rows.append({"part": part, "learner": name, "setting": f"{label} seed {s}", "best_r": best,
                             "best": grid[best], "chosen_r": chosen[name], "at_chosen": at, "ratio": at / grid[best]})
            print(f"{part}: seed {s} done", flush=True)
    print("regression checked", flush=True)


def regression_grid_both_sizes(rows: list[dict]) -> None:
    """MSE at every r of the grid and of r="auto" on the tuning sequences at the quick and at the full sizes;
    prints, per learner, the r whose worst ratio to the best fixed r over all ten tuning settings is smallest
    (what a horizon-free fixed r can achieve across the two modes), and the worst ratio of r="auto"."""
    for sizes_name, sizes in (("quick", QUICK_SIZES), ("full", FULL_SIZES)):
        for label, X, y, ch in regression_settings(999, 998, sizes):
            for name, make in LEARNERS.items():
                for r in R_GRID + ["auto"]:
                    rows.append({"part": f"grid {sizes_name}", "learner": name, "setting": label, "r": r,
                                 "mse": regression_mse(lambda: make(r), X, y, ch, 997)})
            print(f"grid {sizes_name} {label} done", flush=True)
    import pandas as pd

    df = pd.DataFrame(rows)
    fixed = df[df["r"] != "auto"]
    best = fixed.groupby(["part", "learner", "setting"])["mse"].min()
    df["ratio"] = df["mse"] / best.reindex(pd.MultiIndex.from_frame(df[["part", "learner", "setting"]])).to_numpy()
    worst = df.groupby(["learner", df["r"].astype(str)])["ratio"].max()
    for name in LEARNERS:
        w = worst.loc[name]
        wf = w.drop("auto")
        print(f"{name}: best single r {wf.idxmin()} (worst ratio {wf.min():.3f} over quick + full tuning "
              f"settings); r='auto': worst {w.loc['auto']:.3f}", flush=True)


#: candidate rules of r="auto": members over a grid, the prediction from the members' running squared errors
#: on the labels (L_j <- discount·L_j + (label − ŷ_j)²): "leader" (the smallest L_j) or "ewa" (the members'
#: predictions weighted by exp(−c·(L_j − min L)/(min L / t)), a scale-free exponentially weighted average)
AUTO_GRIDS = {"half decades 10^-2..10^4": [round(10.0 ** (e / 2), 6) for e in range(-4, 9)],
              "half decades 10^0.5..10^4": [round(10.0 ** (e / 2), 6) for e in range(1, 9)],
              "quarter decades 10^-2..10^4": R_GRID}
AUTO_RULES = [("leader", d) for d in (1.0, 0.9995, 0.999, 0.998, 0.995, 0.99, 0.98)] + \
             [("ewa", c) for c in (0.5, 2.0, 8.0)]


def member_predictions(rs, rule, X, y, ch, sim_seed: int):
    """Each fixed-r member's prediction a round (rows in order, one label a round drawn as nf.simulate does):
    (P (n, members), labels (n,))."""
    from numba import njit

    from noisyfeedback.kernels.regression import ors_coef, row_dot  # the kernels' own update
    from noisyfeedback.simulate import simulation_streams

    @njit(cache=False)
    def run(W, rs, X, y, v, z, rule, P):
        d = X.shape[1]
        idx = np.arange(d)
        lab = np.empty(1)
        for s in range(X.shape[0]):
            val = X[s]
            lab[0] = y[s] + np.sqrt(v[s]) * z[s]
            for j in range(W.shape[0]):
                yh = row_dot(W[j], idx, val, d)
                P[s, j] = yh
                c, ok = ors_coef(val, d, yh, lab, 1, v[s], y[s], rule, True, rs[j], 0.0)
                for q in range(d):
                    W[j, q] += c * val[q]

    n = len(y)
    v = np.ascontiguousarray(ch.variance_at(np.arange(n)), dtype=np.float64)
    z = simulation_streams(sim_seed)[1].standard_normal(n)
    rs = np.asarray(rs, dtype=np.float64)
    P = np.empty((n, len(rs)))
    run(np.zeros((len(rs), X.shape[1])), rs, np.ascontiguousarray(X, dtype=np.float64), y, v, z, rule, P)
    return P, y + np.sqrt(v) * z


def auto_rule_mse(P, labels, y, kind: str, par: float) -> float:
    """Online MSE (against the clean y) of a rule over the members' predictions P."""
    n, m = P.shape
    E = (labels[:, None] - P) ** 2
    if kind == "leader":
        loss = np.zeros(m)
        lead = np.empty(n, dtype=np.int64)
        for s in range(n):
            lead[s] = int(np.argmin(loss))
            loss = par * loss + E[s]
        yhat = P[np.arange(n), lead]
    else:
        C = np.vstack([np.zeros(m), np.cumsum(E, axis=0)[:-1]])
        Lmin = C.min(axis=1, keepdims=True)
        scale = np.maximum(Lmin / np.maximum(np.arange(n), 1)[:, None], 1e-300)
        wts = np.exp(-par * (C - Lmin) / scale)
        yhat = (wts * P).sum(axis=1) / wts.sum(axis=1)
    return float(np.mean((yhat - y) ** 2))


def regression_auto_rules(rows: list[dict]) -> None:
    """The choice of r="auto"'s grid and rule on the tuning sequences (data seed 999) at both sizes: each rule's
    online MSE over the best fixed r of R_GRID on the same sequence."""
    import pandas as pd

    from noisyfeedback.learners.regression.ors import SCALINGS

    codes = {"NLMS": SCALINGS["none"], "ORS": SCALINGS["one_sample_pred"]}
    for sizes_name, sizes in (("quick", QUICK_SIZES), ("full", FULL_SIZES)):
        for label, X, y, ch in regression_settings(999, 998, sizes):
            for name, code in codes.items():
                P, labels = member_predictions(R_GRID, code, X, y, ch, 997)
                best = float(((P - y[:, None]) ** 2).mean(axis=0).min())
                for gname, grid in AUTO_GRIDS.items():
                    cols = [R_GRID.index(r) for r in grid]
                    for kind, par in AUTO_RULES:
                        mse = auto_rule_mse(P[:, cols], labels, y, kind, par)
                        rows.append({"part": f"auto {sizes_name}", "learner": name, "setting": label, "grid": gname,
                                     "rule": f"{kind} {par:g}", "mse": mse, "best_fixed": best, "ratio": mse / best})
            print(f"auto rules {sizes_name} {label} done", flush=True)
    df = pd.DataFrame(rows)
    summary = df.groupby(["grid", "rule"])["ratio"].agg(worst="max", mean="mean").reset_index()
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(summary.sort_values(["worst", "mean"]).round(3).to_string(index=False))


def defaults_regression() -> dict[str, float | str]:
    """r of ``NLMS()`` and ``ORS()`` as shipped (the ``full`` check measures the defaults, not a new choice)."""
    return {"NLMS": nf.NLMS().r, "ORS": nf.ORS().r}


def cli_noise(rows: list[dict], chosen: dict[str, float]) -> None:
    """NLMS vs ORS (their defaults: ``chosen``) on the CLI's default data (ors_synthetic) at several constant
    noise variances."""
    X, y = ors_synthetic(n_samples=10_000, seed=0)
    for v in (0.0, 0.5, 1.0, 2.0, 5.0):
        ch = nf.feedback.GaussianNoise(v)
        a = regression_mse(lambda: nf.NLMS(r=chosen["NLMS"]), X, y, ch, 0)
        b = regression_mse(lambda: nf.ORS(r=chosen["ORS"]), X, y, ch, 0)
        rows.append({"part": "cli", "learner": "NLMS/ORS", "setting": f"GaussianNoise({v:g})", "best": a,
                     "at_chosen": b, "ratio": b / a})
        print(f"GaussianNoise({v:g}): NLMS {a:.4f}, ORS {b:.4f}", flush=True)


# ------------------------------------------------------------------ teachers
def teacher_problems(name: str, data_dir, n_splits: int, n_train: int | None, n_teachers: int = N_TEACHERS,
                     evil=EVIL):
    """(label, Xtr, y_bad, teachers, Xte, yte) of the dekel2009 protocol on a data set's class pairs
    (``n_teachers`` random teachers, ``evil``: the numbers of evil ones)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    from noisyfeedback.datasets.teachers import flip_evil, random_teachers

    if name.startswith("breast_cancer"):
        X, y = load_breast_cancer(return_X_y=True)
        if name.endswith("std"):
            X = StandardScaler().fit_transform(X)
        pairs, pool = [(0, 1)], (X, y)
    else:
        classes = (1, 3, 7, 8) if name == "digits" else (3, 5, 8, 9)
        X, y = nf.datasets.load(name, split="train", data_dir=data_dir, normalize=True)
        keep = np.isin(y, classes)
        pool = (X[keep], np.asarray(y)[keep])
        pairs = list(itertools.combinations(classes, 2))
    X, y = pool
    out = []
    for p, pair in enumerate(pairs):
        rows = np.flatnonzero(np.isin(y, pair))
        Xp, yp = X[rows], np.where(y[rows] == pair[1], 1, -1)
        for split in range(n_splits):
            rng = np.random.default_rng([2009, p, split, 77])
            perm = rng.permutation(len(yp))
            tr, te = perm[: len(yp) // 2], perm[len(yp) // 2:]
            if n_train is not None:
                tr = tr[:n_train]
            teachers = random_teachers(len(tr), n_teachers, seed=int(rng.integers(2**31)))
            for k in evil:
                y_bad, _ = flip_evil(yp[tr], teachers, n_evil=k, seed=int(rng.integers(2**31)))
                out.append((f"{name} {pair} split {split} k={k}", Xp[tr], y_bad, teachers, Xp[te], yp[te]))
    return out


def sgd_error(lam, eps, prob) -> float:
    _, Xtr, yb, t, Xte, yte = prob
    m = nf.TeacherSGD(lam=lam, eps=eps).fit(Xtr, yb, teachers=t)
    return float(np.mean(m.predict(Xte) != yte))


def grid_errors(rows: list[dict], part: str, dataset: str, probs) -> None:
    for p in probs:
        for lam, eps in itertools.product(LAM_GRID, EPS_GRID):
            rows.append({"part": part, "learner": "TeacherSGD", "dataset": dataset, "setting": p[0], "lam": lam,
                         "eps": "none" if eps is None else eps, "error": sgd_error(lam, eps, p)})


def teacher_summary(df, chosen) -> list[dict]:
    """Per data set: the mean test error over its problems at each (lam, eps); the best, the chosen, the old
    default (1e-4, 1.0), and their ratios to the best."""
    out = []
    for (part, ds), g in df.groupby(["part", "dataset"]):
        mean = g.groupby(["lam", "eps"])["error"].mean()
        best = mean.idxmin()
        at = mean.loc[chosen]
        old = mean.loc[(1e-4, 1.0)]
        out.append({"part": part, "learner": "TeacherSGD", "setting": ds, "best_r": str(best), "best": mean.min(),
                    "chosen_r": str(chosen), "at_chosen": at, "ratio": at / mean.min(), "at_old_default": old,
                    "old_ratio": old / mean.min()})
    return out


def teachers(rows: list[dict], data_dir) -> list[dict]:
    """Grid errors on the tuning sets (digits, breast_cancer standardized and raw) and MNIST; the chosen
    (lam, eps) minimises the worst ratio of a tuning set's mean error to its best; MNIST only checks it."""
    import pandas as pd

    grid_errors(rows, "tune", "digits", teacher_problems("digits", data_dir, 2, None))
    grid_errors(rows, "tune", "breast_cancer std", teacher_problems("breast_cancer std", data_dir, 3, None))
    grid_errors(rows, "tune", "breast_cancer raw", teacher_problems("breast_cancer raw", data_dir, 3, None))
    try:
        grid_errors(rows, "check", "mnist", teacher_problems("mnist", data_dir, 1, 1_000))
    except Exception as exc:  # noqa: BLE001
        print(f"MNIST not loaded ({exc}); TeacherSGD checked on the tuning data only", file=sys.stderr)
    df = pd.DataFrame([r for r in rows if r.get("learner") == "TeacherSGD"])
    tune = df[df["part"] == "tune"]
    means = tune.groupby(["dataset", "lam", "eps"])["error"].mean()
    best = means.groupby(level="dataset").min()
    worst = (means / best.reindex(means.index.get_level_values("dataset")).to_numpy()).groupby(
        level=["lam", "eps"]).max()
    chosen = worst.idxmin()
    print(f"TeacherSGD: chosen (lam, eps) = {chosen} (worst tuning ratio {worst[chosen]:.3f}; "
          f"old default (1e-4, 1.0): {worst[(1e-4, 1.0)]:.3f})", flush=True)
    return teacher_summary(df, chosen)


def teachers_full(rows: list[dict], data_dir, n_splits: int) -> list[dict]:
    """``TeacherSGD()`` against the best (lam, eps) of the grid on the full dekel2009 reproduction's data and
    protocol: MNIST classes 3, 5, 8, 9 (every pair), the whole training half, 100 random teachers, k evil
    ones for every k of the paper; the quick reproduction's (digits, 20 teachers) is the "tune" part above."""
    import pandas as pd

    from noisyfeedback.lab.papers.dekel2009.plans import FULL_PLAN, PAPER_K

    grid_errors(rows, "full", "mnist", teacher_problems("mnist", data_dir, n_splits, None,
                                                         FULL_PLAN["n_teachers"], PAPER_K))
    d = nf.TeacherSGD()
    return teacher_summary(pd.DataFrame(rows), (d.lam, d.eps))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--out", default="tune_defaults.csv")
    ap.add_argument("--only", choices=("regression", "teachers", "regression-full", "teachers-full",
                                               "regression-grid", "regression-auto"), default=None,
                    help="the *-full parts check the shipped defaults at the full reproductions' sizes")
    ap.add_argument("--seeds", type=int, default=3, help="report seeds of regression-full")
    ap.add_argument("--splits", type=int, default=1, help="random half splits per class pair of teachers-full")
    args = ap.parse_args(argv)
    import pandas as pd

    t0 = time.perf_counter()
    rows: list[dict] = []
    if args.only == "regression-grid":
        regression_grid_both_sizes(rows)
    if args.only == "regression-auto":
        regression_auto_rules(rows)
    if args.only == "regression-full":
        check_regression(rows, defaults_regression(), tuple(range(args.seeds)), FULL_SIZES, part="full")
    if args.only == "teachers-full":
        grid: list[dict] = []
        rows += teachers_full(grid, args.data_dir, args.splits)
        pd.DataFrame(grid).groupby(["part", "dataset", "lam", "eps"])["error"].agg(
            mean_error="mean", problems="count").reset_index().to_csv(
            os.path.splitext(args.out)[0] + "_grid.csv", index=False)
    if args.only in ("regression-full", "teachers-full", "regression-grid", "regression-auto"):
        df = pd.DataFrame(rows)
        df.to_csv(args.out, index=False)
        with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 20):
            print(df.round(4).to_string())
        print(f"{time.perf_counter() - t0:.0f} s; written {args.out}")
        return 0
    if args.only in (None, "regression"):
        chosen = tune_regression(rows)
        check_regression(rows, chosen)
        cli_noise(rows, chosen)
    summary = [r for r in rows if "ratio" in r]
    if args.only in (None, "teachers"):
        grid: list[dict] = []
        summary += teachers(grid, args.data_dir)
        g = pd.DataFrame(grid).groupby(["part", "dataset", "lam", "eps"])["error"]
        g.agg(mean_error="mean", problems="count").reset_index().to_csv(
            os.path.splitext(args.out)[0] + "_teachers_grid.csv", index=False)
    df = pd.DataFrame(summary)
    df.to_csv(args.out, index=False)
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 20):
        print(df.round(4).to_string())
    print(f"{time.perf_counter() - t0:.0f} s; written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
