"""Tuning grids extended past a binding edge (known optima on synthetic objectives)."""

import math

import pytest

from noisyfeedback.lab.grids import extend_grid, next_value

PAPER = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2]


def test_stops_at_an_interior_best_above_the_grid():
    calls = []

    def score(g):
        calls.append(g)
        return (math.log(g) - math.log(0.45)) ** 2

    res = extend_grid(score, PAPER, low=0.0, high=1.0)
    assert res.paper_best == 0.2
    assert res.interior and res.best == 0.4
    assert res.added == (0.4, 0.8)
    assert calls[:6] == PAPER and len(calls) == 8  # nothing evaluated twice


def test_extends_below_the_grid():
    res = extend_grid(lambda g: abs(math.log(g / 0.0013)), PAPER, low=0.0, high=1.0)
    assert res.paper_best == 0.005
    assert res.added == (0.0025, 0.00125, 0.000625)
    assert res.best == 0.00125 and res.interior


def test_interior_best_adds_nothing():
    res = extend_grid(lambda g: (g - 0.03) ** 2, PAPER, high=1.0)
    assert res.added == () and res.best == res.paper_best == 0.02 and res.interior


def test_open_upper_bound_is_approached_by_midpoints_and_steps_are_capped():
    res = extend_grid(lambda g: -g, PAPER, low=0.0, high=1.0, max_steps=4)
    assert res.added == (0.4, 0.8, 0.9, 0.95)
    assert all(0 < g < 1 for g in res.scores)
    assert not res.interior and res.best == 0.95


def test_next_value_rules():
    assert next_value([0.1, 0.2], "high") == pytest.approx(0.4)
    assert next_value([0.1, 0.2], "low") == pytest.approx(0.05)
    assert next_value([0.5], "high", high=1.0) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="'factor' parameter"):
        next_value([0.1, 0.2], "high", factor=1.0)
    with pytest.raises(ValueError, match="'grid' parameter"):
        extend_grid(lambda g: g, [])


# ------------------------------------------------------------- the engine's selection, extended
def _tiny_config(grid, extend):
    return {
        "name": "grid-extension",
        "n_rounds": 3_000,
        "checkpoints": 3,
        "datasets": [{"name": "synsep", "n_samples": 600, "seed": 0}],
        "channels": [{"name": "NoisyBandit", "params": {"rho0": 0.1, "rho1": 0.1}}],
        "learners": [{"name": "Banditron", "params": {"gamma": grid}}],
        "selection": {"param": "gamma", "tuning_seeds": [100], "report_seeds": [0, 1], "extend": extend},
    }


def test_engine_extends_a_binding_grid_until_the_best_is_interior_or_the_steps_run_out(tmp_path):
    from noisyfeedback.lab import read_results, run_experiment

    grid = [0.001, 0.002]
    df = read_results(run_experiment(_tiny_config(grid, 3), tmp_path / "out", progress=False))
    tuning = df[df["phase"] == "tuning"]
    tried = sorted(set(tuning["learner.gamma"]))
    added = [g for g in tried if g not in grid]
    assert 1 <= len(added) <= 3  # the grid's best is an edge of a two-value grid: something is added
    means = tuning.groupby("learner.gamma")["error_rate"].mean()
    best = float(means.idxmin())
    assert len(added) == 3 or tried[0] < best < tried[-1]  # stopped only when interior or out of steps
    report = df[df["phase"] == "report"]
    assert (report.loc[report["learner"] == "Banditron", "learner.gamma"] == best).all()
    grid_best = float(means[grid].idxmin())
    grid_rows = df[df["phase"] == "report (grid)"]
    if grid_best != best:
        assert set(grid_rows["learner.gamma"]) == {grid_best} and set(grid_rows["seed"]) == {0, 1}
    else:
        assert grid_rows.empty


def test_engine_without_extend_keeps_the_grid_and_the_config_hash():
    from noisyfeedback.lab.config import config_hash, parse_config

    plain = _tiny_config([0.001, 0.002], 0)
    without = {**plain, "selection": {k: v for k, v in plain["selection"].items() if k != "extend"}}
    assert config_hash(parse_config(plain)) == config_hash(parse_config(without))
    assert config_hash(parse_config(_tiny_config([0.001, 0.002], 2))) != config_hash(parse_config(plain))
