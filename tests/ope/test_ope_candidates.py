"""Off-policy estimators over candidate lists and slates: each against a reference written from its
paper's formula, limiting cases, and unbiasedness + interval coverage over 200 seeded replications of
a small logging simulation whose true policy value is known exactly (by enumeration), with and
without flipped clicks (corrected)."""

import itertools
import math

import numpy as np
import pytest
import reference_ope as ref
from tolerances import EXACT_ATOL, EXACT_RTOL

import noisyfeedback as nf
from noisyfeedback.ope import evaluate_candidates, pseudoinverse, sequential_slate_moments, slot_ips

# ------------------------------------------------------------------ a small world with a known value
Q = np.array([[0.1, 0.5, 0.8], [0.6, 0.3, 0.2]])          # click probability of (context, item type)
LOG_SCORE = np.array([[0.0, 0.5, -0.5], [0.3, 0.0, -0.3]])  # the logging policy's softmax scores
Q_WRONG = np.clip(Q + np.array([[0.1, -0.1, 0.05], [-0.05, 0.1, -0.1]]), 0, 1)  # a wrong reward model
RHO0_T, RHO1_T = np.array([0.1, 0.2, 0.3]), np.array([0.3, 0.2, 0.1])  # per-type flip rates
SIZES = (2, 3, 4)                                           # candidates a round, uniform
TARGET_TEMP = 3.0
R, N = 200, 800                                             # replications, rounds each


def _softmax(x):
    e = np.exp(x - np.max(x))
    return e / e.sum()


def _softmax_ragged(scores, offsets):
    mx = np.maximum.reduceat(scores, offsets[:-1])
    e = np.exp(scores - np.repeat(mx, np.diff(offsets)))
    return e / np.repeat(np.add.reduceat(e, offsets[:-1]), np.diff(offsets))


def _true_value():
    """E over contexts, candidate counts and item types of Σ_j π(j) Q[c, t_j] — enumerated exactly."""
    v = 0.0
    for c in (0, 1):
        for m in SIZES:
            for types in itertools.product(range(3), repeat=m):
                pi = _softmax(TARGET_TEMP * Q[c, list(types)])
                v += 0.5 / len(SIZES) / 3 ** m * float(pi @ Q[c, list(types)])
    return v


def _draw_within(P, offsets, u):
    """Inverse-CDF draw of one candidate per round from the flat distribution P."""
    cs = np.cumsum(P)
    start = np.concatenate([[0.0], cs])[offsets[:-1]]
    local = cs - np.repeat(start, np.diff(offsets))
    below = (local < np.repeat(u, np.diff(offsets))).astype(np.int64)
    return np.minimum(np.add.reduceat(below, offsets[:-1]), np.diff(offsets) - 1)


