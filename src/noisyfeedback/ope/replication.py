"""The Open Bandit Dataset authors' off-policy check, plus flipped clicks.

Estimate the click rate of the Bernoulli Thompson Sampling (BTS) policy from the uniform-random
policy's logs with every estimator, and compare it with the click rate BTS actually got in its own
logs (the on-policy rate) [1]_. Then flip the random policy's clicks at known rates (ρ0: a click
reported where there was none, ρ1: a click lost) and compare the plain estimators with the
noise-corrected ones.

The evaluation policy is BTS with the production prior (``prior_bts.yaml``), its action
distribution computed as the authors do (obp's ``compute_batch_action_dist``: Monte Carlo over
Beta draws, items ranked by the drawn θ; here 100,000 draws with seed 12345). **Positions**: as in
obp, each logged row (item a_i at slot k_i) is weighted by π(a_i | slot k_i) / p_i, where π(· | k)
is the probability that BTS shows each item at slot k and p_i is the random policy's propensity
(1/K); the estimate is the click rate per impression, averaged over the logged slots, which is what
the on-policy rate (mean click over BTS's rows) measures.

Everything here is a pure function of its inputs. The recipe ``open-bandit``
(:mod:`noisyfeedback.lab.papers.open_bandit`) declares the plans, runs these functions as
engine tasks (one per campaign and part, one per flip setting), judges the claims and writes the report.

.. [1] Saito, Y., Aihara, S., Matsutani, M. & Narita, Y. (2021). Open Bandit Dataset and Pipeline.
   NeurIPS Datasets and Benchmarks (their Section 5 "benchmark experiment" on the small sample).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..base import make_rng
from ..datasets.open_bandit import (
    OpenBanditLog,
    bts_action_distribution,
    load_open_bandit,
    read_prior_bts,
    write_open_bandit_csv,
)
from .estimators import ESTIMATORS, evaluate

__all__ = ["load_problem", "problem_summary", "estimate_table", "bootstrap_table", "flip_table", "flip_rows",
           "clean_estimates", "make_quick_data", "NAMES"]

NAMES = {"ips": "IPS", "snips": "SNIPS", "dm": "DM (ridge)", "dr": "DR (ridge)"}


# -------------------------------------------------------------- the problem
def _find_prior(data_dir) -> Path:
    from ..datasets.registry import data_dirs

    for base in data_dirs(data_dir):
        for sub in ("open-bandit", "open_bandit", "obd", ""):
            p = (base / sub if sub else base) / "prior_bts.yaml"
            if p.is_file():
                return p
    raise FileNotFoundError(f"prior_bts.yaml not found under {data_dirs(data_dir)} (or their open-bandit/).")


def load_problem(data_dir, campaign: str, n_sim: int, seed: int = 12345) -> dict[str, Any]:
    """The random policy's log, BTS's on-policy click rate (with a 95 % Wilson interval) and the
    evaluation policy's (n, K) action probabilities on the logged rows."""
    rnd = load_open_bandit("random", campaign, data_dir=data_dir)
    bts = load_open_bandit("bts", campaign, data_dir=data_dir)
    prior = read_prior_bts(_find_prior(data_dir))[campaign]
    K = rnd.n_actions
    if prior["alpha"].shape[0] != K:
        raise ValueError(f"prior_bts.yaml gives {prior['alpha'].shape[0]} items for {campaign!r}; the log has {K}.")
    dist = bts_action_distribution(prior["alpha"], prior["beta"], len_list=3, n_sim=n_sim, seed=seed)
    pi = np.ascontiguousarray(dist[:, rnd.position].T)  # row i: π(· | slot of row i)
    n1, n = int(bts.reward.sum()), bts.n_rounds
    truth = n1 / n
    lo, hi = _wilson(n1, n)
    # how far the logged BTS propensities are from the prior's distribution (BTS updated during logging)
    logged_vs_prior = float(np.corrcoef(dist[bts.actions, bts.position], bts.propensities)[0, 1])
    return {"campaign": campaign, "random": rnd, "bts": bts, "dist": dist, "pi": pi, "truth": truth,
            "truth_lower": lo, "truth_upper": hi, "logged_vs_prior": logged_vs_prior}


