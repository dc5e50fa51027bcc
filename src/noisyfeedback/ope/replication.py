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

**Learners from the random log** (`learning_table`): the random log is split in halves at
random (seeded); on one half the action-feature learner ``CatalogueSquareCB`` (default parameters;
user features and the logged slot as shared context, the items of ``item_context.csv`` with the
user's affinity to each as candidates: `candidate_log`)
and the index learner ``SquareCB`` (no item features: one weight vector per item over the user
features, affinities and slot) are trained with ``fit_logged``; on the other half their action
distributions are evaluated with the candidate-set estimators
(`evaluate_candidates`), next to the random policy's mean click there and
BTS's on-policy click rate.

Everything here is a pure function of its inputs. The recipe ``open-bandit``
(`noisyfeedback.lab.papers.open_bandit`) declares the plans, runs these functions as
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
    CandidateLog,
    ItemContext,
    OpenBanditLog,
    bts_action_distribution,
    candidate_log,
    load_open_bandit,
    read_prior_bts,
    write_open_bandit_csv,
)
from .candidates import evaluate_candidates
from .estimators import ESTIMATORS, RewardModel, bootstrap_interval, evaluate

__all__ = ["load_problem", "problem_summary", "estimate_table", "bootstrap_table", "flip_table", "flip_rows",
           "clean_estimates", "make_quick_data", "NAMES", "POLICY_NAMES", "split_rows", "index_contexts",
           "crossfit_rewards", "trained_policies", "policy_rows", "learning_table", "minimum_detectable_ratio",
           "design_se", "quick_item_features"]

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
                     # an estimator without an interval (DM) neither covers nor misses: None
                     "covers on-policy": est.covers(prob["truth"]) if est.interval != "none" else None})
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
    """One flip setting (ρ0, ρ1) of `flip_table`, the ``index``-th of its list (its draws are seeded
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


# ------------------------------------------------ learners trained on half the random log
#: the policies of `learning_table`, in its order
POLICY_NAMES = {"random": "random (uniform)", "bts_on": "BTS, on-policy (its own log)",
                "bts": "BTS (production prior), off-policy", "catalogue": "CatalogueSquareCB (item features)",
                "index": "SquareCB (item index only)"}
_Z95, _Z80 = 1.959964, 0.841621


def split_rows(n: int, train_fraction: float = 0.5, seed: int | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rows 0..n−1 split at random (``make_rng(seed)``): (training rows, evaluation rows), each sorted."""
    if not 0 < train_fraction < 1:
        raise ValueError(f"The 'train_fraction' parameter of split_rows must be in (0, 1). Got {train_fraction!r} "
                         "instead.")
    order = make_rng(seed).permutation(n)
    cut = int(round(train_fraction * n))
    if cut == 0 or cut == n:
        raise ValueError(f"train_fraction={train_fraction} leaves no rows to train on or to evaluate on (n = {n}).")
    return np.sort(order[:cut]), np.sort(order[cut:])


def index_contexts(log: OpenBanditLog, n_slots: int = 3) -> np.ndarray:
    """The contexts of the index learner and of the reward model: ``log.X`` (user features one-hot, the
    K affinities) and the logged slot one-hot."""
    return np.ascontiguousarray(np.hstack([log.X, np.eye(n_slots)[log.position]]))


def crossfit_rewards(X: np.ndarray, actions: np.ndarray, rewards: np.ndarray, n_actions: int,
                     seed: Any = 0) -> np.ndarray:
    """q̂ (n, K) of the per-item ridge model (`RewardModel`, α = 1), each
    row predicted by the model of the other of 2 random folds (``make_rng(seed)``): no row's click
    is in its own prediction, so DR stays unbiased with the model held fixed."""
    n = actions.shape[0]
    fold = make_rng(seed).permutation(n) % 2
    Q = np.empty((n, n_actions))
    for f in (0, 1):
        train, test = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        if test.size:
            train = train if train.size else test
            model = RewardModel("ridge", 1.0).fit(X[train], actions[train], rewards[train], n_actions)
            Q[test] = model.predict(X[test])
    return Q