def _simulate(n_rounds, seed, noise):
    """All replications' rounds at once: offsets, logged candidate, propensity, observed click, the
    target's probabilities, the reward models (observed scale, right and wrong), the rates."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 2, n_rounds)
    m = rng.choice(SIZES, n_rounds)
    offsets = np.concatenate([[0], np.cumsum(m)]).astype(np.int64)
    t = rng.integers(0, 3, int(offsets[-1]))
    cc = np.repeat(c, m)
    mu = _softmax_ragged(LOG_SCORE[cc, t], offsets)
    pi = _softmax_ragged(TARGET_TEMP * Q[cc, t], offsets)
    a = _draw_within(mu, offsets, rng.random(n_rounds))
    flat = offsets[:-1] + a
    y = (rng.random(n_rounds) < Q[c, t[flat]]).astype(float)
    if noise == "none":
        rho0 = rho1 = np.zeros(int(offsets[-1]))
    elif noise == "scalar":
        rho0, rho1 = np.full(int(offsets[-1]), 0.2), np.full(int(offsets[-1]), 0.3)
    else:
        rho0, rho1 = RHO0_T[t], RHO1_T[t]
    u = rng.random(n_rounds)
    obs = np.where(y == 1, (u >= rho1[flat]).astype(float), (u < rho0[flat]).astype(float))
    right = rho0 + (1 - rho0 - rho1) * Q[cc, t]
    wrong = rho0 + (1 - rho0 - rho1) * Q_WRONG[cc, t]
    return dict(offsets=offsets, a=a, p=mu[flat], r=obs, pi=pi, right=right, wrong=wrong, rho0=rho0, rho1=rho1)


def _replica(sim, k, n):
    lo, hi = sim["offsets"][k * n], sim["offsets"][(k + 1) * n]
    sl, cl = slice(k * n, (k + 1) * n), slice(lo, hi)
    return dict(offsets=sim["offsets"][k * n:(k + 1) * n + 1] - lo, a=sim["a"][sl], p=sim["p"][sl],
                r=sim["r"][sl], pi=sim["pi"][cl], right=sim["right"][cl], wrong=sim["wrong"][cl],
                rho0=sim["rho0"][cl], rho1=sim["rho1"][cl])


def _rates(rep, noise):
    if noise == "none":
        return 0.0, 0.0
    if noise == "scalar":
        return 0.2, 0.3
    return rep["rho0"], rep["rho1"]


def _rounds_for_reference(rep, model="wrong"):
    o = rep["offsets"]
    return [dict(pi=list(rep["pi"][o[i]:o[i + 1]]), q=list(rep[model][o[i]:o[i + 1]]), a=int(rep["a"][i]),
                 p=float(rep["p"][i]), r=float(rep["r"][i]), rho0=list(rep["rho0"][o[i]:o[i + 1]]),
                 rho1=list(rep["rho1"][o[i]:o[i + 1]])) for i in range(len(o) - 1)]


# ------------------------------------------------------------------ against the papers' formulas
@pytest.mark.parametrize("noise", ["none", "scalar", "per-candidate"])
@pytest.mark.parametrize("estimator, kw", [("ips", {}), ("snips", {}), ("dm", {}), ("dr", {}),
                                           ("switch-dr", {"tau": 1.5}), ("dros", {"lam": 2.0}), ("sndr", {})])
def test_candidate_estimators_match_the_reference(estimator, kw, noise):
    rep = _replica(_simulate(300, seed=11, noise=noise), 0, 300)
    rho0, rho1 = _rates(rep, noise)
    est = evaluate_candidates(rep["offsets"], rep["a"], rep["p"], rep["r"], rep["pi"], estimator, rep["wrong"],
                              rho0=rho0, rho1=rho1, **kw)
    want = ref.candidates(estimator, _rounds_for_reference(rep), **kw)
    assert est.value == pytest.approx(want, rel=EXACT_RTOL, abs=EXACT_ATOL)
    assert est.n == 300 and est.estimator == estimator
    assert (est.interval == "none") == (estimator in ("dm", "switch-dr", "dros"))  # τ, λ finite: no interval
    if est.interval != "none":
        assert est.lower < est.value < est.upper


def test_limits_switch_and_shrinkage_reduce_to_dr_and_dm():
    rep = _replica(_simulate(200, seed=12, noise="scalar"), 0, 200)
    args = (rep["offsets"], rep["a"], rep["p"], rep["r"], rep["pi"])
    kw = dict(reward_model=rep["wrong"], rho0=0.2, rho1=0.3)
    dr = evaluate_candidates(*args, "dr", **kw).value
    dm = evaluate_candidates(*args, "dm", **kw).value
    assert evaluate_candidates(*args, "switch-dr", **kw).value == dr            # τ = ∞
    assert evaluate_candidates(*args, "dros", **kw).value == dr                 # λ = ∞
    assert evaluate_candidates(*args, "switch-dr", tau=1e-9, **kw).value == pytest.approx(dm, abs=1e-15)
    assert evaluate_candidates(*args, "dros", lam=1e-12, **kw).value == pytest.approx(dm, abs=1e-9)
    # one candidate list as a list of per-round arrays gives the same numbers
    o = rep["offsets"]
    per_round = [rep["pi"][o[i]:o[i + 1]] for i in range(len(o) - 1)]
    assert evaluate_candidates(o, rep["a"], rep["p"], rep["r"], per_round, "dr", **kw).value == dr
    # the noise-corrected estimate of clean clicks equals the plain estimate on h(r) for IPS
    hr = (rep["r"] - 0.2) / 0.5
    assert evaluate_candidates(*args[:3], hr, args[4], "ips").value == pytest.approx(
        evaluate_candidates(*args, "ips", rho0=0.2, rho1=0.3).value, rel=1e-14)
    # per-candidate rates that are all equal give the scalar estimate
    total = int(o[-1])
    assert evaluate_candidates(*args, "dr", reward_model=rep["wrong"], rho0=np.full(total, 0.2),
                               rho1=np.full(total, 0.3)).value == pytest.approx(dr, rel=1e-14)


def test_bootstrap_intervals_are_close_to_normal_ones():
    rep = _replica(_simulate(2000, seed=13, noise="none"), 0, 2000)
    for e in ("ips", "snips", "dr", "sndr"):
        kw = dict(reward_model=rep["wrong"])
        nrm = evaluate_candidates(rep["offsets"], rep["a"], rep["p"], rep["r"], rep["pi"], e, **kw)
        bts = evaluate_candidates(rep["offsets"], rep["a"], rep["p"], rep["r"], rep["pi"], e, interval="bootstrap",
                                  seed=0, **kw)
        assert bts.value == nrm.value
        assert bts.upper - bts.lower == pytest.approx(nrm.upper - nrm.lower, rel=0.15)


def test_bad_inputs_are_refused_with_reasons():
    o = np.array([0, 2, 5])
    pi = np.array([0.5, 0.5, 0.2, 0.3, 0.5])
    ok = dict(offsets=o, actions=[0, 2], propensities=[0.5, 0.4], rewards=[1.0, 0.0], target=pi)
    evaluate_candidates(**ok, estimator="ips")
    cases = [
        (dict(offsets=np.array([1, 2, 5])), "start at 0"),
        (dict(offsets=np.array([0, 2, 2, 5])), "at least one candidate"),
        (dict(actions=[0, 3]), "round 1 logged candidate 3"),
        (dict(propensities=[0.5, 0.0]), r"\(0, 1\]"),
        (dict(target=np.array([0.5, 0.5, 0.2, 0.3, 0.4])), "round 1 sums to 0.9"),
        (dict(target=pi[:4]), "one value per candidate"),
    ]
    for change, msg in cases:
        with pytest.raises(ValueError, match=msg):
            evaluate_candidates(**{**ok, **change}, estimator="ips")
    with pytest.raises(ValueError, match="needs reward_model"):
        evaluate_candidates(**ok, estimator="dr")
    with pytest.raises(ValueError, match="binary"):
        evaluate_candidates(**{**ok, "rewards": [0.5, 1.0]}, estimator="ips", rho0=0.1)
    with pytest.raises(ValueError, match="rho0 \\+ rho1 < 1"):
        evaluate_candidates(**ok, estimator="ips", rho0=0.5, rho1=0.5)
    with pytest.raises(ValueError, match="'tau' parameter"):
        evaluate_candidates(**ok, estimator="switch-dr", reward_model=pi, tau=0)


# ------------------------------------------------------------------ unbiasedness and coverage
#: how many standard errors of the mean over the replications the mean may sit from the truth. An
#: unbiased estimator's mean lands beyond 2 SE in 1 seed of 20, and the estimators of one data set move
#: together (their z-scores over seeds 100-109 track each other and look standard normal), so this
#: suite's ~10 correlated checks would fail a fixed seed by chance about 1 time in 4 at 2 SE; 3 SE
#: keeps a real bias of ~0.3 sd of one replication's estimate visible (SE = sd/√200).
#: Measured at this file's seeds (z = (mean − truth)/SE; coverage of the 95 % intervals):
#:   candidates, clean:           ips +1.68 .955, snips +1.97 .955, dr +1.91 .955, sndr +1.92 .955,
#:                                dm +0.85 (no interval), switch-dr +1.74 .925, dros +2.02 .950
#:   candidates, flips (.2, .3):  ips −2.79 .950, snips −2.33 .955, dr −1.75 .960, sndr −1.68 .960,
#:                                dm −0.86, switch-dr −1.26 .970, dros −1.44 .960
#:   candidates, per-candidate:   ips +0.31 .960, snips +0.49 .955, dr +0.79 .970, sndr +0.80 .970,
#:                                dm +0.16, switch-dr +0.62 .965, dros +0.34 .965
#:   slates (clean / .2,.3 / per-candidate): slot-ips −0.51 .940 / +0.16 .965 / +1.57 .940,
#:                                pi −0.62 .965 / +1.17 .935 / +1.74 .915
#: IPS's z over 30 other seeds (1000-1029): mean −0.20, sd 1.14 (clean); −0.05, 1.07 (flips .2, .3).
Z_BIAS = 3.0
#: the 2-SE criterion, checked over each data set's estimators together: an unbiased estimator's mean is
#: beyond 2 SE with probability 0.05, so more than this many of one data set's estimators beyond 2 SE
#: (7 candidate-set estimators, 2 slate estimators) would be a 1-in-250-or-rarer event for independent
#: estimators (they are correlated, which makes a pair beyond together likelier: IPS and SNIPS with
#: flips above, z −2.79 and −2.33, are one such pair).
MAX_BEYOND_2SE = {"candidates": 2, "slates": 1}


def _check_replications(values, lowers, uppers, truth, label):
    values, lowers, uppers = map(np.asarray, (values, lowers, uppers))
    se = values.std(ddof=1) / math.sqrt(values.size)
    cover = float(np.mean((lowers <= truth) & (truth <= uppers)))
    z = (values.mean() - truth) / se
    assert abs(z) <= Z_BIAS, f"{label}: mean {values.mean():.5f}, truth {truth:.5f}, se {se:.5f} (z = {z:+.2f})"
    assert 0.90 <= cover <= 0.98, f"{label}: coverage {cover:.3f}"
    return z, cover


@pytest.mark.parametrize("noise", ["none", "scalar", "per-candidate"])
def test_candidate_estimators_are_unbiased_and_cover(noise):
    truth = _true_value()
    sim = _simulate(R * N, seed={"none": 100, "scalar": 101, "per-candidate": 102}[noise], noise=noise)
    plan = [("ips", "wrong", {}), ("snips", "wrong", {}), ("dr", "wrong", {}), ("sndr", "wrong", {}),
            ("dm", "right", {}), ("switch-dr", "right", {"tau": 1.5}), ("dros", "right", {"lam": 2.0})]
    out = {e: ([], [], []) for e, _, _ in plan}
    for k in range(R):
        rep = _replica(sim, k, N)
        rho0, rho1 = _rates(rep, noise)
        for e, model, kw in plan:
            est = evaluate_candidates(rep["offsets"], rep["a"], rep["p"], rep["r"], rep["pi"], e, rep[model],
                                      rho0=rho0, rho1=rho1, **kw)
            for lst, v in zip(out[e], (est.value, est.lower, est.upper)):
                lst.append(v)
    zs = {}
    for e, model, _ in plan:
        vals, lo, hi = out[e]
        if e in ("dm", "switch-dr", "dros"):  # no interval (τ, λ finite); with the right model they are unbiased
            se = np.std(vals, ddof=1) / math.sqrt(R)
            zs[e] = (np.mean(vals) - truth) / se
            assert abs(zs[e]) <= Z_BIAS and lo == vals
            continue
        zs[e] = _check_replications(vals, lo, hi, truth, f"{e} ({model} model, {noise} flips)")[0]
    beyond = {e: round(float(z), 2) for e, z in zs.items() if abs(z) > 2.0}
    assert len(beyond) <= MAX_BEYOND_2SE["candidates"], f"beyond 2 SE ({noise} flips): {beyond}"


def test_switch_dr_and_dros_withhold_their_interval_when_they_truncate():
    """With a finite τ or λ the interval would miss the bias the truncation leaves with a wrong model (it
    covered 21-65 % of logistic-click logs with a linear model): none is given, with the reason; with
    τ = λ = ∞ they are DR, interval included."""
    from noisyfeedback.ope.candidates import SHRUNK_NOTE

    rep = _replica(_simulate(300, seed=11, noise="none"), 0, 300)
    args = (rep["offsets"], rep["a"], rep["p"], rep["r"], rep["pi"])
    dr = evaluate_candidates(*args, "dr", rep["wrong"])
    for e, kw in (("switch-dr", {"tau": 1.5}), ("dros", {"lam": 2.0})):
        for interval in ("normal", "bootstrap"):
            est = evaluate_candidates(*args, e, rep["wrong"], interval=interval, seed=0, **kw)
            assert est.interval == "none" and est.lower == est.value == est.upper and est.note == SHRUNK_NOTE
        assert evaluate_candidates(*args, e, rep["wrong"], interval="none", **kw).note == ""
        full = evaluate_candidates(*args, e, rep["wrong"])  # τ = λ = ∞: DR
        assert (full.value, full.lower, full.upper, full.interval) == (dr.value, dr.lower, dr.upper, "normal")
        assert full.lower < full.value < full.upper


# ------------------------------------------------------------------ slates
EXAM = np.array([1.0, 0.5])                                  # examination probability of slots 0, 1
ATTR = np.array([[0.2, 0.5, 0.7], [0.6, 0.4, 0.1]])          # attraction of (context, item type)
SLATE_SIZES = (3, 4)
L = 2


def _slate_true_value():
    v = 0.0
    for c in (0, 1):
        for m in SLATE_SIZES:
            for types in itertools.product(range(3), repeat=m):
                pi = ref.sequential_slates(list(_softmax(4.0 * ATTR[c, list(types)])), L)
                val = sum(prob * sum(EXAM[k] * ATTR[c, types[j]] for k, j in enumerate(s)) for s, prob in pi.items())
                v += 0.5 / len(SLATE_SIZES) / 3 ** m * val
    return v


def _simulate_slates(n_rounds, seed, noise):
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 2, n_rounds)
    m = rng.choice(SLATE_SIZES, n_rounds)
    offsets = np.concatenate([[0], np.cumsum(m)]).astype(np.int64)
    total = int(offsets[-1])
    t = rng.integers(0, 3, total)
    cc = np.repeat(c, m)
    mu = _softmax_ragged(LOG_SCORE[cc, t], offsets)
    pi = _softmax_ragged(4.0 * ATTR[cc, t], offsets)
    # sequential sampling without replacement ∝ mu = Plackett–Luce = top-L of log mu + Gumbel noise
    g = np.log(mu) + rng.gumbel(size=total)
    slates = np.empty((n_rounds, L), dtype=np.int64)
    for size in SLATE_SIZES:
        rows = np.flatnonzero(m == size)
        G = g[offsets[rows][:, None] + np.arange(size)]
        slates[rows] = np.argsort(-G, axis=1)[:, :L]
    flat = offsets[:-1, None] + slates
    clicks = (rng.random((n_rounds, L)) < EXAM * ATTR[c[:, None], t[flat]]).astype(float)
    if noise == "none":
        rho0 = rho1 = np.zeros(total)
    elif noise == "scalar":
        rho0, rho1 = np.full(total, 0.2), np.full(total, 0.3)
    else:
        rho0, rho1 = RHO0_T[t], RHO1_T[t]
    u = rng.random((n_rounds, L))
    obs = np.where(clicks == 1, (u >= rho1[flat]).astype(float), (u < rho0[flat]).astype(float))
    return dict(offsets=offsets, slates=slates, r=obs, mu=mu, pi=pi, rho0=rho0, rho1=rho1, m=m)


def _slate_replica(sim, k, n):
    lo, hi = sim["offsets"][k * n], sim["offsets"][(k + 1) * n]
    sl, cl = slice(k * n, (k + 1) * n), slice(lo, hi)
    return dict(offsets=sim["offsets"][k * n:(k + 1) * n + 1] - lo, slates=sim["slates"][sl], r=sim["r"][sl],
                mu=sim["mu"][cl], pi=sim["pi"][cl], rho0=sim["rho0"][cl], rho1=sim["rho1"][cl])


def test_sequential_slate_moments_match_enumeration():
    sim = _simulate_slates(40, seed=20, noise="none")
    marg, gammas = sequential_slate_moments(sim["offsets"], sim["mu"], L)
    o = sim["offsets"]
    for i in range(40):
        p = list(sim["mu"][o[i]:o[i + 1]])
        dist = ref.sequential_slates(p, L)
        assert sum(dist.values()) == pytest.approx(1.0)
        np.testing.assert_allclose(marg[o[i]:o[i + 1]], ref.slate_marginals(dist, len(p), L), rtol=1e-12, atol=1e-15)
        m = len(p)
        G = np.zeros((L * m, L * m))
        for s, prob in dist.items():
            idx = [k * m + j for k, j in enumerate(s)]
            G[np.ix_(idx, idx)] += prob
        np.testing.assert_allclose(gammas[i], G, rtol=1e-12, atol=1e-15)


def _slate_rounds_for_reference(rep):
    o = rep["offsets"]
    rounds = []
    for i in range(len(o) - 1):
        m = int(o[i + 1] - o[i])
        rounds.append(dict(m=m, s=tuple(int(j) for j in rep["slates"][i]), r=list(rep["r"][i]),
                           logging=ref.sequential_slates(list(rep["mu"][o[i]:o[i + 1]]), L),
                           target=ref.sequential_slates(list(rep["pi"][o[i]:o[i + 1]]), L),
                           rho0=list(rep["rho0"][o[i]:o[i + 1]]), rho1=list(rep["rho1"][o[i]:o[i + 1]])))
    return rounds


@pytest.mark.parametrize("noise", ["none", "scalar", "per-candidate"])
def test_slate_estimators_match_the_reference(noise):
    rep = _slate_replica(_simulate_slates(150, seed=21, noise=noise), 0, 150)
    rho0, rho1 = _rates(rep, noise)
    mu_m, gam = sequential_slate_moments(rep["offsets"], rep["mu"], L)
    pi_m, _ = sequential_slate_moments(rep["offsets"], rep["pi"], L)
    rounds = _slate_rounds_for_reference(rep)
    est = slot_ips(rep["offsets"], rep["slates"], rep["r"], pi_m, mu_m, rho0=rho0, rho1=rho1)
    assert est.value == pytest.approx(ref.slot_ips(rounds), rel=1e-10)
    est = pseudoinverse(rep["offsets"], rep["slates"], rep["r"], pi_m, logging_gamma=gam, rho0=rho0, rho1=rho1)
    assert est.value == pytest.approx(ref.pseudoinverse(rounds), rel=1e-8)
    assert est.lower < est.value < est.upper and est.estimator == "pi"


def test_pseudoinverse_closed_form_for_independent_slots():
    """For a logging policy that fills the slots independently (a product distribution), the closed
    form Σ_l π_l/μ_l − L + 1 equals q_πᵀ Γ_μ⁺ 1_s with Γ_μ built from the product."""
    rng = np.random.default_rng(22)
    n, m = 50, 4
    offsets = np.arange(0, (n + 1) * m, m, dtype=np.int64)
    mu = rng.dirichlet(np.ones(m), size=(n, L)).transpose(0, 2, 1).reshape(n * m, L)   # per slot
    pi = rng.dirichlet(np.ones(m), size=(n, L)).transpose(0, 2, 1).reshape(n * m, L)
    slates = rng.integers(0, m, (n, L))
    slates[:, 1] = (slates[:, 0] + 1 + rng.integers(0, m - 1, n)) % m   # distinct, as the estimator wants
    rewards = rng.random((n, L))
    gam = []
    for i in range(n):
        M = mu[i * m:(i + 1) * m]
        dist = {s: M[s[0], 0] * M[s[1], 1] for s in itertools.product(range(m), repeat=L)}
        G = np.zeros((L * m, L * m))
        for s, prob in dist.items():
            idx = [k * m + j for k, j in enumerate(s)]
            v = np.zeros(L * m)
            v[idx] = 1
            G += prob * np.outer(v, v)
        gam.append(G)
    closed = pseudoinverse(offsets, slates, rewards, pi, logging_marginals=mu)
    general = pseudoinverse(offsets, slates, rewards, pi, logging_gamma=gam)
    assert closed.value == pytest.approx(general.value, rel=1e-9)


def test_slate_bad_inputs():
    o = np.array([0, 3])
    M = np.full((3, 2), 1 / 3)
    with pytest.raises(ValueError, match="distinct"):
        slot_ips(o, np.array([[1, 1]]), np.zeros((1, 2)), M, M)
    with pytest.raises(ValueError, match="sum to 1"):
        slot_ips(o, np.array([[1, 0]]), np.zeros((1, 2)), M * 0.5, M)
    with pytest.raises(ValueError, match="exactly one"):
        pseudoinverse(o, np.array([[1, 0]]), np.zeros((1, 2)), M)
    with pytest.raises(ValueError, match="n_slots"):
        sequential_slate_moments(o, np.full(3, 1 / 3), 4)


@pytest.mark.parametrize("noise", ["none", "scalar", "per-candidate"])
def test_slate_estimators_are_unbiased_and_cover(noise):
    truth = _slate_true_value()
    n = 300
    sim = _simulate_slates(R * n, seed={"none": 200, "scalar": 201, "per-candidate": 202}[noise], noise=noise)
    mu_m, gam = sequential_slate_moments(sim["offsets"], sim["mu"], L)
    pi_m, _ = sequential_slate_moments(sim["offsets"], sim["pi"], L)
    res = {"slot-ips": ([], [], []), "pi": ([], [], [])}
    for k in range(R):
        rep = _slate_replica(sim, k, n)
        lo, hi = sim["offsets"][k * n], sim["offsets"][(k + 1) * n]
        rho0, rho1 = _rates(rep, noise)
        e1 = slot_ips(rep["offsets"], rep["slates"], rep["r"], pi_m[lo:hi], mu_m[lo:hi], rho0=rho0, rho1=rho1)
        e2 = pseudoinverse(rep["offsets"], rep["slates"], rep["r"], pi_m[lo:hi], logging_gamma=gam[k * n:(k + 1) * n],
                           rho0=rho0, rho1=rho1)
        for e in (e1, e2):
            for lst, v in zip(res[e.estimator], (e.value, e.lower, e.upper)):
                lst.append(v)
    zs = {name: _check_replications(vals, lo, hi, truth, f"{name} ({noise} flips)")[0]
          for name, (vals, lo, hi) in res.items()}
    beyond = {e: round(float(z), 2) for e, z in zs.items() if abs(z) > 2.0}
    assert len(beyond) <= MAX_BEYOND_2SE["slates"], f"beyond 2 SE ({noise} flips): {beyond}"


def test_evaluate_candidates_all_runs_each_estimator():
    rep = _replica(_simulate(200, seed=14, noise="none"), 0, 200)
    args = (rep["offsets"], rep["a"], rep["p"], rep["r"], rep["pi"])
    out = nf.ope.evaluate_candidates_all(*args, rep["wrong"], seed=0)
    assert list(out) == list(nf.ope.CANDIDATE_ESTIMATORS)
    assert out["dr"].value == evaluate_candidates(*args, "dr", rep["wrong"]).value
    assert list(nf.ope.evaluate_candidates_all(*args)) == ["ips", "snips"]  # no reward model


def test_exports():
    assert nf.ope.evaluate_candidates is evaluate_candidates
    assert set(nf.ope.CANDIDATE_ESTIMATORS) == {"ips", "snips", "dm", "dr", "switch-dr", "dros", "sndr"}
    assert nf.ope.SLATE_ESTIMATORS == ("slot-ips", "pi")


@pytest.mark.parametrize("per_candidate", [False, True])
def test_unbiased_estimators_have_the_true_value_as_their_exact_expectation(per_candidate):
    """Unbiasedness by exact enumeration, not Monte Carlo: over one logged round (the logged candidate drawn
    from μ, its click from Q flipped with the candidate's ρ0, ρ1), the expectation of IPS and DR with any
    reward model, and of DM, Switch-DR and DRos with the right one, is Σ_j π_j·Q_j to rounding. (SNIPS and
    SNDR are self-normalised: consistent, not unbiased at a finite n; their check is the replication test.)"""
    rng = np.random.default_rng(7)
    for trial in range(5):
        m = int(rng.integers(2, 7))
        mu, pi = rng.dirichlet(np.ones(m)), rng.dirichlet(np.ones(m))
        Q = rng.uniform(0.05, 0.9, m)
        if per_candidate:
            rho0, rho1 = rng.uniform(0, 0.3, m), rng.uniform(0, 0.3, m)
        else:
            rho0, rho1 = np.full(m, 0.15), np.full(m, 0.25)
        observed = rho0 + (1 - rho0 - rho1) * Q             # P(logged click = 1 | candidate)
        wrong = rng.uniform(0, 1, m)                        # a reward model with no relation to Q
        right = observed                                    # on the logged rewards' scale (h is applied)
        truth = float(pi @ Q)
        kw = {"rho0": rho0 if per_candidate else 0.15, "rho1": rho1 if per_candidate else 0.25,
              "interval": "none"}
        plan = [("ips", None, {}), ("dr", wrong, {}), ("dm", right, {}), ("dr", right, {}),
                ("switch-dr", right, {"tau": 1.5}), ("dros", right, {"lam": 2.0})]
        for est, model, extra in plan:
            expect = 0.0
            for j in range(m):
                for click, p_click in ((1.0, observed[j]), (0.0, 1 - observed[j])):
                    e = evaluate_candidates([0, m], [j], [mu[j]], [click], pi, est, model, **kw, **extra)
                    expect += mu[j] * p_click * e.value
            assert expect == pytest.approx(truth, rel=1e-12, abs=1e-12), (trial, est, expect, truth)
