"""``reproduce open-bandit``: the Open Bandit Dataset authors' off-policy check, plus flipped clicks.

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

Everything here is a pure function of its inputs; :func:`run` writes the report and is registered as
the recipe ``open-bandit``.

.. [1] Saito, Y., Aihara, S., Matsutani, M. & Narita, Y. (2021). Open Bandit Dataset and Pipeline.
   NeurIPS Datasets and Benchmarks (their Section 5 "benchmark experiment" on the small sample).
"""

from __future__ import annotations

import math
import time
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

__all__ = ["plan", "load_problem", "estimate_table", "bootstrap_table", "flip_table", "claims", "sections",
           "run", "make_quick_data"]

NAMES = {"ips": "IPS", "snips": "SNIPS", "dm": "DM (ridge)", "dr": "DR (ridge)"}


def plan(quick: bool) -> dict[str, Any]:
    """The run's sizes: campaigns, bootstrap resamples, flip settings and draws, Monte Carlo draws."""
    if quick:
        return {"campaigns": ["all"], "n_boot": 40, "n_flip_draws": 40, "n_sim": 20_000, "seed": 0,
                "flips": [(0.02, 0.1), (0.2, 0.1)], "flip_campaign": "all"}
    return {"campaigns": ["all", "men", "women"], "n_boot": 200, "n_flip_draws": 100, "n_sim": 100_000,
            "seed": 0, "flips": [(0.002, 0.1), (0.005, 0.2), (0.2, 0.1)], "flip_campaign": "all"}


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


def flip_table(prob: dict[str, Any], flips: list[tuple[float, float]], n_draws: int, seed: int = 0) -> pd.DataFrame:
    """Flip the random log's clicks ``n_draws`` times at each (ρ0, ρ1); plain vs noise-corrected.

    ``clean``: the estimator on the unflipped log (the same rows); the corrected estimators are
    unbiased for it given the rows (h is affine and so are IPS, SNIPS for fixed weights and the ridge
    DM/DR with the same cross-fitting folds: seed 0 throughout), so ``bias vs clean`` isolates the
    flips. Intervals: normal (the bootstrap would cost 1,000 resamples per draw)."""
    L: OpenBanditLog = prob["random"]
    clean = {e: evaluate(prob["pi"], L.X, L.actions, L.reward, L.propensities, e, seed=0, interval="none").value
             for e in ESTIMATORS}
    rows = []
    for j, (r0, r1) in enumerate(flips):
        rng = make_rng([seed, j])
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
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ claims
def claims(est: pd.DataFrame, flips: pd.DataFrame) -> list[Any]:
    """What the run supports, each judged (the recipe frame's Claim)."""
    from ..experiments.recipes import Claim

    out = []
    for camp, allc in est.groupby("campaign", sort=False):
        judged = allc[allc["estimator"] != NAMES["dm"]]
        cov = int(judged["covers on-policy"].sum())
        out.append(Claim(f"IPS, SNIPS and DR: the 95 % interval from the random log covers BTS's on-policy "
                         f"click rate ('{camp}')", "the check of [1]: off-policy estimates near the on-policy rate",
                         f"{cov} of {len(judged)} cover", cov == len(judged),
                         "DM not judged: its bootstrap holds the reward model fixed, so its interval "
                         "leaves out the model's error"))
        best = allc.loc[allc["relative error"].idxmin()]
        out.append(Claim(f"Smallest relative error on the whole log ('{camp}')", "—",
                         f"{best['estimator']}: {best['relative error']:.3f}", None,
                         "one log, one number: the bootstrap table shows the spread"))
    for (r0, r1), g in flips.groupby(["rho0", "rho1"], sort=False):
        ips_p = g[(g["estimator"] == "IPS") & (g["version"] == "plain")].iloc[0]
        ips_c = g[(g["estimator"] == "IPS") & (g["version"] == "corrected")].iloc[0]
        ok = abs(ips_c["bias vs clean (SEs)"]) < 4 and abs(ips_p["bias vs clean (SEs)"]) > 4
        out.append(Claim(f"Flips (ρ0, ρ1) = ({r0}, {r1}): corrected IPS is unbiased for the clean estimate, "
                         "plain IPS is not", "E[h(r̃) | r] = r",
                         f"bias vs clean: plain {ips_p['bias vs clean']:+.5f} ({ips_p['bias vs clean (SEs)']:+.1f} SE), "
                         f"corrected {ips_c['bias vs clean']:+.5f} ({ips_c['bias vs clean (SEs)']:+.1f} SE)", bool(ok),
                         f"sd of one corrected estimate {ips_c['sd over draws']:.5f} vs plain {ips_p['sd over draws']:.5f}"))
    return out


