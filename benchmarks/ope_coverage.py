"""Coverage of the off-policy intervals of ``nf.ope.evaluate`` on synthetic logs with a known value.

Logs: contexts uniform on [−1, 1]^3, K = 3 actions, a context-dependent logging policy overlapping a softmax
target policy; clicks either linear in the context (``linear``: the ridge reward model is right) or logistic
(``logistic``: P(click | x, a) = σ(3 xᵀβ_a − 1); the ridge reward model is misspecified), with and without
uniform flips (0.1, 0.2). The true value is a 2,000,000-context Monte-Carlo mean (error about 1e-4).

Reward models: ``"ridge"`` and ``"logistic"`` fitted inside (cross-fitted), and ``array``: a ridge model fitted
on all the rows and passed in as its (n, K) predictions. For every estimator, interval kind, reward model and
setting: the share of ``--reps`` replications whose interval covers the truth (target 0.90–0.98), or "none"
when the estimator returned no interval (its ``note`` says why), and the mean bias in standard errors.

    python benchmarks/ope_coverage.py [--reps 200] [--n 1000] [--intervals normal,bootstrap]
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

import noisyfeedback as nf  # noqa: E402

K, D = 3, 3
B = np.array([[1.0, -0.5, 0.3], [-0.8, 0.6, 0.2], [0.2, 0.9, -0.7]])
W = np.array([[1.5, -1.0, 0.0], [0.0, 1.0, -1.5], [-1.0, 0.5, 1.0]])


def click_rate(X: np.ndarray, kind: str) -> np.ndarray:
    if kind == "linear":
        return 0.4 + 0.15 * X @ B.T + np.array([0.0, 0.1, -0.1])
    return 1.0 / (1.0 + np.exp(-(3.0 * X @ B.T - 1.0)))


def target_policy(X: np.ndarray) -> np.ndarray:
    Z = X @ W
    Z -= Z.max(axis=1, keepdims=True)
    E = np.exp(Z)
    return E / E.sum(axis=1, keepdims=True)


def true_value(kind: str) -> float:
    X = np.random.default_rng(12345).uniform(-1, 1, (2_000_000, D))
    return float((target_policy(X) * click_rate(X, kind)).sum(axis=1).mean())


def make_log(seed: int, n: int, kind: str, rho0: float = 0.0, rho1: float = 0.0):
    rng = np.random.default_rng([31, seed])
    X = rng.uniform(-1, 1, (n, D))
    L = 0.7 * target_policy(-X) + 0.3 / K  # context-dependent, overlapping the target
    a = np.minimum((rng.random(n)[:, None] > np.cumsum(L, axis=1)).sum(axis=1), K - 1)
    r = (rng.random(n) < click_rate(X, kind)[np.arange(n), a]).astype(int)
    u = rng.random(n)
    rt = np.where(r == 1, (u >= rho1).astype(int), (u < rho0).astype(int))
    return X, a, rt, L[np.arange(n), a]


def coverage(kind: str, rates, model: str, interval: str, reps: int, n: int, truth: float) -> dict:
    out = {e: {"hits": 0, "given": 0, "err": [], "note": ""} for e in nf.ope.ESTIMATORS}
    for s in range(reps):
        X, a, r, p = make_log(s, n, kind, *rates)
        P = target_policy(X)
        rm = model
        if model == "array":  # ridge fitted on ALL the rows, passed in as predictions
            rm = nf.ope.RewardModel("ridge").fit(X, a, r.astype(float), K).predict(X)
        for e in nf.ope.ESTIMATORS:
            est = nf.ope.evaluate(P, X, a, r, p, e, rates[0], rates[1], seed=s, interval=interval,
                                  reward_model=rm)
            o = out[e]
            o["err"].append(est.value - truth)
            if est.interval != "none":
                o["given"] += 1
                o["hits"] += est.covers(truth)
            else:
                o["note"] = est.note
    rows = []
    for e, o in out.items():
        err = np.array(o["err"])
        rows.append({"clicks": kind, "flips": f"{rates[0]}/{rates[1]}", "reward_model": model, "interval": interval,
                     "estimator": e, "coverage": o["hits"] / o["given"] if o["given"] else None,
                     "given": o["given"], "bias_se": float(err.mean() / (err.std(ddof=1) / np.sqrt(err.size))),
                     "note": o["note"][:60]})
    return rows


#: the candidate-list estimators' settings checked: Switch-DR's τ and DRos's λ at the log's weights (w ≤ 10 here)
CANDIDATE_SETTINGS = (("dr", {}), ("sndr", {}), ("switch-dr", {"tau": 2.0}), ("switch-dr", {"tau": 5.0}),
                      ("dros", {"lam": 1.0}), ("dros", {"lam": 10.0}), ("switch-dr", {}), ("dros", {}))


def candidate_coverage(kind: str, rates, interval: str, reps: int, n: int, truth: float) -> list[dict]:
    """``nf.ope.evaluate_candidates`` (K candidates every round) with a cross-fitted ridge reward model (two
    folds; misspecified for logistic clicks): coverage of each estimator of ``CANDIDATE_SETTINGS``."""
    out = {i: {"hits": 0, "given": 0, "err": [], "note": ""} for i in range(len(CANDIDATE_SETTINGS))}
    offsets = np.arange(n + 1, dtype=np.int64) * K
    for s in range(reps):
        X, a, r, p = make_log(s, n, kind, *rates)
        P = target_policy(X)
        Q = np.empty((n, K))
        half = np.arange(n) < n // 2
        for fit, pred in ((half, ~half), (~half, half)):
            Q[pred] = nf.ope.RewardModel("ridge").fit(X[fit], a[fit], r[fit].astype(float), K).predict(X[pred])
        for i, (e, kw) in enumerate(CANDIDATE_SETTINGS):
            est = nf.ope.evaluate_candidates(offsets, a, p, r.astype(float), P.ravel(), e, Q.ravel(),
                                             rho0=rates[0], rho1=rates[1], interval=interval, seed=s, **kw)
            o = out[i]
            o["err"].append(est.value - truth)
            if est.interval != "none":
                o["given"] += 1
                o["hits"] += est.covers(truth)
            else:
                o["note"] = est.note
    rows = []
    for i, o in out.items():
        e, kw = CANDIDATE_SETTINGS[i]
        err = np.array(o["err"])
        rows.append({"clicks": kind, "flips": f"{rates[0]}/{rates[1]}", "reward_model": "ridge (2-fold)",
                     "interval": interval, "estimator": e + "".join(f" {k}={v:g}" for k, v in kw.items()),
                     "coverage": o["hits"] / o["given"] if o["given"] else None, "given": o["given"],
                     "bias_se": float(err.mean() / (err.std(ddof=1) / np.sqrt(err.size))), "note": o["note"][:60]})
    return rows


def section(reps: int = 200, n: int = 1000) -> str:
    """Every setting above with normal and bootstrap intervals, as text, for ``make bench``."""
    import pandas as pd

    rows = []
    for kind in ("logistic", "linear"):
        truth = true_value(kind)
        for rates in ((0.0, 0.0), (0.1, 0.2)):
            for model in ("ridge", "logistic", "array"):
                if model == "logistic" and rates != (0.0, 0.0):
                    continue
                for interval in ("normal", "bootstrap"):
                    rows += coverage(kind, rates, model, interval, reps, n, truth)
            rows += candidate_coverage(kind, rates, "normal", reps, n, truth)
    df = pd.DataFrame(rows)
    return "```\n" + df.to_string(index=False, float_format=lambda v: f"{v:.3f}") + "\n```\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--intervals", default="normal,bootstrap")
    ap.add_argument("--clicks", default="logistic,linear")
    ap.add_argument("--models", default="ridge,logistic,array")
    ap.add_argument("--data-dir", default=None, help="unused (generated logs)")
    ap.add_argument("--candidates", action="store_true", help="only evaluate_candidates's estimators")
    a = ap.parse_args(argv)
    import pandas as pd

    rows = []
    for kind in a.clicks.split(","):
        truth = true_value(kind)
        for rates in ((0.0, 0.0), (0.1, 0.2)):
            if a.candidates:
                for interval in a.intervals.split(","):
                    rows += candidate_coverage(kind, rates, interval, a.reps, a.n, truth)
                    print(pd.DataFrame(rows[-len(CANDIDATE_SETTINGS):]).to_string(index=False, header=False),
                          file=sys.stderr, flush=True)
                continue
            for model in a.models.split(","):
                if model == "logistic" and rates != (0.0, 0.0):
                    continue  # the logistic model of flipped clicks is not affine in them: h(q̂) is not exact
                for interval in a.intervals.split(","):
                    rows += coverage(kind, rates, model, interval, a.reps, a.n, truth)
                    print(pd.DataFrame(rows[-4:]).to_string(index=False, header=False), file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    bad = df[df.coverage.notna() & ((df.coverage < 0.90) | (df.coverage > 0.98))]
    print(df.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"\nintervals outside 0.90-0.98: {len(bad)} of {int(df.coverage.notna().sum())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
