"""``reproduce dekel2009``: Dekel & Shamir (2009), good learners for evil teachers.

What the paper shows (its Sections 5 and 6) and what this recipe reruns:

- Figure 1 — the damage (excess-error) ratio (e3 − e1)/(e2 − e1) of the
  teacher-constrained SVM (:class:`~noisyfeedback.EvilTeacherSVM`, ε = 1) against
  the plain SVM, as a function of the number k ∈ {5, 10, …, 40} of evil teachers
  out of 100; training examples assigned to teachers at random, an evil teacher
  flips all its labels. e1: SVM on clean labels, e2: SVM on the corrupted labels,
  e3: the robust learner on the corrupted labels, all on the same clean test set.
- Figure 2 — the same for the Section 6 heuristic (:class:`~noisyfeedback.TeacherSGD`).
- Figure 3 — teachers by topic (unequal sizes): damage ratio against the fraction of
  flipped labels, one point per run (the paper shows TeacherSGD; we add EvilTeacherSVM).

The paper ran on the 6 binary problems between RCV1's four top categories (CCAT,
ECAT, GCAT, MCAT), 99 low-level categories as topic teachers, 40 random half/half
train/test splits. RCV1 with those categories is not available here: full mode runs
the 6 binary problems between 4 classes of MNIST (:data:`FULL_PLAN`; rows scaled to
unit L2 norm), with 100 k-means clusters of each problem's examples as the topic
teachers. Users who have RCV1 can pass :data:`RCV1_PLAN` (LIBSVM ``rcv1.binary``:
one binary problem, CCAT+ECAT vs GCAT+MCAT) to :func:`run`.

Full mode: 40 splits per problem into equal training and test halves, both used whole
(as the paper; about 67 training examples per teacher, about an hour on 2 cores); λ of the SVM is chosen
once per problem on a separate validation split (the paper: "a standard well-tuned
linear SVM"), from a grid; ε = 1 as in the paper; both SVMs solved to a certified
relative duality gap of 1e-5. Quick mode (part of ``noisyfeedback demo``) runs on
scikit-learn's digits (4 classes, 20 teachers, 3 splits): seconds.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..recipes import Claim, claims_table, register_recipe

TITLE = "Dekel & Shamir (2009): good learners for evil teachers"

#: the paper's statements, as judged here
PAPER_K = (5, 10, 15, 20, 25, 30, 35, 40)

#: full mode: MNIST (the paper: RCV1, not available here)
FULL_PLAN: dict[str, Any] = {
    "dataset": {"name": "mnist", "label": "MNIST", "classes": [3, 5, 8, 9], "normalize": True},
    "n_train": None,
    "n_splits": 40,
    "n_teachers": 100,
    "evil": list(PAPER_K),
    "n_topics": 100,
    "lams": [1e-3, 1e-4, 1e-5],
    "eps": 1.0,
    "tol": 1e-5,
    "sgd_epochs": 10,
    "seed": 2009,
    # on the first problem: the slack per teacher (a training subsample of n_small; smaller ε) at the
    # largest k, and plain Pegasos against the exact SVM on clean labels (every problem)
    "sensitivity": {"n_splits": 5, "k": [30, 40], "n_small": 2_000},
}

#: quick mode (bundled data; a test may shrink it further)
QUICK_PLAN: dict[str, Any] = {
    "dataset": {"name": "digits", "label": "digits", "classes": [1, 3, 7, 8], "normalize": True},
    "n_train": None,
    "n_splits": 3,
    "n_teachers": 20,
    "evil": [2, 4, 6, 8],
    "n_topics": 20,
    "lams": [1e-2, 1e-3],
    "eps": 1.0,
    "tol": 1e-5,
    "sgd_epochs": 10,
    "seed": 2009,
    "sensitivity": {"n_splits": 2, "k": [6, 8], "n_small": 100},
}

#: for users with LIBSVM's rcv1.binary (one binary problem: CCAT+ECAT vs GCAT+MCAT; no
#: low-level categories in that file, so the topic teachers are k-means clusters too)
RCV1_PLAN: dict[str, Any] = {**FULL_PLAN, "dataset": {"name": "rcv1", "label": "RCV1", "classes": [0, 1]},
                             "n_train": 10_000, "lams": [1e-4, 1e-5, 1e-6]}

#: a fraction of runs "most of the time"
MAJORITY = 0.5


# ------------------------------------------------------------------ data
@lru_cache(maxsize=2)
def _pool(dataset_json: str, data_dir: str | None):
    """(X, y) of the dataset's classes: train and test pooled (the paper re-splits at random)."""
    import noisyfeedback as nf

    ds = json.loads(dataset_json)
    split = "train" if ds["name"] in ("digits", "iris", "wine", "breast_cancer", "synsep", "synnonsep") else "all"
    X, y = nf.datasets.load(ds["name"], split=split, data_dir=data_dir, normalize=bool(ds.get("normalize")))
    keep = np.isin(y, ds["classes"])
    return X[keep], np.asarray(y)[keep]


def problems(classes) -> list[tuple[Any, Any]]:
    """The binary problems: every pair (a, b) of the classes, a < b (4 classes: 6 problems)."""
    return list(itertools.combinations(sorted(classes), 2))


def _problem_rows(y, pair) -> np.ndarray:
    return np.flatnonzero(np.isin(y, pair))


def _topics(X, n_topics: int, seed: int) -> np.ndarray:
    """Topic teachers: k-means clusters of the problem's examples (sizes unequal)."""
    from ...datasets.teachers import topic_teachers

    return topic_teachers(X, min(n_topics, X.shape[0]), seed=seed)


