"""reproduce agarwal2021: the recipe runs (shrunk quick plan) and its report is complete and self-contained."""

import re

import numpy as np
import pytest

import noisyfeedback as nf
from noisyfeedback.lab import reproduce
from noisyfeedback.lab.papers import agarwal2021 as recipe

#: the quick plan, shrunk for the tests
SMALL = {**recipe.QUICK_PLAN,
         "datasets": [{"name": "synsep", "n_samples": 1_000, "seed": 0, "label": "SynSep"}],
         "n_rounds": 3_000, "gammas": [0.05, 0.2], "report_seeds": [0, 1], "n_s": 1_000, "estimate_every": 2_000,
         "table1": [{"name": "digits", "normalize": True, "label": "digits"}], "table1_n_s": 1_500,
         "per_action": {"datasets": [{"name": "digits", "normalize": True, "label": "digits"}], "n_rounds": 22_000,
                        "seeds": [0]}}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("agarwal2021")
    mp = pytest.MonkeyPatch()
    mp.setattr(recipe.plans, "QUICK_PLAN", SMALL)
    mp.setattr(recipe.plans, "SETTINGS_TABLE1", [(0.25, 0.25), (0.2, 0.4)])
    try:
        index = reproduce("agarwal2021", quick=True, out=out, progress=False)
    finally:
        mp.undo()
    return index


def test_report_links_resolve(report):
    page = report.read_text()
    refs = re.findall(r'(?:src|href)="([^"#]+)"', page)
    assert sum(r.endswith(".png") for r in refs) >= 5  # one curve per noise setting at least
    for ref in refs:
        if re.match(r"^[a-z]+:", ref):  # the link to the paper
            continue
        assert (report.parent / ref).exists(), ref


def test_report_has_the_papers_tables_and_claims(report):
    md = report.with_suffix(".md").read_text()
    for needle in ("Figure 2", "Figure 3", "Table 1", "Claims", "NREst", "RCINE", "SOBA", "reproduced"):
        assert needle in md, needle
    # the five noise settings of Figure 2 and the six of Table 1
    for setting in ("NoisyBandit(0.2,0.4)", "NoisyBandit(0.4,0.2)", "NoisyBandit(0.4,0.4)"):
        assert setting in md
    assert md.count("| 0.25 | 0.25 |") >= 1
    # beyond the paper, in "What we recommend instead": flips that depend on the action
    assert "Flips that depend on the action" in md and "SquareCB, estimated rates" in md


def test_flip_rate_protocol_recovers_the_rates():
    X, y = nf.datasets.synsep(n_samples=3000, seed=1)
    tab = recipe.flip_rate_estimates(X, y, 9, [(0.2, 0.4), (0.4, 0.2)], n_s=3000, methods=("ours",))
    err = np.abs(tab[["ours_rho0", "ours_rho1"]].to_numpy() - tab[["rho0", "rho1"]].to_numpy()).max()
    assert err < 0.06, tab