def trained_policies(prob: dict[str, Any], items: ItemContext, train: np.ndarray, ev: np.ndarray,
                     seed: int | None = 0) -> dict[str, np.ndarray]:
    """Each policy's probabilities of the evaluation rows' candidates (flat, K a row): the learners
    trained with ``fit_logged`` on ``train`` (default parameters, ``seed``), and BTS with the prior."""
    from ..learners.bandit.squarecb import SquareCB
    from ..learners.catalogue.squarecb import CatalogueSquareCB

    L: OpenBanditLog = prob["random"]
    cl = candidate_log(L, items)
    tr, te = cl.take(train), cl.take(ev)
    cat = CatalogueSquareCB(seed=seed).fit_logged(tr.rounds, tr.actions, tr.rewards, tr.propensities)
    X = index_contexts(L)
    idx = SquareCB(items.n_items, seed=seed).fit_logged(X[train], L.actions[train], L.reward[train],
                                                        L.propensities[train])
    return {"bts": np.ascontiguousarray(prob["pi"][ev]).ravel(),
            "catalogue": cat.action_probabilities(te.rounds),
            "index": idx.action_probabilities(X[ev]).ravel()}


def minimum_detectable_ratio(se: float, se0: float, v0: float) -> float:
    """The smallest true value, as a multiple of the random policy's v0, that an estimate with standard
    error ``se`` tells apart from v0 (known to ``se0``) at 5 % two-sided with 80 % power:
    1 + (z₀.₉₇₅ + z₀.₈)·√(se² + se0²)/v0."""
    return 1.0 + (_Z95 + _Z80) * math.sqrt(se * se + se0 * se0) / v0 if v0 > 0 else math.inf


def design_se(P: np.ndarray, n_candidates: int, propensity: float, v0: float) -> float:
    """The standard error IPS would have for the policy ``P`` (flat, ``n_candidates`` a round) if every
    candidate's click rate were v0, from every candidate's weight, not only the clicked rows':
    √((v0·E[Σ_a π(a|x)²/μ] − v0²)/n) with μ the (constant) logging propensity."""
    n = P.shape[0] // n_candidates
    second = float((P.reshape(n, n_candidates) ** 2).sum(axis=1).mean()) / propensity
    return math.sqrt(max(v0 * second - v0 * v0, 0.0) / n)


def _ips_extras(w: np.ndarray, r: np.ndarray, P: np.ndarray, ev: CandidateLog, v0: float, se0: float,
                seed) -> dict[str, float]:
    """The IPS row's extra columns (`policy_rows`)."""
    K = int(ev.rounds.sizes[0])
    wr = w * r
    lo, hi = bootstrap_interval(wr, r, 0.05, seed) if r.sum() > 0 else (math.nan, math.nan)
    uniform = np.allclose(ev.propensities, ev.propensities[0])
    se_d = design_se(P, K, float(ev.propensities[0]), v0) if uniform else math.nan
    return {"paired ratio lower": lo, "paired ratio upper": hi, "ESS": float(w.sum() ** 2 / (w ** 2).sum()),
            "top click's share": float(wr.max() / wr.sum()) if wr.sum() > 0 else math.nan,
            "min. detectable ratio (design)": minimum_detectable_ratio(se_d, se0, v0)}


def policy_rows(ev: CandidateLog, name: str, P: np.ndarray, Q: np.ndarray, v0: float, se0: float,
                seed: int | None = 0) -> list[dict[str, Any]]:
    """One policy on the evaluation rows: IPS, SNIPS, DM and DR (``evaluate_candidates``, 95 % bootstrap
    intervals; DM's none) with the ratio to the random policy's v0 and the minimum detectable ratio
    from the interval's width; on the IPS row also the paired bootstrap interval of IPS / v0 on the same
    rows, the effective sample size of the weights, the largest single click's share of the estimate
    and the minimum detectable ratio from the design (`design_se`)."""
    K = int(ev.rounds.sizes[0])
    w = P.reshape(-1, K)[np.arange(ev.n_rounds), ev.actions] / ev.propensities
    r = ev.rewards.astype(np.float64)
    rows = []
    for e in ESTIMATORS:
        est = evaluate_candidates(ev.offsets, ev.actions, ev.propensities, r, P, e, Q, interval="bootstrap",
                                  seed=seed)
        se = (est.upper - est.lower) / (2 * _Z95)
        row = {**_EMPTY_EXTRAS, "policy": POLICY_NAMES[name], "estimator": NAMES[e], "estimate": est.value,
               "lower": est.lower, "upper": est.upper, "interval": est.interval, "rows": ev.n_rounds,
               "clicks": int(r.sum()), "ratio to random": est.value / v0 if v0 > 0 else math.nan,
               "min. detectable ratio": minimum_detectable_ratio(se, se0, v0) if est.interval != "none" else math.nan}
        if e == "ips":
            row.update(_ips_extras(w, r, P, ev, v0, se0, seed))
        rows.append(row)
    return rows