def _wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return c - h, c + h


# ------------------------------------------------------------------ tables
def estimate_table(prob: dict[str, Any], seed: int = 0) -> pd.DataFrame:
    """Every estimator on the whole random log: estimate, 95 % bootstrap interval, relative error."""
    L: OpenBanditLog = prob["random"]
    rows = []
    for e in ESTIMATORS:
        est = evaluate(prob["pi"], L.X, L.actions, L.reward, L.propensities, e, seed=seed)
        rows.append({"campaign": prob["campaign"], "estimator": NAMES[e], "estimate": est.value,
                     "lower": est.lower, "upper": est.upper, "on-policy": prob["truth"],
                     "relative error": abs(est.value - prob["truth"]) / prob["truth"],
                     "covers on-policy": est.covers(prob["truth"])})
    return pd.DataFrame(rows)


def bootstrap_table(prob: dict[str, Any], n_boot: int, seed: int = 0) -> pd.DataFrame:
    """Relative error of each estimator over ``n_boot`` bootstrap resamples of the random log (as the
    authors' benchmark: resample the log, estimate, compare with the on-policy rate)."""
    L: OpenBanditLog = prob["random"]
    rng = make_rng(seed)
    n = L.n_rounds
    errs = {e: np.empty(n_boot) for e in ESTIMATORS}
    for b in range(n_boot):
        idx = rng.integers(0, n, n)
        for e in ESTIMATORS:
            v = evaluate(prob["pi"][idx], L.X[idx], L.actions[idx], L.reward[idx], L.propensities[idx], e,
                         seed=b, interval="none").value
            errs[e][b] = abs(v - prob["truth"]) / prob["truth"]
    return pd.DataFrame([{"campaign": prob["campaign"], "estimator": NAMES[e], "mean": errs[e].mean(),
                          "std": errs[e].std(ddof=1), "median": np.median(errs[e]),
                          "90th percentile": np.quantile(errs[e], 0.9), "resamples": n_boot}
                         for e in ESTIMATORS])


def clean_estimates(prob: dict[str, Any]) -> dict[str, float]:
    """Every estimator on the unflipped random log (seed 0, no interval): what the flips are compared with."""
    L: OpenBanditLog = prob["random"]
    return {e: evaluate(prob["pi"], L.X, L.actions, L.reward, L.propensities, e, seed=0, interval="none").value
            for e in ESTIMATORS}