def _split(n: int, n_train: int | None, rng) -> tuple[np.ndarray, np.ndarray]:
    """A random half/half split of n rows; the training half subsampled to n_train."""
    perm = rng.permutation(n)
    half = n // 2
    train, test = perm[:half], perm[half:]
    if n_train is not None and n_train < train.size:
        train = train[:n_train]
    return np.sort(train), np.sort(test)


# ----------------------------------------------------------------- tasks
def _error(model, X, y) -> float:
    return float(np.mean(model.predict(X) != y))


def run_split(task: dict) -> list[dict]:
    """One (problem, split): e1, and for each assignment and k: e2 (SVM), e3 (EvilTeacherSVM, TeacherSGD)."""
    import warnings

    from ... import EvilTeacherSVM, LinearSVM, TeacherSGD
    from ...datasets.teachers import flip_evil, random_teachers
    from ...metrics import damage_ratio

    plan, pair, split = task["plan"], tuple(task["pair"]), task["split"]
    X, y = _pool(json.dumps(plan["dataset"], sort_keys=True), task["data_dir"])
    rows_idx = _problem_rows(y, pair)
    Xp, yp = X[rows_idx], np.where(np.asarray(y)[rows_idx] == pair[1], 1, -1)
    topics = np.asarray(task["topics"])
    ss = np.random.SeedSequence([plan["seed"], task["problem_index"], split])
    rng = np.random.default_rng(ss)
    train, test = _split(Xp.shape[0], plan["n_train"], rng)
    Xtr, ytr, Xte, yte = Xp[train], yp[train], Xp[test], yp[test]
    lam, eps, tol = task["lam"], plan["eps"], plan["tol"]
    seeds = iter(rng.integers(2**31 - 1, size=10_000).tolist())
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a non-converged fit is recorded, not printed
        clean = LinearSVM(lam=lam, tol=tol).fit(Xtr, ytr)
    e1 = _error(clean, Xte, yte)
    out = []
    assignments = {
        "random": random_teachers(Xtr.shape[0], plan["n_teachers"], seed=next(seeds)),
        "topic": np.unique(topics[train], return_inverse=True)[1].astype(np.int64).ravel(),
    }
    for assignment, teachers in assignments.items():
        n_present = int(teachers.max()) + 1
        for k in plan["evil"]:
            if k > n_present:
                continue
            y_bad, evil = flip_evil(ytr, teachers, n_evil=int(k), seed=next(seeds))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                svm = LinearSVM(lam=lam, tol=tol).fit(Xtr, y_bad)
                ets = EvilTeacherSVM(lam=lam, eps=eps, tol=tol).fit(Xtr, y_bad, teachers=teachers)
                sgd = TeacherSGD(lam=lam, eps=eps, n_epochs=plan["sgd_epochs"], seed=next(seeds)).fit(
                    Xtr, y_bad, teachers=teachers)
            e2 = _error(svm, Xte, yte)
            flagged = np.flatnonzero(ets.nu_ > 0)
            row = {
                "problem": f"{pair[0]} vs {pair[1]}", "split": split, "assignment": assignment, "k": int(k),
                "n_teachers": n_present, "flipped": float(np.mean(y_bad != ytr)), "lam": lam,
                "e1": e1, "e2": e2,
                "e3_ets": _error(ets, Xte, yte), "e3_sgd": _error(sgd, Xte, yte),
                "evil_flagged": int(np.isin(flagged, evil).sum()),
                "good_flagged": int((~np.isin(flagged, evil)).sum()),
                "ets_converged": bool(ets.converged_), "svm_converged": bool(svm.converged_ and clean.converged_),
                "ets_rel_gap": float(ets.duality_gap_ / ets.objective_),
                "n_train": int(Xtr.shape[0]), "n_test": int(Xte.shape[0]),
            }
            row["ratio_ets"] = damage_ratio(e1, e2, row["e3_ets"])
            row["ratio_sgd"] = damage_ratio(e1, e2, row["e3_sgd"])
            out.append(row)
    for r in out:
        r["seconds"] = (time.perf_counter() - t0) / len(out)
    return out


def choose_lambda(Xp, yp, lams, n_train, rng) -> tuple[float, dict]:
    """λ with the lowest clean validation error (SVM on a training subsample, validation = the other half)."""
    import warnings

    from ... import LinearSVM

    train, val = _split(Xp.shape[0], n_train, rng)
    errs = {}
    for lam in lams:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            svm = LinearSVM(lam=lam, tol=1e-5).fit(Xp[train], yp[train])
        errs[float(lam)] = _error(svm, Xp[val], yp[val])
    best = min(errs, key=lambda v: (errs[v], -v))  # ties: the larger λ (the simpler model)
    return best, errs


def _plan_hash(plan: dict) -> str:
    """Hash of what the main tasks depend on (the sensitivity runs are stored separately)."""
    main = {k: v for k, v in plan.items() if k != "sensitivity"}
    return hashlib.sha256(json.dumps(main, sort_keys=True, default=str).encode()).hexdigest()[:12]