_EMPTY_EXTRAS = {"min. detectable ratio": math.nan, "paired ratio lower": math.nan, "paired ratio upper": math.nan,
                 "ESS": math.nan, "top click's share": math.nan, "min. detectable ratio (design)": math.nan}


def _rate_row(name: str, clicks: int, n: int, v0: float, lo: float, hi: float) -> dict[str, Any]:
    return {"policy": POLICY_NAMES[name], "estimator": "mean click", "estimate": clicks / n, "lower": lo,
            "upper": hi, "interval": "Wilson", "rows": n, "clicks": clicks,
            "ratio to random": clicks / n / v0 if v0 > 0 else math.nan, **_EMPTY_EXTRAS}


def learning_table(prob: dict[str, Any], items: ItemContext, seed: int = 0,
                   train_fraction: float = 0.5) -> pd.DataFrame:
    """The learners trained on a random ``train_fraction`` of the random log, evaluated on the rest,
    next to the random policy's mean click there (Wilson interval), BTS's on-policy rate (its own log)
    and BTS (the prior) estimated off-policy on the same rows. The split is ``make_rng(seed)``'s, the
    reward model's folds ``make_rng([seed, 1])``'s, the bootstrap ``seed``'s."""
    L: OpenBanditLog = prob["random"]
    if items.n_items != L.n_actions:
        raise ValueError(f"the item context has {items.n_items} items; the log has {L.n_actions}.")
    train, ev = split_rows(L.n_rounds, train_fraction, seed)
    ev_log = candidate_log(L, items).take(ev)
    clicks, n = int(L.reward[ev].sum()), ev.size
    v0 = clicks / n
    lo0, hi0 = _wilson(clicks, n)
    se0 = (hi0 - lo0) / (2 * _Z95)
    Q = crossfit_rewards(index_contexts(L)[ev], L.actions[ev], L.reward[ev], items.n_items, [seed, 1]).ravel()
    rows = [_rate_row("random", clicks, n, v0, lo0, hi0),
            _rate_row("bts_on", int(prob["bts"].reward.sum()), prob["bts"].n_rounds, v0, prob["truth_lower"],
                      prob["truth_upper"])]
    for name, P in trained_policies(prob, items, train, ev, seed).items():
        rows += policy_rows(ev_log, name, P, Q, v0, se0, seed)
    return pd.DataFrame([{"campaign": prob["campaign"], **r} for r in rows])


# --------------------------------------------------------------- quick data
def make_quick_data(root: Path, n: int = 4000, K: int = 10, seed: int = 0) -> Path:
    """A small generated log in the Open Bandit layout under ``root/open-bandit/``: a random policy's
    log, a BTS policy's log (drawn from the prior's action distribution), ``prior_bts.yaml`` and each
    log's ``item_context.csv`` (`quick_item_features`). Clicks: P = base_item · slot factor ·
    (1 + affinity), about 4-12 %."""
    rng = make_rng(seed)
    base = root / "open-bandit"
    alpha = rng.integers(2, 40, K).astype(float)
    beta = alpha * rng.uniform(5, 30, K)
    ctr = 0.02 + 0.1 * rng.random(K)
    slot = np.array([1.0, 0.8, 0.6])
    dist = bts_action_distribution(alpha, beta, 3, 20_000, seed=12345)
    features = quick_item_features(ctr, seed)
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
        write_open_bandit_csv(base / policy / "all" / "all.csv", a, pos, click, p, uf, aff, item_features=features)
    lines = ["all:", "  alpha:"] + [f"    - {v}" for v in alpha] + ["  beta:"] + [f"    - {v}" for v in beta]
    (base / "prior_bts.yaml").write_text("\n".join(lines) + "\n")
    return root


def quick_item_features(ctr: np.ndarray, seed: int = 0) -> list[list[Any]]:
    """Item features of the quick log, in the sample's form (a number, then three hashed strings), from
    their own generator (``make_rng([seed, 1])``, so the logs are those drawn without them): the number
    is the standardised log click rate plus noise (sd 0.5), the first string the click-rate tercile,
    the other two carry nothing."""
    rng = make_rng([seed, 1])
    K = ctr.shape[0]
    z = np.log(ctr)
    num = (z - z.mean()) / (z.std() or 1.0) + 0.5 * rng.standard_normal(K)
    names = [[rng.bytes(16).hex() for _ in range(m)] for m in (3, 4, 2)]
    tercile = np.searchsorted(np.quantile(ctr, [1 / 3, 2 / 3]), ctr)
    return [[float(v) for v in num], [names[0][t] for t in tercile],
            [names[1][j] for j in rng.integers(0, 4, K)], [names[2][j] for j in rng.integers(0, 2, K)]]