# ------------------------------------------------------------------ report
def _fmt_frame(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for c in out.columns:
        if out[c].dtype.kind == "f":
            out[c] = out[c].map(lambda v: f"{v:.4g}")
        elif out[c].dtype.kind == "b":
            out[c] = out[c].map({True: "yes", False: "**no**"})
    return out


def sections(problems: list[dict[str, Any]], est: pd.DataFrame, boot: pd.DataFrame, flips: pd.DataFrame,
             cfg: dict[str, Any], quick: bool, elapsed: float) -> list[Any]:
    """The report's sections (Markdown text and tables)."""
    from ..experiments.recipes import claims_table
    from ..report import Section

    p0 = problems[0]  # the first campaign: the text is about it
    L = p0["random"]
    n, clicks = L.n_rounds, int(L.reward.sum())
    t, lo, hi = p0["truth"], p0["truth_lower"], p0["truth_upper"]
    w = p0["pi"][np.arange(n), L.actions] / L.propensities
    ess = w.sum() ** 2 / (w ** 2).sum()
    data = ("a small generated log in the Open Bandit layout (10 items, 3 slots, known click model; "
            "`--quick`)" if quick else "the authors' 10,000-row sample of the Open Bandit Dataset "
            "(`open-bandit/` in the data directory; obp 0.4.1, CC BY 4.0)")
    truth_rows = pd.DataFrame([{"campaign": p["campaign"], "random: rows": p["random"].n_rounds,
                                "random: clicks": int(p["random"].reward.sum()),
                                "BTS: rows": p["bts"].n_rounds, "BTS: clicks": int(p["bts"].reward.sum()),
                                "on-policy click rate": f"{p['truth']:.5f}",
                                "95 % Wilson interval": f"[{p['truth_lower']:.5f}, {p['truth_upper']:.5f}]",
                                "corr(logged BTS propensity, prior's π)": f"{p['logged_vs_prior']:.2f}"}
                               for p in problems])
    honest = [
        f"**What {n:,} rows and {clicks} clicks can show.** The ground truth itself is uncertain: BTS's "
        f"on-policy rate {t:.5f} rests on {int(p0['bts'].reward.sum())} clicks, so its own 95 % interval "
        f"[{lo:.5f}, {hi:.5f}] is ±{(hi - lo) / 2 / t:.0%} of it. The estimates rest on the random log's "
        f"{clicks} clicks, and importance weighting shrinks the log further: the effective sample size "
        f"(Σw)²/Σw² is {ess:,.0f} of {n:,} rows. A relative error below about "
        f"{(hi - lo) / 2 / t:.0%} therefore cannot be told from luck, and a difference between estimators "
        "of a few tens of percent is within the bootstrap spread below. What the run can show: the "
        "estimators are in the right range and their intervals are honest about their width; it cannot "
        "rank IPS, SNIPS, DM and DR, nor say how they would compare on the full (about 26-million-row) "
        "data set.",
        "DM's interval is narrow because the bootstrap holds its reward model fixed: it reflects the "
        "averaging over contexts, not the model's error (DM is biased whenever the per-item ridge "
        f"model is wrong, and with {clicks} clicks over {L.n_actions} items it is mostly each item's "
        "mean click rate).",
        f"The logged BTS propensities correlate only {p0['logged_vs_prior']:.2f} with the prior's "
        "action distribution: the production BTS updated its posterior while logging, so the "
        "evaluation policy (the prior, as the authors evaluate it) is not exactly the policy that "
        "produced the BTS log. This is the authors' protocol; it adds an error no estimator can remove.",
    ]
    flip_text = [
        f"Clicks of the random log flipped by us, {cfg['n_flip_draws']} independent draws per setting "
        "(ρ0 = P(a click is reported where there was none), ρ1 = P(a click is lost)); 'corrected' "
        "replaces each reward by h(r̃) = (r̃ − ρ0)/(1 − ρ0 − ρ1) with the known rates. 'bias vs clean' "
        "compares with the same estimator on the unflipped rows — the corrected estimators are "
        "unbiased for it — and 'SEs' divides by the standard error of the mean over draws.",
        f"The price of the correction is variance. The random log's click rate is {clicks / n:.4f}; a "
        f"false-click rate ρ0 adds about ρ0·{n:,} false clicks to its {clicks} true ones "
        f"({', '.join(f'ρ0 = {r0}: ~{r0 * n:,.0f}' for r0, _ in cfg['flips'])}), and the "
        "corrected estimate's spread over draws ('sd over draws') grows with them; where that sd is "
        "comparable to the value itself, a single corrected estimate is unbiased but uninformative.",
    ]
    flips_show = flips.drop(columns=["draws"])
    return [
        Section("Set-up", text=[
            f"Data: {data}. Contexts: the four hashed user features one-hot, then the item affinities.",
            "Evaluation policy: Bernoulli Thompson Sampling with the production Beta prior "
            f"(`prior_bts.yaml`); its action distribution by {cfg['n_sim']:,} Monte Carlo draws (seed "
            "12345), as obp's `compute_batch_action_dist`. Position handling as obp: row i is weighted by "
            "π(item_i | slot_i)/p_i, so the target is the click rate per impression over the logged slots.",
            "Estimators (`nf.ope.evaluate`): IPS, SNIPS, DM and DR with a per-item ridge reward model "
            "(α = 1, cross-fitted on 2 folds). Intervals: 95 % percentile bootstrap over rows (1,000 "
            "resamples, reward model fixed) in the first table; normal intervals in the flip table.",
            f"{elapsed:.1f} s" + (" (quick mode)" if quick else "") + ".",
        ], tables={"Ground truth: BTS's own logs": truth_rows}),
        Section("Claims", tables={"What the run supports": claims_table(claims(est, flips))}),
        Section("Estimates from the random policy's logs", text=honest,
                tables={"Every estimator on the whole log (95 % bootstrap intervals)": _fmt_frame(est),
                        f"Relative error over {cfg['n_boot']} bootstrap resamples of the log": _fmt_frame(boot)}),
        Section("Flipped clicks: plain vs noise-corrected", text=flip_text,
                tables={f"Campaign '{cfg['flip_campaign']}'": _fmt_frame(flips_show)}),
        Section("References and how to rerun", text=[
            "[1] Saito, Y., Aihara, S., Matsutani, M. & Narita, Y. (2021). Open Bandit Dataset and Pipeline: "
            "towards realistic and reproducible off-policy evaluation. NeurIPS Datasets and Benchmarks.",
            "Rerun: `noisyfeedback reproduce open-bandit --data-dir ../shared/data --out DIR` "
            "(`--quick`: a generated log). Code: `noisyfeedback.ope.replication`.",
        ]),
    ]


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


def run(quick: bool, data_dir, out_dir: Path, jobs: int = 1, progress: Any = False) -> Path:
    """Run the check and write ``out_dir/index.md`` and ``index.html``; returns the HTML path."""
    from ..report import write_report

    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # many small BLAS calls: threads only contend
        return _run(quick, data_dir, Path(out_dir))


def _run(quick: bool, data_dir, out_dir: Path) -> Path:
    from ..report import write_report

    t0 = time.perf_counter()
    cfg = plan(quick)
    out_dir = Path(out_dir)
    if quick:
        data_dir = make_quick_data(out_dir / "quick-data", n=20_000)
    problems = [load_problem(data_dir, c, cfg["n_sim"]) for c in cfg["campaigns"]]
    est = pd.concat([estimate_table(p, seed=cfg["seed"]) for p in problems], ignore_index=True)
    boot = pd.concat([bootstrap_table(p, cfg["n_boot"], seed=cfg["seed"]) for p in problems], ignore_index=True)
    fprob = next(p for p in problems if p["campaign"] == cfg["flip_campaign"])
    flips = flip_table(fprob, cfg["flips"], cfg["n_flip_draws"], seed=cfg["seed"])
    secs = sections(problems, est, boot, flips, cfg, quick, time.perf_counter() - t0)
    title = "Open Bandit Dataset: off-policy estimates of BTS from random logs" + (" (quick)" if quick else "")
    return write_report(out_dir, title, secs,
                        intro="The dataset authors' standard check, with every estimator of `nf.ope`, "
                              "then the same with clicks flipped at known rates: plain vs noise-corrected.")


def _register() -> None:
    """Register :func:`run` as the recipe ``open-bandit`` (imported by the recipe registry)."""
    from ..experiments.recipes import RECIPES, register_recipe

    if "open-bandit" not in RECIPES:
        register_recipe("open-bandit", title="Open Bandit Dataset: off-policy estimates of BTS from random logs",
                        description="IPS/SNIPS/DM/DR vs the on-policy click rate; plain vs noise-corrected "
                                    "under flipped clicks.")(run)


_register()