def run_experiments(plan: dict, data_dir, results_dir: Path, jobs: int = 1, progress: Any = True):
    """All (problem, split) tasks; each task's rows are stored as JSON under ``results_dir`` (a rerun
    with the same plan reuses them). Returns (results DataFrame, λ table, seconds)."""
    from ..backends import make_backend
    from ..runner import _Bars
    from ..store import atomic_write_bytes

    ddir = None if data_dir is None else str(data_dir)
    X, y = _pool(json.dumps(plan["dataset"], sort_keys=True), ddir)
    folder = Path(results_dir) / f"tasks-{_plan_hash(plan)}"
    folder.mkdir(parents=True, exist_ok=True)
    lam_rows, tasks = [], []
    t0 = time.perf_counter()
    for p, pair in enumerate(problems(plan["dataset"]["classes"])):
        rows_idx = _problem_rows(y, pair)
        Xp, yp = X[rows_idx], np.where(np.asarray(y)[rows_idx] == pair[1], 1, -1)
        meta_path = folder / f"problem-{p}.json"
        if meta_path.is_file():
            meta = json.loads(meta_path.read_text())
        else:
            rng = np.random.default_rng(np.random.SeedSequence([plan["seed"], p, 10**6]))
            lam, errs = choose_lambda(Xp, yp, plan["lams"], plan["n_train"], rng)
            topics = _topics(Xp, plan["n_topics"], seed=int(rng.integers(2**31 - 1)))
            meta = {"lam": lam, "errs": {str(k): v for k, v in errs.items()}, "topics": topics.tolist()}
            atomic_write_bytes(meta_path, json.dumps(meta).encode())
        sizes = np.bincount(meta["topics"])
        lam_rows.append({"problem": f"{pair[0]} vs {pair[1]}", "examples": int(rows_idx.size),
                         **{f"val. error λ={k}": v for k, v in meta["errs"].items()}, "chosen λ": meta["lam"],
                         "topics": int(sizes.size), "topic sizes (min–max)": f"{sizes.min()}–{sizes.max()}"})
        for s in range(plan["n_splits"]):
            tasks.append({"plan": plan, "pair": list(pair), "problem_index": p, "split": s, "lam": meta["lam"],
                          "topics": meta["topics"], "data_dir": ddir, "path": str(folder / f"p{p}-s{s}.json")})
    # split by split across the problems, so that a stopped run has whole splits of every problem
    todo = sorted((t for t in tasks if not Path(t["path"]).is_file()), key=lambda t: (t["split"], t["problem_index"]))
    with make_backend(jobs) as backend, _Bars(progress) as bars:
        bar = bars.add(f"dekel2009 ({plan['dataset']['label']})", total=len(tasks), completed=len(tasks) - len(todo))
        for rows, path in backend.imap_unordered(_run_and_tag, todo):
            atomic_write_bytes(Path(path), json.dumps(rows).encode())
            bars.advance(bar)
    rows = []
    for t in tasks:
        rows.extend(json.loads(Path(t["path"]).read_text()))
    df = pd.DataFrame(rows)
    df.to_parquet(Path(results_dir) / "results.parquet", index=False)
    return df, pd.DataFrame(lam_rows), time.perf_counter() - t0


def _run_and_tag(task: dict):
    return run_split(task), task["path"]


# ------------------------------------------------------------ sensitivity
def sensitivity_split(task: dict) -> list[dict]:
    """One split of the first problem: EvilTeacherSVM at the largest k with (a) the main setting,
    (b) the whole training half (larger teachers), (c) the main training size with ε scaled so that
    the slack per teacher ε/√|S_t| equals (b)'s; and, on every problem, plain Pegasos (TeacherSGD
    with eps=None, the same epochs) against the exact SVM on the clean labels."""
    import warnings

    from ... import EvilTeacherSVM, LinearSVM, TeacherSGD
    from ...datasets.teachers import flip_evil, random_teachers
    from ...metrics import damage_ratio

    plan, split = task["plan"], task["split"]
    X, y = _pool(json.dumps(plan["dataset"], sort_keys=True), task["data_dir"])
    lam, tol, n_t = task["lams"], plan["tol"], plan["n_teachers"]
    out = []
    for p, pair in enumerate(problems(plan["dataset"]["classes"])):
        rows_idx = _problem_rows(y, pair)
        Xp, yp = X[rows_idx], np.where(np.asarray(y)[rows_idx] == pair[1], 1, -1)
        rng = np.random.default_rng(np.random.SeedSequence([plan["seed"], p, split, 7]))
        train_all, test = _split(Xp.shape[0], None, rng)
        train = train_all if plan["n_train"] is None else train_all[: plan["n_train"]]
        seeds = iter(rng.integers(2**31 - 1, size=1000).tolist())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            svm = LinearSVM(lam=lam[p], tol=tol).fit(Xp[train], yp[train])
            peg = TeacherSGD(lam=lam[p], eps=None, n_epochs=plan["sgd_epochs"], seed=next(seeds)).fit(
                Xp[train], yp[train])
        out.append({"kind": "pegasos", "problem": f"{pair[0]} vs {pair[1]}", "split": split,
                    "e1": _error(svm, Xp[test], yp[test]), "e1_pegasos": _error(peg, Xp[test], yp[test])})
        if p != 0:
            continue
        eps0 = plan["eps"]
        if train.size < train_all.size:  # the main setting subsamples: compare with the whole half
            small, n_small = train, train.size
            settings = [(f"main: {n_small} training examples, ε = {eps0:g}", small, eps0),
                        (f"whole training half: {train_all.size} examples, ε = {eps0:g}", train_all, eps0)]
        else:  # the main setting is the whole half: compare with a subsample of n_small
            n_small = int(plan["sensitivity"].get("n_small") or 0)
            if not 0 < n_small < train_all.size:
                continue
            small = train_all[:n_small]
            settings = [(f"main: whole training half, {train_all.size} examples, ε = {eps0:g}", train_all, eps0),
                        (f"subsample: {n_small} training examples, ε = {eps0:g}", small, eps0)]
        eps_small = eps0 * np.sqrt(n_small / train_all.size)
        settings.append((f"{n_small} examples, ε = {eps_small:.2f} (the whole half's ε/√|S_t|)", small, eps_small))
        for name, tr, eps in settings:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                e1 = _error(LinearSVM(lam=lam[p], tol=tol).fit(Xp[tr], yp[tr]), Xp[test], yp[test])
            teachers = random_teachers(tr.size, n_t, seed=next(seeds))
            for k in plan["sensitivity"]["k"]:
                y_bad, evil = flip_evil(yp[tr], teachers, n_evil=int(k), seed=next(seeds))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    e2 = _error(LinearSVM(lam=lam[p], tol=tol).fit(Xp[tr], y_bad), Xp[test], yp[test])
                    ets = EvilTeacherSVM(lam=lam[p], eps=eps, tol=tol).fit(Xp[tr], y_bad, teachers=teachers)
                e3 = _error(ets, Xp[test], yp[test])
                flagged = np.flatnonzero(ets.nu_ > 0)
                out.append({"kind": "slack", "problem": f"{pair[0]} vs {pair[1]}", "split": split, "setting": name,
                            "n_train": int(tr.size), "per_teacher": tr.size / n_t, "eps": float(eps),
                            "slack": float(eps / np.sqrt(tr.size / n_t)), "k": int(k), "e1": e1, "e2": e2, "e3": e3,
                            "ratio": damage_ratio(e1, e2, e3), "evil_flagged": int(np.isin(flagged, evil).sum()),
                            "good_flagged": int((~np.isin(flagged, evil)).sum())})
    return out


