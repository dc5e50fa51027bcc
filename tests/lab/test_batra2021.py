"""``reproduce batra2021``: the quick recipe writes a complete, self-contained report (run once per module)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from report_checks import checked_images

from noisyfeedback.lab import read_results, recipe_names, reproduce
from noisyfeedback.lab.papers import batra2021 as batra

#: the quick plan, shrunk for the test (the real quick mode runs 30,000 rounds; see batra.QUICK_PLAN)
TEST_PLAN = {
    "datasets": [
        {"name": "synsep", "n_samples": 2_000, "seed": 0, "label": "SynSep"},
        {"name": "digits", "normalize": True, "label": "digits"},
    ],
    "n_rounds": 3_000,
    "dbf_gammas": [0.12, 0.2, 0.25, 0.3, 0.8],
    "soba_gammas": [0.02, 0.1],
    "n_checkpoints": 25,
}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("batra2021")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(batra.plans, "QUICK_PLAN", {**batra.QUICK_PLAN, **TEST_PLAN})
        index = reproduce("batra2021", quick=True, out=out, progress=False)
    return index


@pytest.fixture(scope="module")
def page(report):
    return report.read_text(encoding="utf-8")


def test_registered():
    assert "batra2021" in recipe_names()


def test_index_exists_and_every_link_resolves(report, page):
    assert report.name == "index.html" and report.is_file()
    assert (report.parent / "index.md").is_file()
    imgs = checked_images(report, page)
    assert len(imgs) >= 8  # Figures 2 (×2), 3, 4 (×2), 5 (×2), 6 in quick mode


def test_report_says_cifar_and_svhn_features_are_unavailable(page):
    text = re.sub(r"<[^>]+>", "", page)
    assert "CIFAR-10" in text and "SVHN" in text
    assert re.search(r"CIFAR-10 and SVHN[^.]*not run", text)
    assert "VGG-16" in text and "not available" in text


def test_claims_table_present(page):
    m = re.search(r"<caption[^>]*>Claims</caption>(.*?)</table>", page, re.S)
    assert m, "no claims table"
    table = m.group(1)
    assert "<th>paper</th>" in page and "<th>ours</th>" in page and "<th>reproduced</th>" in page
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
    assert len(rows) >= 10
    # every checked claim is judged yes / no; the ones quick mode cannot check say so
    judged = re.findall(r"<td class=\"txt\">(yes|<strong>no</strong>|\*\*no\*\*|—)</td>", table)
    assert len(judged) >= 10
    assert "converges" in table and "MC-SLP" in table


def test_table1_has_the_papers_gamma_next_to_ours(page):
    m = re.search(r"<caption[^>]*>Table 1[^<]*</caption>(.*?)</table>", page, re.S)
    assert m
    t = m.group(1)
    assert "0.31" in t and "0.5" in t  # SVHN's low/high m γ from the paper
    assert "not run (no VGG-16 features)" in t


def test_set_miss_metric_reported(report, page):
    assert "set-miss rate" in page
    md = (report.parent / "index.md").read_text(encoding="utf-8")
    rows = [ln for ln in md.splitlines() if ln.startswith("| digits | MC-DBF m=")]
    assert len(rows) == 3
    for ln in rows:
        miss = ln.strip("|").split("|")[-1].strip()
        assert re.match(r"0\.\d{4} ± 0\.\d{4}", miss), ln
    df = read_results(report.parent / "results" / "digits")
    dbf = df[(df["phase"] == "report") & (df["learner"] == "MCDBF")]
    assert dbf["set_miss_rate"].notna().all() and (dbf["set_miss_rate"] < dbf["error_rate"] + 1e-12).all()


def test_gamma_chosen_on_tuning_seeds_separate_from_report_seeds(report):
    df = read_results(report.parent / "results" / "SynSep")
    tun, rep = df[df["phase"] == "tuning"], df[df["phase"] == "report"]
    assert set(tun["seed"]).isdisjoint(set(rep["seed"]))
    for paper_gamma in (0.12, 0.2, 0.25, 0.3):  # the paper's MNIST / Fashion-MNIST values are in the grid
        assert np.isclose(tun.loc[tun["learner"] == "MCDBF", "learner.gamma"], paper_gamma).any()
    # every m level of MC-DBF got its own selection
    chosen = tun[tun["learner"] == "MCDBF"].groupby("learner.m")["chosen"].first()
    assert len(chosen) == 3


def test_m_sweep_covers_every_m(report):
    df = read_results(report.parent / "results" / "digits-m")
    assert sorted(df["learner.m"].astype(int).unique()) == list(range(1, 10))
    assert df["learner.gamma"].nunique() == 1


# ------------------------------------------------------------ helpers
def test_m_levels():
    assert batra.m_levels(10) == {"low": 2, "medium": 5, "high": 8}
    assert batra.m_levels(9) == {"low": 2, "medium": 4, "high": 7}


def test_window_error_from_a_cumulative_curve():
    # 100 rounds: 30 mistakes in the first 50, 10 in the last 50
    cps = [10, 50, 100]
    curve = [0.5, 30 / 50, 40 / 100]
    assert batra.window_error(cps, curve, 50) == pytest.approx(10 / 50)
    assert batra.window_error(cps, curve, 60) == pytest.approx(10 / 50)  # last checkpoint <= 60 is 50
    assert batra.window_error(cps, curve, 5) == pytest.approx(0.4)


def test_checkpoints_hold_the_gap_rounds():
    cps = batra.plans._checkpoints(1_000_000, 60)
    assert {100_000, 500_000, 1_000_000} <= set(cps)
    assert cps == sorted(set(cps))


def test_gap_table_is_mcdbf_minus_mcslp():
    cps = [10, 50, 100]
    rows = []
    for learner, curve, miss in (("MCDBF", [0.9, 0.5, 0.3], 0.1), ("MCSLP", [0.5, 0.3, 0.2], 0.05)):
        for seed in (0, 1):
            rows.append({"dataset": "D", "learner": learner, "learner.m": 2, "learner.gamma": 0.3 if learner == "MCDBF"
                         else np.nan, "seed": seed, "n_rounds": 100, "checkpoints": cps, "curve": curve,
                         "set_miss_rate": miss, "error_rate": curve[-1]})
    gaps = batra.gap_table(pd.DataFrame(rows))
    assert len(gaps) == 1
    r = gaps.iloc[0]
    assert r["gap at T"] == pytest.approx(0.1)
    assert r["gap at T/10"] == pytest.approx(0.4)
    # second half: MC-DBF (30 - 25)/50 = 0.1, MC-SLP (20 - 15)/50 = 0.1
    assert r["gap, 2nd half"] == pytest.approx(0.0)
