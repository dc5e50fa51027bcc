"""``reproduce moroshko``: the quick recipe writes every figure of the paper with judged claims; the recipe's
building blocks (the Figure 7 trace, the bisection for a, backend independence, the claim judges)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from conftest import JIT_DISABLED
from report_checks import checked_images

import noisyfeedback as nf
from noisyfeedback.lab import recipe_names, reproduce
from noisyfeedback.lab.papers import moroshko as mo

#: the quick plan, shrunk further for the test (see mo.QUICK_PLAN for the demo's sizes)
TEST_PLAN = {
    "r_grid": [1.0, 10.0, 100.0, 1000.0],
    "beta_grid": [0.1, 10.0],
    "seeds": 2,
    "n_checkpoints": 15,
    "synthetic": {"n_samples": 3_000, "M": 5.0},
    "channel": {"n_samples": 2_000, "Ms": [0.5, 5.0]},
    "speech": {"n_samples": 2_000, "n_taps": 32, "room_length": 32, "tune_fraction": 0.2, "peak": 5.0,
               "floor": 0.05},
    "budget": {"n_samples": 1_000, "M": 5.0, "budgets": [1.5, 2.5], "seeds": 3, "a_steps": 6},
    "self_tuned_budget": 1.5,
}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("moroshko")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mo.plans, "QUICK_PLAN", {**mo.QUICK_PLAN, **TEST_PLAN})
        index = reproduce("moroshko", quick=True, out=out, progress=False)
    return index


@pytest.fixture(scope="module")
def markdown(report):
    return (report.parent / "index.md").read_text(encoding="utf-8")


def test_registered():
    assert "moroshko" in recipe_names()


def test_every_figure_of_the_paper_is_in_the_report(report, markdown):
    page = report.read_text(encoding="utf-8")
    imgs = checked_images(report, page)
    assert len(imgs) == 6  # Figures 2, 4, 5, 6, 7 and the sensitivity to r
    captions = re.findall(r"^\*(Figure \d)", markdown, flags=re.M)
    assert sorted(set(captions)) == ["Figure 2", "Figure 4", "Figure 5", "Figure 6", "Figure 7"]
    for M in ("M = 0.5", "M = 5"):
        assert f"channel equalization, {M}" in markdown


def test_claims_cover_every_figure_and_say_whether_they_hold(markdown):
    table = markdown.split("**Claims**")[1].split("\n\n")[1]
    rows = [r for r in table.splitlines()[2:] if r.startswith("|")]
    for fig in ("Fig. 2", "Fig. 4", "Fig. 5", "Fig. 6", "Fig. 7", "Target"):
        assert any(fig in r for r in rows), fig
    verdicts = [r.split("|")[4].strip() for r in rows]
    assert set(verdicts) <= {"yes", "**no**", "—"} and len(rows) >= 20
    assert re.search(r"\d+ of \d+ checked claims hold", markdown)


def test_report_says_the_speech_data_is_a_substitute(markdown):
    assert "substitute" in markdown.lower()
    assert re.search(r"none of these are public", markdown)
    assert "Figure 5 (substitute data)" in markdown


def test_results_tables_are_written(report):
    res = report.parent / "results"
    tuning = pd.read_parquet(res / "tuning.parquet")
    single = pd.read_parquet(res / "single_label.parquet")
    budget = pd.read_parquet(res / "budget.parquet")
    assert set(single["variant"]) == set(mo.VARIANTS)
    assert len(single) == len(mo.VARIANTS) * TEST_PLAN["seeds"] * (1 + len(TEST_PLAN["channel"]["Ms"]) + 1)
    # β tuned jointly with r; the other variants over r only (the paper's grid, then values past its edges)
    beta = tuning[(tuning["variant"] == "beta") & (tuning["kind"] == "single")]
    assert beta["paper_grid"].sum() == len(TEST_PLAN["r_grid"]) * len(TEST_PLAN["beta_grid"]) * 4
    # acceptance 2 in the recipe's own runs: auto_self_tuned never above B at any checkpoint
    st = budget[budget["strategy"] == "auto_self_tuned"]
    assert len(st) and (st["max_labels_per_round"] <= st["B"]).all() and (st["labels_rate"] > 1).all()


def test_tuning_grids_are_extended_past_a_binding_edge_in_the_recipe(report, markdown):
    """Every (setting, variant) ends interior or with extend_grid values added past the edge; the grid stays
    full (every r with every β tried); the reported runs use the extended best."""
    steps = mo.QUICK_PLAN["extend_grid"]
    tuning = pd.read_parquet(report.parent / "results" / "tuning.parquet")
    single = pd.read_parquet(report.parent / "results" / "single_label.parquet")
    moved = 0
    for (setting, variant), g in tuning[tuning["kind"] == "single"].groupby(["setting", "variant"]):
        best = g.loc[g["mse"].idxmin()]
        paper = g[g["paper_grid"].astype(bool)]
        assert set(paper["r"]) == set(TEST_PLAN["r_grid"])
        axes = ["r", "beta"] if variant == "beta" else ["r"]
        assert len(g) == np.prod([g[a].nunique() for a in axes])  # a full grid
        for a in axes:
            values = sorted(g[a].unique())
            added = len(set(values) - set(paper[a]))
            assert values[0] < best[a] < values[-1] or added == steps, (setting, variant, a)
            assert added == 0 or best[a] != paper.loc[paper["mse"].idxmin(), a] or \
                values[0] < paper.loc[paper["mse"].idxmin(), a] < values[-1] or added == steps
        moved += int(paper["mse"].min() > best["mse"])
        ran = single[(single["setting"] == setting) & (single["variant"] == variant)]
        assert (ran["r"] == best["r"]).all()
    assert moved > 0  # the test grid is narrow: some edge binds
    assert "paper grid best" in markdown and f"up to {steps} more values" in markdown


def _bowl(r_opt: float, beta_opt: float | None, calls: list):
    """A synthetic tuning objective with its minimum at (r_opt, beta_opt), quadratic in log10."""
    def evaluate(r, b):
        calls.append((r, b))
        mse = (np.log10(r) - np.log10(r_opt)) ** 2 + (0.0 if b is None else (np.log10(b) - np.log10(beta_opt)) ** 2)
        return {"r": r, **({} if b is None else {"beta": b}), "mse": float(mse)}
    return evaluate


@pytest.mark.parametrize("r_opt, beta_opt", [(0.003, 4_000.0), (300.0, 0.5), (3.0, 4_000.0), (3.0, None)])
def test_tuning_extension_stops_at_an_interior_best(r_opt, beta_opt):
    r_grid, beta_grid = [0.01, 0.1, 1.0, 10.0], [1.0, 10.0, 100.0, 1000.0]
    calls: list = []
    rows = mo.tasks.tune_grid(_bowl(r_opt, beta_opt, calls), r_grid, None if beta_opt is None else beta_grid, 4)
    best, paper = mo.tasks._best(rows), mo.tasks._paper_best(rows)
    assert len(calls) == len(rows) == len(set(calls))  # every value once
    r_values = sorted({row["r"] for row in rows})
    # interior, and the value of the (decade) grid nearest the optimum
    assert r_values[0] < best["r"] < r_values[-1] and abs(np.log10(best["r"] / r_opt)) <= 0.5
    assert paper["r"] in r_grid and sum(row["paper_grid"] for row in rows) == len(r_grid) * (
        1 if beta_opt is None else len(beta_grid))
    assert len(r_values) - len(r_grid) <= 4 and all(v > 0 for v in r_values)
    if beta_opt is not None:
        b_values = sorted({row["beta"] for row in rows})
        assert b_values[0] < best["beta"] < b_values[-1] and abs(np.log10(best["beta"] / beta_opt)) <= 0.5
        assert len(rows) == len(r_values) * len(b_values)  # whole lines: a full grid
    if 0.01 < r_opt < 10.0:  # r interior on the paper's grid: no r added
        assert r_values == r_grid


def test_tuning_extension_is_capped_and_off_without_extend():
    r_grid = [1.0, 10.0, 100.0]
    calls: list = []
    rows = mo.tasks.tune_grid(_bowl(1e-9, None, calls), r_grid, None, 4)
    values = sorted(row["r"] for row in rows)
    assert len(values) == 7 and mo.tasks._best(rows)["r"] == values[0]  # still on the edge after 4 values
    np.testing.assert_allclose(values[:4], [1e-4, 1e-3, 1e-2, 1e-1])
    assert mo.tasks.binding_side(values, values[0]) == "low"
    plain = mo.tasks.tune_grid(_bowl(1e-9, None, []), r_grid, None, 0)
    assert plain == [{"r": r, "mse": row["mse"]} for r, row in zip(r_grid, rows)]  # the paper's grid, as before


# ---------------------------------------------------------------- building blocks
@pytest.mark.parametrize("schedule", ["uniform", "decreasing"])
def test_self_tuned_trace_is_the_in_order_simulation(schedule):
    n = 1_000
    data = {"kind": "synthetic", "n_samples": n, "seed": 4}
    noise = mo.plans._budget_noise(schedule, 5.0, 7)
    learner = {"cls": "ORS", "params": {"r": 10.0, "scaling": "one_sample_pred", "variance": "unknown",
                                        "budget": 1.5, "strategy": "auto_self_tuned", "seed": 3}}
    tr = mo.self_tuned_trace(data, noise, learner, sim_seed=5, block=100)
    X, y = mo.dataset(data)
    L = mo.make_learner(learner)
    t = nf.simulate(L, X, y, mo.noise_channel(noise, n), n, seed=5, checkpoints=np.arange(100, n + 1, 100),
                    shuffle=False)
    np.testing.assert_array_equal(np.asarray(tr["w"]), L.w_)  # bit for bit
    assert tr["a"][-1] == L.a_ and tr["rounds"] == list(range(100, n + 1, 100))
    np.testing.assert_array_equal(tr["budget"], t.metrics["labels_curve"])
    assert len(set(tr["a"])) > 1  # a does move


def test_find_a_spends_at_most_the_budget_and_close_to_it():
    data = {"kind": "synthetic", "n_samples": 1_500, "seed": 1}
    learner = mo.tasks._with(mo.plans._budget_learner("scaling", "auto", 1.8, 1_500), r=30.0, seed=0)
    a, spend = mo.find_a(data, {"kind": "uniform", "M": 5.0, "seed": 2}, learner, 1.8, steps=12, sim_seed=0)
    assert spend <= 1.8 and spend > 1.7
    rerun = mo.run_one(data, {"kind": "uniform", "M": 5.0, "seed": 2}, mo.tasks._with(learner, a=a), 0, 2)
    assert rerun["labels_rate"] == spend


def test_results_do_not_depend_on_the_number_of_jobs(tmp_path):
    from noisyfeedback.lab.engine import Engine

    tasks = []
    for v in ["noisy feedback", "beta", "two samples (unknown v)"]:
        tasks.append({"op": "report", "key": ("single", "t", v), "n_checkpoints": 5, "runs": [
            {"seed": s, "data": {"kind": "synthetic", "n_samples": 500, "seed": s},
             "noise": {"kind": "uniform", "M": 2.0, "seed": 10 + s},
             "learner": mo.tasks._with(mo.plans._variant_learner(v), r=5.0), "sim_seed": s} for s in range(2)]})
    with Engine(tmp_path / "serial", progress=False) as eng:
        serial = mo.plans._map(eng, tasks, "serial")
    with Engine(tmp_path / "joblib", jobs=2, progress=False) as eng:
        parallel = mo.plans._map(eng, tasks, "joblib")
    assert list(serial) == list(parallel) == [t["key"] for t in tasks]
    for k in serial:
        assert serial[k]["runs"] == parallel[k]["runs"]


def test_late_mse_is_the_mean_over_the_last_rounds():
    rng = np.random.default_rng(0)
    sq = rng.random(1_000)
    cps = mo.tasks._checkpoints(1_000, 10)
    curve = np.cumsum(sq)[cps - 1] / cps
    assert mo.late_mse(cps, curve) == pytest.approx(sq[800:].mean(), rel=1e-12)


# ---------------------------------------------------------------- the claim judges can fail
def _summary(report):
    single = pd.read_parquet(report.parent / "results" / "single_label.parquet")
    single["checkpoints"] = [[1]] * len(single)
    single["curve"] = [[0.0]] * len(single)
    return mo.summary_single(single)


def test_claims_follow_the_measurements(report):
    s = _summary(report)
    syn = [x for x in s["setting"] if x.startswith("synthetic")][0]

    def judged(summary):
        return {c.what: c.holds for c in mo.make_claims(summary, pd.DataFrame(), {}, [], 1.5)}

    base = judged(s)
    key = f"Target ({syn}): ORS 'beta' ends with a lower MSE than NLMS on noisy labels"
    assert key in base
    worse = s.copy()
    sel = (worse["setting"] == syn) & (worse["variant"] == "beta")
    worse.loc[sel, "seeds below noisy NLMS"] = 0
    worse.loc[sel, "MSE"] = 10.0
    after = judged(worse)
    assert after[key] is False
    assert after[f"Fig. 2 ({syn}, known variance): 'beta' (6) outperforms the other variants"] is False
    better = s.copy()
    sel = (better["setting"] == syn) & (better["variant"] == "beta")
    better.loc[sel, "seeds below noisy NLMS"] = better.loc[sel, "seeds"]
    better.loc[sel, "MSE"] = 1e-9
    assert judged(better)[f"Fig. 2 ({syn}, known variance): 'beta' (6) outperforms the other variants"] is True


def test_budget_claims_follow_the_measurements():
    rows = []
    for sched in mo.SCHEDULES:
        for B in (1.5, 2.5):
            for rule in mo.BUDGET_RULES:
                for k, s in enumerate(mo.STRATEGIES):
                    mse = 1.0 + 0.1 * k + (0.5 if rule == "no scaling" else 0.0)
                    rows.append({"schedule": sched, "B": B, "rule": rule, "strategy": s, "MSE": mse,
                                 "labels/round": 0.95 * B if s == "auto_self_tuned" else B,
                                 "max of labels so far / rounds so far": B})
    budget = pd.DataFrame(rows)
    # a single-label summary is needed for the Section 4.1 claims: a neutral one
    single = pd.DataFrame([{"setting": st, "variant": v, "MSE": 1.0, "late MSE": 1.0, "ratio to noisy NLMS": 1.0,
                            "worst seed ratio": 1.0, "seeds below noisy NLMS": 0, "seeds": 2}
                           for st in ("synthetic, M = 5", "channel equalization, M = 1", "speech substitute")
                           for v in mo.VARIANTS])
    claims = {c.what: c.holds for c in mo.make_claims(single, budget, {}, [1.5, 2.5], 1.5)}
    assert claims["Fig. 6 (uniform noise): the scaling approach outperforms 'no scaling'"] is True
    # const (k = 0) is the best strategy here, so 'auto' does not beat it
    assert claims["Fig. 6: 'auto' usually outperforms 'begin' and 'const' (with scaling)"] is False
    assert claims["Figs. 6–7: 'auto self tuned' never samples more labels than the given budget"]
    budget.loc[(budget["strategy"] == "auto_self_tuned"), "max of labels so far / rounds so far"] += 0.01
    claims = {c.what: c.holds for c in mo.make_claims(single, budget, {}, [1.5, 2.5], 1.5)}
    assert claims["Figs. 6–7: 'auto self tuned' never samples more labels than the given budget"] \
        is False


@pytest.mark.skipif(JIT_DISABLED, reason="learning quality needs many rounds")
def test_acceptance_ors_beats_nlms_in_the_recipe_protocol():
    """Acceptance 3 through the recipe's own protocol (in-order rows, r and β tuned per method on a separate
    sequence), smaller than the report's: 10,000 rounds, 4 seeds (measured on 12 seeds: ratio to NLMS 0.74 for
    'beta' and 0.80 for 'one sample and pred', worst seed 0.88 for both; the full recipe, 50,000 rounds and 20
    seeds, reports 0.74 and 0.83). Only a safe margin is asserted."""
    plan = {**mo.QUICK_PLAN, **TEST_PLAN, "seeds": 4, "synthetic": {"n_samples": 10_000, "M": 5.0},
            "r_grid": [float(v) for v in np.round(np.logspace(0, 3.5, 8), 3)], "beta_grid": [0.3, 3.0, 30.0]}
    settings = mo.plans._single_settings(plan)[:1]
    tuned = {}
    for v in ("noisy feedback", "beta", "one sample and pred"):
        data, noise = settings[0]["tune"]
        res = mo.work({"op": "tune", "key": v, "data": data, "noise": noise, "learner": mo.plans._variant_learner(v),
                       "r_grid": plan["r_grid"], "beta_grid": plan["beta_grid"],
                       "tune_beta": v == "beta"})
        best = mo.tasks._best(res["grid"])
        tuned[v] = mo.tasks._with(mo.plans._variant_learner(v), **{k: best[k] for k in ("r", "beta") if k in best})
    ratios = []
    for s, (data, noise) in enumerate(settings[0]["report"]):
        m = {v: mo.run_one(data, noise, tuned[v], s, 2)["mse"] for v in tuned}
        ratios.append([m["beta"] / m["noisy feedback"], m["one sample and pred"] / m["noisy feedback"]])
    ratios = np.array(ratios)
    assert (ratios < 1.0).all()
    assert (ratios.mean(axis=0) < 0.9).all()


def test_serial_and_two_processes_give_the_same_tables(report, tmp_path):
    from recipe_resume import assert_same_numbers

    from noisyfeedback.lab.recipes import run_paper

    again = run_paper(mo.PAPER, quick=True, data_dir=None, out_dir=tmp_path / "j2", jobs=2, progress=False,
                      plan={**mo.QUICK_PLAN, **TEST_PLAN})
    assert_same_numbers(report, again)
