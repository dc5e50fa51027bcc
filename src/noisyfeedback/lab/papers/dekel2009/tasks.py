"""dekel2009's task kinds (pure functions of a task): λ per problem, one (problem, split), sensitivity."""

from __future__ import annotations

import itertools
import json
import time
from functools import lru_cache
from typing import Any

import numpy as np

from ...engine import task_kind


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
    from ....datasets.teachers import topic_teachers

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


@task_kind("dekel2009.split")
def run_split(task: dict) -> list[dict]:
    """One (problem, split): e1, and for each assignment and k: e2 (SVM), e3 (EvilTeacherSVM, TeacherSGD)."""
    import warnings

    from .... import EvilTeacherSVM, LinearSVM, TeacherSGD
    from ....datasets.teachers import flip_evil, random_teachers
    from ....metrics import damage_ratio

    plan, pair, split = task["plan"], tuple(task["pair"]), task["split"]
    X, y = _pool(json.dumps(plan["dataset"], sort_keys=True), _data_dir(task))
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

    from .... import LinearSVM

    train, val = _split(Xp.shape[0], n_train, rng)
    errs = {}
    for lam in lams:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            svm = LinearSVM(lam=lam, tol=1e-5).fit(Xp[train], yp[train])
        errs[float(lam)] = _error(svm, Xp[val], yp[val])
    best = min(errs, key=lambda v: (errs[v], -v))  # ties: the larger λ (the simpler model)
    return best, errs


@task_kind("dekel2009.problem")
def choose_problem(task: dict) -> dict:
    """One binary problem: λ with the lowest clean validation error, and the problem's topic teachers."""
    X, y = _pool(json.dumps(task["dataset"], sort_keys=True), _data_dir(task))
    pair, p = tuple(task["pair"]), task["problem_index"]
    rows_idx = _problem_rows(y, pair)
    Xp, yp = X[rows_idx], np.where(np.asarray(y)[rows_idx] == pair[1], 1, -1)
    rng = np.random.default_rng(np.random.SeedSequence([task["seed"], p, 10**6]))
    lam, errs = choose_lambda(Xp, yp, task["lams"], task["n_train"], rng)
    topics = _topics(Xp, task["n_topics"], seed=int(rng.integers(2**31 - 1)))
    return {"lam": lam, "errs": {str(k): v for k, v in errs.items()}, "topics": topics.tolist(),
            "examples": int(rows_idx.size)}


def _data_dir(task: dict) -> str | None:
    return task.get("_data_dir", task.get("data_dir"))


# ------------------------------------------------------------ sensitivity
@task_kind("dekel2009.sensitivity")
def sensitivity_split(task: dict) -> list[dict]:
    """One split of the first problem: EvilTeacherSVM at the largest k with (a) the main setting,
    (b) the whole training half (larger teachers), (c) the main training size with ε scaled so that
    the slack per teacher ε/√|S_t| equals (b)'s; and, on every problem, plain Pegasos (TeacherSGD
    with eps=None, the same epochs) against the exact SVM on the clean labels."""
    import warnings

    from .... import EvilTeacherSVM, LinearSVM, TeacherSGD
    from ....datasets.teachers import flip_evil, random_teachers
    from ....metrics import damage_ratio

    plan, split = task["plan"], task["split"]
    X, y = _pool(json.dumps(plan["dataset"], sort_keys=True), _data_dir(task))
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


