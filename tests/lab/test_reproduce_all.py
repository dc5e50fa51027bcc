"""``reproduce all --quick`` killed with SIGKILL in the middle, then rerun: it says which tasks were already
done and ends with the same numbers as an uninterrupted run, whose numbers are those stored in
tests/data/reproduce_all_numbers.json (every recipe's results tables and claims, and
the index's claims summaries). Every recipe runs the shrunk plan of its own test (the example: a smaller
sweep), so the whole check costs about three tiny ``all`` runs."""

from __future__ import annotations

import re

from recipe_resume import (
    all_killed_then_resumed,
    assert_numbers_as_stored,
    assert_same_numbers,
    restore_recipes,
    small_recipes,
)
from test_agarwal2021 import SMALL as AGARWAL
from test_batra2021 import TEST_PLAN as BATRA
from test_dekel2009 import TEST_PLAN as DEKEL
from test_louche2015 import TEST_PLAN as LOUCHE
from test_moroshko import TEST_PLAN as MOROSHKO
from test_open_bandit import TEST_PLAN as OPEN_BANDIT

from noisyfeedback.lab import recipes as rec
from noisyfeedback.lab.papers import batra2021, louche2015, moroshko


def _plans() -> dict:
    example = rec._example_plan(True)
    example.update(n_rounds=2_000, checkpoints=10)
    example["datasets"][0]["n_samples"] = 1_000
    example["learners"] = [{**spec, "params": {"gamma": [0.05, 0.2]}} for spec in example["learners"]]
    example["selection"] = {**example["selection"], "tuning_seeds": [100], "report_seeds": [0, 1]}
    agarwal = {**AGARWAL, "datasets": [{"name": "synsep", "n_samples": 500, "seed": 0, "label": "SynSep"}],
               "n_rounds": 1_000, "report_seeds": [0], "n_s": 500, "table1_n_s": 300}
    batra = {**batra2021.QUICK_PLAN, **BATRA, "datasets": BATRA["datasets"][:1], "n_rounds": 2_000,
             "dbf_gammas": [0.12, 0.25, 0.8], "m_sweep_seeds": [0], "n_checkpoints": 10}
    moro = {**moroshko.QUICK_PLAN, **MOROSHKO, "r_grid": [1.0, 100.0], "seeds": 1,
            "synthetic": {"n_samples": 1_000, "M": 5.0}, "channel": {"n_samples": 1_000, "Ms": [5.0]},
            "speech": {**MOROSHKO["speech"], "n_samples": 1_000},
            "budget": {**MOROSHKO["budget"], "n_samples": 500, "seeds": 2, "a_steps": 3}}
    return {"example": example, "agarwal2021": agarwal, "batra2021": batra, "dekel2009": DEKEL,
            "louche2015": {**louche2015.QUICK_PLAN, **LOUCHE}, "moroshko": moro, "open-bandit": OPEN_BANDIT}


PATCHES = {"agarwal2021": {"SETTINGS_TABLE1": [[0.25, 0.25]]}}

#: the index's per-recipe wall times ("| 12.3 s |")
_SECONDS = re.compile(r"\d+\.\d s")


def test_reproduce_all_killed_with_sigkill_then_rerun_resumes_and_gives_the_same_numbers(tmp_path):
    from noisyfeedback.lab import reproduce

    plans = _plans()
    saved = small_recipes(plans, PATCHES)
    try:
        assert set(plans) == set(rec.RECIPES), "a recipe without a plan here"
        whole = reproduce("all", quick=True, out=tmp_path / "whole", progress=False)
    finally:
        restore_recipes(saved)
    # the same numbers as the code wrote before the lab moved out of the library (tests/data/)
    assert_numbers_as_stored(whole)
    n_tasks = sum(1 for _ in (tmp_path / "whole").glob("*/results/**/tasks/*.parquet"))
    index, log = all_killed_then_resumed(plans, PATCHES, tmp_path / "resumed", kill_after=n_tasks // 2)
    assert "already done (resuming)" in log
    for name in plans:
        assert_same_numbers(whole.parent / name / "index.html", index.parent / name / "index.html",
                            compare_markdown=name != "agarwal2021")  # its report prints timings in tables
    a, b = ([_SECONDS.sub("", ln) for ln in (p.parent / "index.md").read_text(encoding="utf-8").splitlines()]
            for p in (whole, index))
    assert a == b and sum(ln.startswith("| [") and "claims hold" in ln for ln in a) == len(plans)


def test_stored_numbers_are_compared_with_numpys_avx2_kernels():
    """conftest.py pins NumPy's SIMD kernels to AVX2 on x86-64 (AVX-512 ones round differently in the last
    bits, which moved a stored flip-rate estimate); the pin must hold in the test processes."""
    import platform

    import numpy._core._multiarray_umath as umath
    import pytest

    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the pin is for x86-64")
    assert not umath.__cpu_features__.get("X86_V4") and not umath.__cpu_features__.get("AVX512_ICL")