def run_sensitivity(plan: dict, data_dir, results_dir: Path, lams: list[float], jobs: int = 1) -> pd.DataFrame:
    """The sensitivity runs (see :func:`sensitivity_split`), stored as one JSON (reused by a rerun)."""
    from ..backends import make_backend
    from ..store import atomic_write_bytes

    sens = plan.get("sensitivity")
    if not sens:
        return pd.DataFrame()
    key = hashlib.sha256(json.dumps([plan, lams], sort_keys=True, default=str).encode()).hexdigest()[:12]
    path = Path(results_dir) / f"sensitivity-{key}.json"
    if path.is_file():
        return pd.DataFrame(json.loads(path.read_text()))
    ddir = None if data_dir is None else str(data_dir)
    tasks = [{"plan": plan, "split": s, "lams": lams, "data_dir": ddir} for s in range(sens["n_splits"])]
    rows = []
    with make_backend(jobs) as backend:
        for r in backend.imap_unordered(sensitivity_split, tasks):
            rows.extend(r)
    rows.sort(key=lambda r: (r["kind"], r["problem"], r["split"]))  # stable: settings keep their order
    atomic_write_bytes(path, json.dumps(rows).encode())
    return pd.DataFrame(rows)


def sensitivity_tables(sens: pd.DataFrame) -> dict[str, pd.DataFrame]:
    if sens.empty:
        return {}
    out = {}
    sl = sens[sens["kind"] == "slack"]
    if not sl.empty:
        out["EvilTeacherSVM on the first problem at the largest k: training size and ε (test errors, means)"] = \
            _slack_table(sl)
    pg = sens[sens["kind"] == "pegasos"].groupby("problem").agg(
        splits=("split", "nunique"), svm=("e1", "mean"), pegasos=("e1_pegasos", "mean")).reset_index()
    out["Optimisation error of the SGD baseline: clean test error of the exact SVM and of Pegasos with the same "
        "λ and epochs"] = pg.rename(columns={"svm": "exact SVM, clean labels",
                                             "pegasos": "Pegasos (TeacherSGD, eps=None), clean"})
    return out


def _slack_table(sl: pd.DataFrame) -> pd.DataFrame:
    slack = sl.groupby(["setting", "k"], sort=False).agg(
        splits=("split", "nunique"), per_teacher=("per_teacher", "first"), eps=("eps", "first"),
        slack=("slack", "first"), e1=("e1", "mean"), e2=("e2", "mean"), e3=("e3", "mean"),
        median_ratio=("ratio", "median"), evil_flagged=("evil_flagged", "mean"),
        good_flagged=("good_flagged", "mean")).reset_index()
    return slack.rename(columns={"per_teacher": "examples per teacher", "slack": "ε/√|S_t|",
                                 "median_ratio": "median damage ratio", "evil_flagged": "evil flagged (ν > 0)",
                                 "good_flagged": "good flagged"})


# --------------------------------------------------------------- summaries
def ratio_table(df: pd.DataFrame, assignment: str = "random") -> pd.DataFrame:
    """Median [quartiles] of the damage ratio per (problem, k), both learners, with mean e1, e2."""
    out = []
    for (prob, k), g in df[df["assignment"] == assignment].groupby(["problem", "k"], sort=True):
        def q(col):
            v = g[col].dropna().to_numpy(float)
            return (np.median(v), np.quantile(v, 0.25), np.quantile(v, 0.75)) if v.size else (np.nan,) * 3
        me, le, he = q("ratio_ets")
        ms, ls, hs = q("ratio_sgd")
        out.append({"problem": prob, "k": int(k), "runs": len(g), "flipped": float(g["flipped"].mean()),
                    "e1": float(g["e1"].mean()), "e2": float(g["e2"].mean()),
                    "e3 EvilTeacherSVM": float(g["e3_ets"].mean()), "e3 TeacherSGD": float(g["e3_sgd"].mean()),
                    "ratio EvilTeacherSVM: median": me, "[q1, q3]": f"[{le:.2f}, {he:.2f}]",
                    "ratio TeacherSGD: median": ms, "[q1, q3] ": f"[{ls:.2f}, {hs:.2f}]",
                    "e2 ≤ e1 (runs)": int((g["e2"] <= g["e1"]).sum()),
                    "evil flagged (of k)": float(g["evil_flagged"].mean()),
                    "good flagged": float(g["good_flagged"].mean())})
    return pd.DataFrame(out)


