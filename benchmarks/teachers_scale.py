"""Scale check of EvilTeacherSVM (docs/algorithms.md §4.12): a sparse problem with
m = 100 000 rows, d = 20 000 features (0.5 % dense), 100 teachers (30 evil), solved
to a relative duality gap of 1e-6. Target: under 2 minutes on the 2-core machine.

Data: every row has 100 non-zeros at uniformly drawn feature indices with
uniform(0, 1) values, normalised to unit L2 norm (a TF-IDF-like bag of words);
labels sign(⟨w*, x⟩) for a Gaussian w*; rows assigned to 100 teachers at random
and the labels of 30 of them flipped (Dekel & Shamir's protocol). λ = 1e-5 is
liblinear's default C = 1 at this m (C = 1/(λm)).

``run(...)`` returns one dict (time_s, rel_gap, duality_gap, passes, converged, ...)
for ``benchmarks/run.py``; ``python benchmarks/teachers_scale.py [--baseline] ...``
prints a Markdown table row per (learner, λ).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp


def sparse_problem(n_samples, n_features, density, n_teachers, n_evil, seed=0):
    """(X CSR, y_clean, y_noisy, teachers, evil) as described in the module docstring."""
    from noisyfeedback.datasets.teachers import flip_evil, random_teachers

    rng = np.random.default_rng(seed)
    k = max(1, int(round(n_features * density)))
    ind = np.sort(rng.integers(0, n_features, size=(n_samples, k)), axis=1)
    val = rng.random((n_samples, k))
    val /= np.linalg.norm(val, axis=1, keepdims=True)
    X = sp.csr_matrix((val.ravel(), ind.ravel(), np.arange(0, n_samples * k + 1, k, dtype=np.int64)),
                      shape=(n_samples, n_features))
    X.sum_duplicates()
    w_star = rng.normal(size=n_features)
    y = np.where(X @ w_star > 0, 1, -1)
    t = random_teachers(n_samples, n_teachers, seed=seed)
    y_noisy, evil = flip_evil(y, t, n_evil=n_evil, seed=seed)
    return X, y, y_noisy, t, evil


def _warm_up() -> None:
    """Compile the kernels outside the timing (numba caches them on disk after the first run)."""
    from noisyfeedback.learners.teachers import EvilTeacherSVM, LinearSVM

    X, _, y, t, _ = sparse_problem(300, 50, 0.1, 3, 1)
    EvilTeacherSVM(lam=1e-2).fit(X, y, teachers=t)
    LinearSVM(lam=1e-2).fit(X, y)


def _fit_row(learner, X, y, t, evil) -> dict:
    t0 = time.perf_counter()
    learner.fit(X, y, teachers=t)
    elapsed = time.perf_counter() - t0
    row = dict(learner=type(learner).__name__, lam=learner.lam, time_s=elapsed, passes=int(learner.n_iter_),
               objective=float(learner.objective_), duality_gap=float(learner.duality_gap_),
               rel_gap=float(learner.duality_gap_ / learner.objective_), tol=float(learner.tol),
               converged=bool(learner.converged_))
    if hasattr(learner, "nu_"):
        flagged = set(np.flatnonzero(learner.nu_ > 0).tolist())
        row.update(eps=learner.eps, evil_flagged=len(flagged & set(evil.tolist())), n_evil=len(evil),
                   good_flagged=len(flagged - set(evil.tolist())))
    return row


def run(n_samples: int = 100_000, n_features: int = 20_000, density: float = 0.005, n_teachers: int = 100,
        n_evil: int = 30, lam: float = 1e-5, eps: float = 1.0, tol: float = 1e-6, seed: int = 0,
        baseline: bool = False) -> dict:
    """Time EvilTeacherSVM on the sparse problem; returns a dict with time_s (the fit alone,
    JIT compilation excluded), passes, objective, duality_gap, rel_gap, tol, converged,
    evil_flagged/good_flagged (teachers with ν > 0), the problem's m, d, nnz and, with
    ``baseline``, ``baseline`` = the same dict for LinearSVM."""
    from noisyfeedback.learners.teachers import EvilTeacherSVM, LinearSVM

    X, _, y_noisy, t, evil = sparse_problem(n_samples, n_features, density, n_teachers, n_evil, seed)
    _warm_up()
    out = _fit_row(EvilTeacherSVM(lam=lam, eps=eps, tol=tol, max_iter=100_000, seed=seed), X, y_noisy, t, evil)
    out.update(workload=f"EvilTeacherSVM, sparse {X.shape[0]} x {X.shape[1]} ({X.nnz / X.shape[0] / X.shape[1]:.2%} "
                        f"dense), {n_teachers} teachers ({n_evil} evil)",
               m=X.shape[0], d=X.shape[1], nnz=int(X.nnz), n_teachers=n_teachers)
    if baseline:
        out["baseline"] = _fit_row(LinearSVM(lam=lam, tol=tol, max_iter=100_000, seed=seed), X, y_noisy, t, evil)
    return out


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-samples", type=int, default=100_000)
    ap.add_argument("--n-features", type=int, default=20_000)
    ap.add_argument("--density", type=float, default=0.005)
    ap.add_argument("--n-teachers", type=int, default=100)
    ap.add_argument("--n-evil", type=int, default=30)
    ap.add_argument("--lam", type=float, nargs="+", default=[1e-5])
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--baseline", action="store_true", help="also time LinearSVM")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    rows = []
    print("| learner | λ | ε | time (s) | passes | objective | duality gap (rel.) | tol | converged "
          "| evil flagged (ν>0) | good flagged |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for lam in args.lam:
        res = run(args.n_samples, args.n_features, args.density, args.n_teachers, args.n_evil, lam, args.eps,
                  args.tol, args.seed, args.baseline)
        for row in [res] + ([res["baseline"]] if "baseline" in res else []):
            rows.append(row)
            flagged = (f"{row['evil_flagged']}/{row['n_evil']} | {row['good_flagged']}" if "eps" in row else "- | -")
            print(f"| {row['learner']} | {lam:g} | {row.get('eps', '-')} | {row['time_s']:.1f} | {row['passes']} | "
                  f"{row['objective']:.8f} | {row['rel_gap']:.2e} | {row['tol']:g} | {row['converged']} | {flagged} |",
                  flush=True)
    print(f"\n{res['workload']}")
    return rows


if __name__ == "__main__":
    main()
