"""reproduce open-bandit through the engine: the quick report (claims line, links, claims.json, results
tables) and a run killed with SIGKILL, then rerun, that resumes and gives the same numbers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from noisyfeedback.lab.papers import open_bandit as recipe

#: the quick plan, shrunk for the tests (a 4,000-row generated log, one flip setting, few draws)
TEST_PLAN = {**recipe.QUICK_PLAN, "n_boot": 10, "n_flip_draws": 10, "n_sim": 5_000, "flips": [[0.2, 0.1]],
             "quick_data": {"n": 4_000, "seed": 0}}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from noisyfeedback.lab.recipes import run_paper

    return run_paper(recipe.PAPER, quick=True, data_dir=None, out_dir=tmp_path_factory.mktemp("ob"),
                     progress=False, plan=TEST_PLAN)


def test_quick_report_has_the_claims_line_links_and_tables(report):
    from noisyfeedback.lab import recipe_names

    assert "open-bandit" in recipe_names()
    root = report.parent
    md = (root / "index.md").read_text(encoding="utf-8")
    info = json.loads((root / "claims.json").read_text(encoding="utf-8"))
    assert info["paper"] == "open-bandit" and info["n_claims"] == 3  # coverage, best estimator, one flip setting
    assert f"**{info['summary']}**" in md and "[The paper](https://arxiv.org/abs/2008.07146)" in md
    assert "checks the pipeline, not the paper's results" in md
    est = pd.read_parquet(root / "results" / "estimates.parquet")
    assert list(est["estimator"]) == ["IPS", "SNIPS", "DM (ridge)", "DR (ridge)"]
    flips = pd.read_parquet(root / "results" / "flips.parquet")
    assert len(flips) == 8 and set(flips["version"]) == {"plain", "corrected"}
    # problem, estimates, bootstrap, flips, learners
    assert len(list((root / "results" / "tasks").glob("*.parquet"))) == 5


def test_quick_report_has_the_learners_section_with_finite_numbers(report):
    root = report.parent
    md = (root / "index.md").read_text(encoding="utf-8")
    section = md.split("## Learners trained on half the random log", 1)[1].split("\n## ", 1)[0]
    for words in ("CatalogueSquareCB (item features)", "SquareCB (item index only)", "random (uniform)",
                  "BTS, on-policy (its own log)", "can and cannot show", "DM has no interval",
                  "min. detectable ratio (design)", "paired 95 % interval"):
        assert words in section, words
    learning = pd.read_parquet(root / "results" / "learning.parquet")
    assert set(learning["policy"]) == {"random (uniform)", "BTS, on-policy (its own log)",
                                       "BTS (production prior), off-policy", "CatalogueSquareCB (item features)",
                                       "SquareCB (item index only)"}
    est = learning[learning["estimator"] != "mean click"]
    assert list(est["estimator"].unique()) == ["IPS", "SNIPS", "DM (ridge)", "DR (ridge)"]
    cols = ["estimate", "lower", "upper", "ratio to random"]
    assert np.isfinite(learning[cols].to_numpy()).all()
    ips = learning[learning["estimator"] == "IPS"]
    assert np.isfinite(ips[["min. detectable ratio", "min. detectable ratio (design)", "paired ratio lower",
                            "paired ratio upper"]].to_numpy()).all()
    assert (learning["rows"] > 0).all() and (learning["clicks"] > 0).all()
