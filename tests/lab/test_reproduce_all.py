"""``reproduce all --quick`` killed with SIGKILL in the middle, then rerun: it says which tasks were already
done and ends with the numbers of an uninterrupted run, stored in tests/data/reproduce_all_numbers.json
(every recipe's results tables and claims, and the index's claims summaries). Every recipe runs the
shrunk plan of its own test (the example: a smaller sweep), so the check costs about two tiny ``all``
runs (half of one killed, then the rest). One engine runs and resumes every recipe's tasks, so this one
interrupted run is the resume test of them all (the recipe it stops in the middle, and those it stops
before or after)."""

from __future__ import annotations

from recipe_resume import all_killed_then_resumed, assert_numbers_as_stored
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
    # (the stored numbers are those of this plan: the agarwal2021 test's own plan has since been shrunk)
    agarwal = {key: value for key, value in AGARWAL.items() if key != "estimate_every"}
    agarwal.update(datasets=[{"name": "synsep", "n_samples": 500, "seed": 0, "label": "SynSep"}], n_rounds=1_000,
                   report_seeds=[0], n_s=500, table1_n_s=300, per_action={**AGARWAL["per_action"], "n_rounds": 30_000})
    batra = {**batra2021.QUICK_PLAN, **BATRA, "datasets": BATRA["datasets"][:1], "n_rounds": 2_000,
             "dbf_gammas": [0.12, 0.25, 0.8], "m_sweep_seeds": [0], "n_checkpoints": 10}
    moro = {**moroshko.QUICK_PLAN, **MOROSHKO, "r_grid": [1.0, 100.0], "seeds": 1,
            "synthetic": {"n_samples": 1_000, "M": 5.0}, "channel": {"n_samples": 1_000, "Ms": [5.0]},
            "speech": {**MOROSHKO["speech"], "n_samples": 1_000},
            "budget": {**MOROSHKO["budget"], "n_samples": 500, "seeds": 2, "a_steps": 3}}
    return {"example": example, "agarwal2021": agarwal, "batra2021": batra, "dekel2009": DEKEL,
            "louche2015": {**louche2015.QUICK_PLAN, **LOUCHE}, "moroshko": moro, "open-bandit": OPEN_BANDIT}


PATCHES = {"agarwal2021": {"SETTINGS_TABLE1": [[0.25, 0.25]]}}

#: the SIGKILL comes after this many task files: about half of the 359 that the shrunk plans write
KILL_AFTER = 180


def test_reproduce_all_killed_with_sigkill_then_rerun_resumes_and_gives_the_same_numbers(tmp_path):
    plans = _plans()
    rec._load_builtin()
    assert set(plans) == set(rec.RECIPES), "a recipe without a plan here"
    index, log = all_killed_then_resumed(plans, PATCHES, tmp_path / "resumed", kill_after=KILL_AFTER)
    assert "already done (resuming)" in log
    # the numbers of an uninterrupted run, as the code wrote them before the lab moved out of the library
    # (tests/data/)
    assert_numbers_as_stored(index)
    lines = (index.parent / "index.md").read_text(encoding="utf-8").splitlines()
    assert sum(ln.startswith("| [") and "claims hold" in ln for ln in lines) == len(plans)


def test_stored_numbers_are_compared_with_numpys_and_openblas_avx2_kernels():
    """conftest.py pins NumPy's SIMD kernels and OpenBLAS's to AVX2 on x86-64 (AVX-512 ones round differently
    in the last bits, which moved a stored flip-rate estimate); the pin must hold in the test processes."""
    import platform

    import numpy._core._multiarray_umath as umath
    import pytest
    from threadpoolctl import threadpool_info

    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the pin is for x86-64")
    assert not umath.__cpu_features__.get("X86_V4") and not umath.__cpu_features__.get("AVX512_ICL")
    openblas = [info for info in threadpool_info() if info["internal_api"] == "openblas"]
    assert openblas and all(info["architecture"] == "Haswell" for info in openblas), openblas
