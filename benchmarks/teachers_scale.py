"""Scale check of EvilTeacherSVM (SPEC §4.12, issue 8): a sparse problem with
m = 100 000 rows, d = 20 000 features (0.5 % dense), 100 teachers (30 evil), solved
to a relative duality gap of 1e-6. Target: under 2 minutes on the 2-core machine.

Data: every row has 100 non-zeros at uniformly drawn feature indices with
uniform(0, 1) values, normalised to unit L2 norm (a TF-IDF-like bag of words);
labels sign(⟨w*, x⟩) for a Gaussian w*; rows assigned to 100 teachers at random
and the labels of 30 of them flipped (Dekel & Shamir's protocol). λ = 1e-5 is
liblinear's default C = 1 at this m (C = 1/(λm)); ``--lam`` takes a list.

Usage: python benchmarks/teachers_scale.py [--lam 1e-5 1e-6] [--n-samples 100000] ...
Prints one Markdown table row per (learner, λ): time, passes, gap, converged.
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


def main(argv=None) -> list[dict]:
    from noisyfeedback.learners.teachers import EvilTeacherSVM, LinearSVM

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

    t0 = time.perf_counter()
    X, y, y_noisy, t, evil = sparse_problem(args.n_samples, args.n_features, args.density,
                                            args.n_teachers, args.n_evil, args.seed)
    gen = time.perf_counter() - t0
    print(f"data: m={X.shape[0]} d={X.shape[1]} nnz={X.nnz} ({X.nnz / X.shape[0] / X.shape[1]:.2%} dense), "
          f"{args.n_teachers} teachers, {args.n_evil} evil, generated in {gen:.1f} s")
    # compile the kernels outside the timing (numba caches them on disk after the first run)
    EvilTeacherSVM(lam=1e-2).fit(X[:200], y_noisy[:200], teachers=t[:200] % 3)

    rows = []
    print("| learner | λ | ε | time (s) | passes | objective | duality gap (rel.) | converged | evil flagged (ν>0) | good flagged |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for lam in args.lam:
        learners = [EvilTeacherSVM(lam=lam, eps=args.eps, tol=args.tol, max_iter=100_000)]
        if args.baseline:
            learners.append(LinearSVM(lam=lam, tol=args.tol, max_iter=100_000))
        for learner in learners:
            t0 = time.perf_counter()
            learner.fit(X, y_noisy, teachers=t)
            el = time.perf_counter() - t0
            rel = learner.duality_gap_ / learner.objective_
            if hasattr(learner, "nu_"):
                flagged = set(np.flatnonzero(learner.nu_ > 0).tolist())
                ev = len(flagged & set(evil.tolist()))
                gd = len(flagged) - ev
            else:
                ev = gd = "-"
            row = dict(learner=type(learner).__name__, lam=lam, eps=args.eps, time_s=el, passes=learner.n_iter_,
                       objective=learner.objective_, rel_gap=rel, converged=learner.converged_)
            rows.append(row)
            eps_txt = args.eps if hasattr(learner, "nu_") else "-"
            print(f"| {row['learner']} | {lam:g} | {eps_txt} | {el:.1f} | {learner.n_iter_} | "
                  f"{learner.objective_:.8f} | {rel:.2e} | {learner.converged_} | {ev}/{len(evil)} | {gd} |", flush=True)
    return rows


if __name__ == "__main__":
    main()