def _medians(df: pd.DataFrame, col: str, assignment: str = "random") -> pd.DataFrame:
    """problem × k table of median damage ratios."""
    d = df[df["assignment"] == assignment]
    return d.groupby(["problem", "k"])[col].median().unstack("k")


def make_claims(df: pd.DataFrame, plan: dict, quick: bool) -> list[Claim]:
    ks = sorted(int(k) for k in df.loc[df["assignment"] == "random", "k"].unique())
    n_t = plan["n_teachers"]
    lo_k = [k for k in ks if 0.2 <= k / n_t <= 0.4]
    k_low = min(ks, key=lambda k: abs(k / n_t - 0.10))
    k_high = max(ks)
    ets, sgd = _medians(df, "ratio_ets"), _medians(df, "ratio_sgd")
    probs = list(ets.index)
    n = len(probs)
    claims = []

    # acceptance 3 (SPEC/issue 8): median ratio of EvilTeacherSVM below 1 for 20-40 % evil teachers
    worst = ets[lo_k].max(axis=1)
    ok = bool((worst < 1).all())
    claims.append(Claim(
        f"Fig. 1: EvilTeacherSVM's median damage ratio is below 1 on every binary problem for 20–40 % evil "
        f"teachers (k = {lo_k[0]}…{lo_k[-1]} of {n_t})",
        "< 1 (\"consistently performs no worse than SVM\")",
        "; ".join(f"{p}: " + "/".join(f"{ets.loc[p, k]:.2f}" for k in lo_k) for p in probs), ok,
        f"median per problem at k = {'/'.join(str(k) for k in lo_k)}; holds if every one is < 1"))
    allk = ets.max(axis=1)
    claims.append(Claim(
        "Fig. 1: EvilTeacherSVM performs no worse than SVM at every k (median damage ratio ≤ 1)", "≤ 1",
        f"{int((allk <= 1).sum())} of {n} problems; largest median {allk.max():.2f}", bool((allk <= 1).all()),
        f"k ∈ {ks}"))
    better = ets[k_high] < ets[k_low]
    claims.append(Claim(
        f"Fig. 1: EvilTeacherSVM's advantage grows with the noise (median ratio at k = {k_high} below that at "
        f"k = {k_low})", "decreasing in k",
        f"{int(better.sum())} of {n} problems; medians k={k_low} → k={k_high}: "
        + ", ".join(f"{ets.loc[p, k_low]:.2f}→{ets.loc[p, k_high]:.2f}" for p in probs),
        bool(better.sum() > n * MAJORITY), "judged: on more than half of the problems"))
    tiny = ets[k_high] <= 0.2
    claims.append(Claim(
        f"Fig. 1: at the highest k, EvilTeacherSVM's excess error is ~20 % of SVM's on three of the 6 problems",
        "median ratio ≤ 0.2 on 3 of 6", f"{int(tiny.sum())} of {n} (k = {k_high}: "
        + ", ".join(f"{ets.loc[p, k_high]:.2f}" for p in probs) + ")",
        bool(tiny.sum() >= min(3, n)), "judged: at least 3 problems (all, with fewer than 3) at ≤ 0.2"))
    # Fig. 2 (TeacherSGD)
    at10 = sgd[k_low]
    claims.append(Claim(
        f"Fig. 2: TeacherSGD with k = {k_low} evil teachers: excess error 60–70 % of SVM's",
        "0.6–0.7", ", ".join(f"{p}: {at10[p]:.2f}" for p in probs),
        bool(((at10 >= 0.5) & (at10 <= 0.8)).all()),
        "median damage ratio per problem; judged: every problem within [0.5, 0.8]"))
    worse = sgd[k_high] > sgd[k_low]
    claims.append(Claim(
        "Fig. 2: TeacherSGD's advantage deteriorates as the number of evil teachers grows",
        "increasing in k", f"{int(worse.sum())} of {n} problems; medians k={k_low} → k={k_high}: "
        + ", ".join(f"{sgd.loc[p, k_low]:.2f}→{sgd.loc[p, k_high]:.2f}" for p in probs),
        bool(worse.sum() > n * MAJORITY), "judged: on more than half of the problems"))
    claims.append(Claim(
        "Sec. 6: the two algorithms behave differently — EvilTeacherSVM improves with more noise, TeacherSGD "
        "is better at low noise", "opposite trends",
        f"EvilTeacherSVM better at k={k_high} than k={k_low} on {int(better.sum())}/{n}; TeacherSGD worse at "
        f"k={k_high} on {int(worse.sum())}/{n}", bool(better.sum() > n * MAJORITY and worse.sum() > n * MAJORITY),
        "both trends above on more than half of the problems"))
    # Fig. 3 (topic teachers, TeacherSGD as in the paper)
    top = df[df["assignment"] == "topic"].dropna(subset=["ratio_sgd"])
    if not top.empty:
        wins = top.assign(win=top["ratio_sgd"] < 1).groupby("problem")["win"].mean()
        claims.append(Claim(
            "Fig. 3 (topic teachers): TeacherSGD beats SVM (ratio < 1) a majority of the time on all but one "
            "problem", "≥ 5 of 6 problems", f"{int((wins > MAJORITY).sum())} of {len(wins)} problems ("
            + ", ".join(f"{p}: {w:.0%}" for p, w in wins.items()) + ")",
            bool((wins > MAJORITY).sum() >= len(wins) - 1), "fraction of runs with ratio < 1, per problem"))
        low = top[top["flipped"] <= 0.2]
        if len(low):
            frac = float((low["ratio_sgd"] <= 0.4).mean())
            claims.append(Claim(
                "Fig. 3: at low to moderate noise TeacherSGD often reaches 40 % of SVM's excess error or better",
                "often ≤ 0.4", f"{frac:.0%} of {len(low)} runs with ≤ 20 % flipped labels have ratio ≤ 0.4",
                bool(frac >= 1 / 3), "judged: 'often' = at least a third of those runs"))
        high = top[top["flipped"] > 0.35]
        if len(high):
            med = float(high["ratio_sgd"].median())
            claims.append(Claim(
                "Fig. 3: beyond 35 % flipped labels TeacherSGD's advantage is no longer noticeable",
                "median ratio ≈ 1 or more", f"median {med:.2f} over {len(high)} runs", bool(med >= 0.9),
                "judged: median ratio ≥ 0.9"))
        else:
            claims.append(Claim("Fig. 3: beyond 35 % flipped labels TeacherSGD's advantage is no longer noticeable",
                                "median ratio ≈ 1 or more", "no run flipped more than 35 %", None, ""))
    return claims