def flip_rows(prob: dict[str, Any], r0: float, r1: float, index: int, n_draws: int, seed: int = 0,
              clean: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """One flip setting (ρ0, ρ1) of :func:`flip_table`, the ``index``-th of its list (its draws are seeded
    from ``[seed, index]``): one row per estimator and version (plain, corrected)."""
    L: OpenBanditLog = prob["random"]
    clean = clean_estimates(prob) if clean is None else clean
    rng = make_rng([seed, index])
    vals = {(e, c): np.empty(n_draws) for e in ESTIMATORS for c in (False, True)}
    cover = {(e, c): 0 for e in ESTIMATORS for c in (False, True)}
    n_obs = np.empty(n_draws)
    for d in range(n_draws):
        u = rng.random(L.n_rounds)
        flipped = np.where(L.reward == 1, (u >= r1), (u < r0)).astype(np.int64)
        n_obs[d] = flipped.sum()
        for e in ESTIMATORS:
            for corr in (False, True):
                est = evaluate(prob["pi"], L.X, L.actions, flipped, L.propensities, e,
                               rho0=r0 if corr else 0.0, rho1=r1 if corr else 0.0, seed=0, interval="normal")
                vals[(e, corr)][d] = est.value
                cover[(e, corr)] += est.covers(prob["truth"])
    rows = []
    for e in ESTIMATORS:
        for corr in (False, True):
            v = vals[(e, corr)]
            rows.append({"rho0": r0, "rho1": r1, "estimator": NAMES[e],
                         "version": "corrected" if corr else "plain", "mean estimate": v.mean(),
                         "sd over draws": v.std(ddof=1), "clean estimate": clean[e],
                         "bias vs clean": v.mean() - clean[e],
                         "bias vs clean (SEs)": (v.mean() - clean[e]) / (v.std(ddof=1) / math.sqrt(n_draws)),
                         "mean relative error": np.mean(np.abs(v - prob["truth"])) / prob["truth"],
                         "interval covers on-policy": cover[(e, corr)] / n_draws,
                         "clicks seen (mean)": n_obs.mean(), "draws": n_draws})
    return rows


def flip_table(prob: dict[str, Any], flips: list[tuple[float, float]], n_draws: int, seed: int = 0) -> pd.DataFrame:
    """Flip the random log's clicks ``n_draws`` times at each (ρ0, ρ1); plain vs noise-corrected.

    ``clean``: the estimator on the unflipped log (the same rows); the corrected estimators are
    unbiased for it given the rows (h is affine and so are IPS, SNIPS for fixed weights and the ridge
    DM/DR with the same cross-fitting folds: seed 0 throughout), so ``bias vs clean`` isolates the
    flips. Intervals: normal (the bootstrap would cost 1,000 resamples per draw)."""
    clean = clean_estimates(prob)
    return pd.DataFrame([row for j, (r0, r1) in enumerate(flips)
                         for row in flip_rows(prob, r0, r1, j, n_draws, seed, clean)])


def problem_summary(prob: dict[str, Any]) -> dict[str, Any]:
    """What the report says about a loaded problem (plain numbers): rows and clicks of both logs, the
    on-policy rate with its Wilson interval, the effective sample size of the importance weights."""
    L: OpenBanditLog = prob["random"]
    n = L.n_rounds
    w = prob["pi"][np.arange(n), L.actions] / L.propensities
    return {"campaign": prob["campaign"], "random_rows": int(n), "random_clicks": int(L.reward.sum()),
            "bts_rows": int(prob["bts"].n_rounds), "bts_clicks": int(prob["bts"].reward.sum()),
            "n_actions": int(L.n_actions), "truth": float(prob["truth"]), "truth_lower": float(prob["truth_lower"]),
            "truth_upper": float(prob["truth_upper"]), "logged_vs_prior": float(prob["logged_vs_prior"]),
            "ess": float(w.sum() ** 2 / (w ** 2).sum())}


# --------------------------------------------------------------- quick data
def make_quick_data(root: Path, n: int = 4000, K: int = 10, seed: int = 0) -> Path:
    """A small generated log in the Open Bandit layout under ``root/open-bandit/``: a random policy's
    log, a BTS policy's log (drawn from the prior's action distribution) and ``prior_bts.yaml``.
    Clicks: P = base_item · slot factor · (1 + affinity), about 4-12 %."""
    rng = make_rng(seed)
    base = root / "open-bandit"
    alpha = rng.integers(2, 40, K).astype(float)
    beta = alpha * rng.uniform(5, 30, K)
    ctr = 0.02 + 0.1 * rng.random(K)
    slot = np.array([1.0, 0.8, 0.6])
    dist = bts_action_distribution(alpha, beta, 3, 20_000, seed=12345)
    for policy in ("random", "bts"):
        uf = rng.integers(0, 3, size=(n, 2))
        aff = rng.random((n, K)) * (rng.random((n, K)) < 0.2)
        pos = rng.integers(0, 3, n)
        if policy == "random":
            a = rng.integers(0, K, n)
            p = np.full(n, 1.0 / K)
        else:
            cum = np.cumsum(dist[:, pos].T, axis=1)
            a = np.minimum((cum < rng.random((n, 1))).sum(axis=1), K - 1)
            p = dist[a, pos]
        click = (rng.random(n) < ctr[a] * slot[pos] * (1 + aff[np.arange(n), a])).astype(np.int64)
        write_open_bandit_csv(base / policy / "all" / "all.csv", a, pos, click, p, uf, aff)
    lines = ["all:", "  alpha:"] + [f"    - {v}" for v in alpha] + ["  beta:"] + [f"    - {v}" for v in beta]
    (base / "prior_bts.yaml").write_text("\n".join(lines) + "\n")
    return root