# ---------------------------------------------------------------- figures
def _new_fig(n_panels: int, width: float = 4.2, height: float = 3.4):
    from matplotlib.figure import Figure

    cols = min(3, n_panels)
    rows = -(-n_panels // cols)
    fig = Figure(figsize=(width * cols, height * rows), layout="constrained")
    return fig, [fig.add_subplot(rows, cols, i + 1) for i in range(n_panels)]


YLIM = (-1.0, 3.0)


def fig_ratio_vs_k(df: pd.DataFrame, col: str, title: str, n_teachers: int):
    d = df[df["assignment"] == "random"]
    probs = sorted(d["problem"].unique())
    fig, axes = _new_fig(len(probs))
    for ax, p in zip(axes, probs):
        g = d[d["problem"] == p]
        ks = sorted(g["k"].unique())
        data = [g.loc[g["k"] == k, col].dropna().clip(*YLIM).to_numpy() for k in ks]
        ax.boxplot(data, positions=range(len(ks)), widths=0.6, showfliers=True,
                   flierprops={"markersize": 2, "alpha": 0.5})
        ax.set_xticks(range(len(ks)), [f"{k / n_teachers:.0%}" for k in ks], fontsize=7)
        ax.axhline(1.0, color="tab:red", lw=0.8, ls="--")
        ax.axhline(0.0, color="grey", lw=0.5)
        ax.set_ylim(*YLIM)
        ax.set_title(p, fontsize=9)
        ax.set_xlabel("evil teachers (k / teachers)", fontsize=8)
        ax.set_ylabel("damage ratio (e3−e1)/(e2−e1)", fontsize=8)
    fig.suptitle(title + f" (clipped to {list(YLIM)})", fontsize=10)
    return fig


def fig_topic(df: pd.DataFrame):
    d = df[df["assignment"] == "topic"]
    probs = sorted(d["problem"].unique())
    fig, axes = _new_fig(len(probs))
    for ax, p in zip(axes, probs):
        g = d[d["problem"] == p]
        ax.scatter(g["flipped"], g["ratio_sgd"].clip(*YLIM), marker="+", s=14, lw=0.7, label="TeacherSGD")
        ax.scatter(g["flipped"], g["ratio_ets"].clip(*YLIM), marker="x", s=10, lw=0.6, alpha=0.6,
                   label="EvilTeacherSVM")
        ax.axhline(1.0, color="tab:red", lw=0.8, ls="--")
        ax.axhline(0.0, color="grey", lw=0.5)
        ax.set_ylim(*YLIM)
        ax.set_title(p, fontsize=9)
        ax.set_xlabel("fraction of flipped labels", fontsize=8)
        ax.set_ylabel("damage ratio", fontsize=8)
        ax.legend(fontsize=7)
    fig.suptitle(f"Figure 3: topic teachers, damage ratio against the flipped fraction (clipped to {list(YLIM)})",
                 fontsize=10)
    return fig


# ------------------------------------------------------------------ recipe
def _plan(quick: bool) -> dict:
    return json.loads(json.dumps(QUICK_PLAN if quick else FULL_PLAN))


def run(plan: dict, *, quick: bool, data_dir, out_dir: Path, jobs: int = 1, progress: Any = True) -> Path:
    """Run ``plan`` (:data:`QUICK_PLAN`, :data:`FULL_PLAN`, :data:`RCV1_PLAN`) into ``out_dir``; write the report."""
    from ...report import Section, write_report

    out_dir = Path(out_dir)
    df, lam_tab, seconds = run_experiments(plan, data_dir, out_dir / "results", jobs=jobs, progress=progress)
    t_sens = time.perf_counter()
    sens = run_sensitivity(plan, data_dir, out_dir / "results", [float(v) for v in lam_tab["chosen λ"]], jobs=jobs)
    t_sens = time.perf_counter() - t_sens
    ds = plan["dataset"]
    n_t = plan["n_teachers"]
    claims = make_claims(df, plan, quick)
    n_judged = sum(c.holds is not None for c in claims)
    n_hold = sum(bool(c.holds) for c in claims)
    rand = ratio_table(df, "random")
    topic = df[df["assignment"] == "topic"]
    nonconv = int((~df["ets_converged"]).sum() + (~df["svm_converged"]).sum())
    n_train = int(df["n_train"].iloc[0])
    n_test = int(df["n_test"].median())
    e2_le = int((df["e2"] <= df["e1"]).sum())
    setup = [
        f"Mode: **{'quick' if quick else 'full'}**. Data: **{ds['label']}**, classes {ds['classes']} "
        f"({len(problems(ds['classes']))} binary problems, every pair; the second class of a pair is +1)"
        + (", rows scaled to unit L2 norm" if ds.get("normalize") else "") + ". "
        f"{plan['n_splits']} random splits per problem into equal training and test halves"
        + (f"; the training half is **subsampled to {n_train:,} examples** ({n_train // n_t} per teacher) to keep "
           "the run short, the test half is used whole" if plan.get("n_train") else "")
        + f" (median test size {n_test:,}).",
        f"Teachers: random assignment into {n_t} equal teachers; k ∈ {plan['evil']} of them evil (flip all "
        f"their labels). Topic assignment: each problem's examples clustered into {plan['n_topics']} k-means "
        "clusters (one topic teacher each, sizes unequal; the paper used RCV1's low-level categories); the "
        "same k evil topics, damage ratio against the fraction of labels that ends up flipped.",
        f"SVM: LinearSVM, the paper's eq. (1) without bias; λ chosen per problem from {plan['lams']} on a "
        "separate validation split (lowest clean error; see the table below). EvilTeacherSVM: the same λ, "
        f"ε = {plan['eps']:g} (the paper's value); both solved to a certified relative duality gap of "
        f"{plan['tol']:g}. TeacherSGD: Pegasos with the per-teacher cap, the same λ and ε, "
        f"{plan['sgd_epochs']} epochs, last iterate.",
        "Damage ratio (e3 − e1)/(e2 − e1): e1 = SVM on the clean training labels, e2 = SVM on the corrupted "
        "labels, e3 = the robust learner on the corrupted labels; all errors on the clean test half. It is "
        f"undefined when e2 = e1 (left out) and meaningless when e2 < e1: {e2_le} of {len(df)} runs had "
        "e2 ≤ e1 (mostly at small k), which makes single ratios noisy; we report medians and quartiles.",
        f"{len(df):,} noisy runs; {df['seconds'].sum():,.0f} CPU-s summed over the tasks (this invocation: "
        f"{seconds:,.0f} s wall with {jobs} job(s), results of earlier invocations reused); "
        + (f"**{nonconv} fits did not reach the gap**." if nonconv else "every SVM fit reached its certified gap."),
    ]
    data_note = [
        "**Not reproduced on the paper's data.** The paper's RCV1 set-up (four top categories CCAT/ECAT/GCAT/"
        "MCAT, 99 low-level categories as topic teachers) is not available here. This run uses "
        f"{ds['label']} (dense pixels, not sparse TF-IDF) and k-means topics, with far fewer training examples "
        f"per teacher ({n_train // n_t} against the paper's thousands: 800k RCV1 articles): Proposition 1's condition "
        "ε > |S^e|√|S_t|/m is easier to meet with small teachers, but the constraint's slack ε/(m√|S_t|) is "
        "looser relative to the average α, so absolute numbers are not expected to match the paper.",
        "Users with LIBSVM's `rcv1.binary` (one binary problem, CCAT+ECAT vs GCAT+MCAT) can run "
        "`noisyfeedback.experiments.papers.dekel2009.run(RCV1_PLAN, ...)`.",
    ]
    if quick:
        data_note.append("Quick mode runs on scikit-learn's digits (≈180 training examples per problem, "
                         f"{n_t} teachers, {plan['n_splits']} splits): it shows the pipeline works; its numbers "
                         "are not a reproduction. Run without --quick (with --data-dir holding MNIST).")
    findings = [f"{n_hold} of {n_judged} judged claims hold in this run. A claim that does not hold is a finding "
                "of this reproduction; nothing was tuned to match the paper."]
    rnd = df[df["assignment"] == "random"]
    by_k = rnd.groupby("k").agg(ets=("ratio_ets", "median"), sgd=("ratio_sgd", "median"),
                                none=("evil_flagged", lambda v: float(np.mean(v == 0))))
    findings.append("Median damage ratio over all problems and splits, by k (random teachers): EvilTeacherSVM "
                    + ", ".join(f"k={k}: {r.ets:.2f}" for k, r in by_k.iterrows()) + "; TeacherSGD "
                    + ", ".join(f"k={k}: {r.sgd:.2f}" for k, r in by_k.iterrows()) + ".")
    k_max = int(by_k.index.max())
    none_share = float(by_k.loc[k_max, "none"])
    slack = (f"the constraint (3) allows each teacher's mean α to exceed the overall mean by ε/(m√|S_t|), i.e. by "
             f"ε/√|S_t| = {plan['eps'] / np.sqrt(n_train / n_t):.2f} in units of the largest α (1/m)")
    if none_share >= MAJORITY:
        findings.append(
            f"At k = {k_max} EvilTeacherSVM flagged no teacher (every ν = 0, i.e. it returned the plain SVM, ratio "
            f"exactly 1) in {none_share:.0%} of the runs: {slack}; with this many flipped labels the plain SVM's α "
            "are large everywhere, so no teacher exceeds that slack. The slack shrinks with the teacher size; see "
            "the sensitivity section.")
    else:
        flagged = float(rnd.loc[rnd["k"] == k_max, "evil_flagged"].mean())
        findings.append(
            f"At k = {k_max} EvilTeacherSVM flagged on average {flagged:.1f} of the {k_max} evil teachers (ν > 0) "
            f"and no teacher in {none_share:.0%} of the runs; {slack}. With smaller teachers the slack is looser "
            "and the constraint stops binding at the largest k; see the sensitivity section.")
    if not sens.empty:
        sl = sens[sens["kind"] == "slack"] if "setting" in sens.columns else sens.iloc[:0]
        if not sl.empty:
            top = sl[sl["k"] == sl["k"].max()].groupby("setting", sort=False).agg(
                r=("ratio", "median"), f=("evil_flagged", "mean"))
            findings.append(f"Sensitivity (first problem, k = {int(sl['k'].max())}): "
                            + "; ".join(f"{name}: median ratio {v.r:.2f}, {v.f:.1f} evil teachers flagged"
                                        for name, v in top.iterrows()) + ".")
        pg = sens[sens["kind"] == "pegasos"]
        findings.append(f"TeacherSGD's ratio also carries Pegasos' own optimisation error: on clean labels, "
                        f"{plan['sgd_epochs']} epochs of Pegasos err {pg['e1_pegasos'].mean():.4f} on average "
                        f"against the exact SVM's {pg['e1'].mean():.4f} — comparable to e2 − e1 at small k, "
                        "which inflates TeacherSGD's ratio there (the paper compares to the SVM too).")
    ets_m, sgd_m = _medians(df, "ratio_ets"), _medians(df, "ratio_sgd")
    med_tab = pd.concat({"EvilTeacherSVM": ets_m, "TeacherSGD": sgd_m}, names=["learner"]).reset_index()
    med_tab.columns = [c if isinstance(c, str) else f"k={c}" for c in med_tab.columns]
    sections = [
        Section("Set-up", text=setup, tables={"λ per problem (clean validation error) and topic teachers": lam_tab}),
        Section("Data: what could not be reproduced", text=data_note),
        Section("Paper's claims vs our measurements", text=findings, tables={"Claims": claims_table(claims)}),
        Section("Figures 1 and 2: random assignment",
                figures={"Figure 1: EvilTeacherSVM vs SVM, damage ratio against the fraction of evil teachers":
                         fig_ratio_vs_k(df, "ratio_ets", "Figure 1: EvilTeacherSVM (Sec. 3) vs SVM", n_t),
                         "Figure 2: TeacherSGD vs SVM, damage ratio against the fraction of evil teachers":
                         fig_ratio_vs_k(df, "ratio_sgd", "Figure 2: TeacherSGD (Sec. 6) vs SVM", n_t)},
                tables={"Median damage ratio per problem and k (random assignment)": med_tab,
                        "Per problem and k: mean errors, damage-ratio median and quartiles, teachers with ν > 0 "
                        "(EvilTeacherSVM)": rand}),
        Section("Figure 3: topic teachers",
                text=[f"{len(topic)} runs; fraction of flipped labels from {topic['flipped'].min():.2f} to "
                      f"{topic['flipped'].max():.2f}." if len(topic) else "No topic runs."],
                figures={"Figure 3: damage ratio against the fraction of flipped labels (topic teachers)":
                         fig_topic(df)} if len(topic) else {},
                tables={"Median damage ratio per problem and k (topic assignment)":
                        pd.concat({"EvilTeacherSVM": _medians(df, "ratio_ets", "topic"),
                                   "TeacherSGD": _medians(df, "ratio_sgd", "topic")},
                                  names=["learner"]).reset_index().rename(columns=lambda c: c if isinstance(c, str)
                                                                         else f"k={c}")} if len(topic) else {}),
        Section("Sensitivity: the slack per teacher, and the SGD baseline's own error",
                text=[f"Extra runs, not in the paper ({t_sens:.0f} s): on the first problem, the largest k's with "
                      "the main setting, with the whole training half (larger teachers), and with the main "
                      "training size but ε scaled down to the whole half's slack ε/√|S_t|; and plain Pegasos "
                      "against the exact SVM on clean labels on every problem."],
                tables=sensitivity_tables(sens)),
        Section("Results tables", text=[
            f"One row per (problem, split, assignment, k) in `{os.path.relpath(out_dir / 'results', out_dir)}"
            "/results.parquet`; the per-task JSON files next to it let a rerun with the same plan resume."]),
    ]
    return write_report(out_dir, TITLE + (" (quick)" if quick else ""), sections,
                        intro="Labels come from many teachers, some of whom flip every label. The paper's SVM "
                              "limits each teacher's share of the dual weight (EvilTeacherSVM); its Section 6 "
                              "heuristic caps the SGD steps per teacher (TeacherSGD). This report reruns the "
                              "paper's Figures 1–3 and puts its statements next to our numbers.")


@register_recipe("dekel2009", title=TITLE,
                 description="Figs. 1–3: damage ratio of EvilTeacherSVM and TeacherSGD vs SVM, random and topic "
                             "teachers, 6 binary problems.")
def dekel2009(quick: bool, data_dir, out_dir: Path, jobs: int, progress) -> Path:
    """Dekel & Shamir (2009): Figures 1–3."""
    return run(_plan(quick), quick=quick, data_dir=data_dir, out_dir=Path(out_dir), jobs=jobs, progress=progress)
