"""Logged-data formats: Vowpal Wabbit cb text, CSV/Parquet logs, the Open Bandit Dataset layout."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import noisyfeedback as nf
from noisyfeedback.datasets import read_log, read_vw_cb, write_log, write_vw_cb
from noisyfeedback.datasets.open_bandit import (
    bts_action_distribution,
    load_open_bandit,
    read_prior_bts,
    write_open_bandit_csv,
)


def _random_log(n=40, d=7, K=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.4)
    X[3] = 0.0  # a row without features
    X[5, 2] = 1.0  # a value written without ':1'
    return X, rng.integers(0, K, n), rng.integers(0, 2, n).astype(float), rng.uniform(0.05, 1.0, n)


def test_vw_round_trip_gives_the_same_arrays(tmp_path):
    X, a, r, p = _random_log()
    names = [f"user^u{j}" for j in range(4)] + [f"item^i{j}" for j in range(3)]
    path = write_vw_cb(tmp_path / "log.vw", X, a, r, p, feature_names=names)
    log = read_vw_cb(path, feature_names=names)
    np.testing.assert_array_equal(log.X.toarray(), X)
    np.testing.assert_array_equal(log.actions, a)
    np.testing.assert_array_equal(log.rewards, r)
    np.testing.assert_array_equal(log.propensities, p)
    # without the names, columns come in order of first appearance, named namespace^name
    free = read_vw_cb(path)
    order = [names.index(f) for f in free.feature_names]
    np.testing.assert_array_equal(free.X.toarray(), X[:, order][:, :len(order)])
    assert sorted(free.feature_names) == sorted(n for j, n in enumerate(names) if X[:, j].any())
    # hashed: the same columns up to a permutation (no collisions at 18 bits for 7 names)
    hashed = read_vw_cb(path, features="hash")
    assert hashed.X.shape == (len(a), 2 ** 18) and hashed.feature_names is None
    used = np.unique(hashed.X.indices)
    assert used.size == len(free.feature_names)
    np.testing.assert_allclose(np.sort(np.abs(hashed.X[:, used].toarray()).sum(axis=0)),
                               np.sort(np.abs(X).sum(axis=0)[np.abs(X).sum(axis=0) > 0]))


HAND = """1:0:0.5 |user age:0.25 tall |item red

2:-1:0.2 'tag17 |user:2 age:0.5 |item blue red:3
  3:-0.5:1 | 7 x:-1

"""


def test_vw_hand_written_file_with_namespaces_and_blank_lines(tmp_path):
    path = tmp_path / "hand.vw"
    path.write_text(HAND)
    log = read_vw_cb(path)
    assert log.feature_names == ["user^age", "user^tall", "item^red", "item^blue", " ^7", " ^x"]
    np.testing.assert_array_equal(log.X.toarray(), [
        [0.25, 1, 1, 0, 0, 0],
        [1.0, 0, 3, 1, 0, 0],  # the namespace scale 2 multiplies age:0.5
        [0, 0, 0, 0, 1, -1],
    ])
    np.testing.assert_array_equal(log.actions, [0, 1, 2])
    np.testing.assert_array_equal(log.rewards, [-0.0, 1.0, 0.5])
    np.testing.assert_array_equal(log.propensities, [0.5, 0.2, 1.0])
    assert read_vw_cb(path, reward="one_minus_cost").rewards.tolist() == [1.0, 2.0, 1.5]
    X, a, r, p = log  # unpacks like a tuple
    assert sp.issparse(X)


@pytest.mark.parametrize("bad, what", [
    ("1:0 |u a", "action:cost:probability"),
    ("x:0:0.5 |u a", "numbers"),
    ("1:0:1.5 |u a", "probability"),
    ("0:0:0.5 |u a", "1-based"),
    ("1:0:0.5 u a", "no '|'"),
    ("1:0:0.5 |u a:zz", "not a number"),
    ("shared |u a", "cb_adf"),
])
def test_vw_malformed_line_is_named(tmp_path, bad, what):
    path = tmp_path / "bad.vw"
    path.write_text("1:0:0.5 |u a\n\n" + bad + "\n2:0:0.5 |u b\n")
    with pytest.raises(ValueError, match=rf"bad\.vw, line 3: .*{what}"):
        read_vw_cb(path)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_csv_and_parquet_logs_round_trip(tmp_path, suffix):
    X, a, r, p = _random_log()
    path = write_log(tmp_path / f"log{suffix}", X, a, r, p, feature_names=[f"c{j}" for j in range(X.shape[1])])
    log = read_log(path)
    np.testing.assert_array_equal(log.X, X)
    np.testing.assert_array_equal(log.actions, a)
    np.testing.assert_array_equal(log.propensities, p)
    assert log.feature_names == [f"c{j}" for j in range(X.shape[1])]
    with pytest.raises(ValueError, match="no column named 'clicked'"):
        read_log(path, reward="clicked")


# ------------------------------------------------------------ Open Bandit Dataset layout
def _obd_tree(root, n=30, K=4):
    rng = np.random.default_rng(0)
    for policy in ("random", "bts"):
        write_open_bandit_csv(root / "open-bandit" / policy / "men" / "men.csv", rng.integers(0, K, n),
                              rng.integers(0, 3, n), rng.integers(0, 2, n), np.full(n, 1 / K),
                              rng.integers(0, 3, size=(n, 4)), rng.random((n, K)))
    (root / "open-bandit" / "prior_bts.yaml").write_text(
        "men:\n  alpha:\n    - 1.0\n    - 2.0\n    - 30.0\n    - 4.0\n  beta:\n    - 10.0\n    - 10.0\n"
        "    - 10.0\n    - 10.0\n")
    return rng


def test_open_bandit_loader_on_a_generated_file(tmp_path):
    _obd_tree(tmp_path)
    log = nf.datasets.load("open_bandit", policy="random", campaign="men", data_dir=tmp_path)
    assert log.n_rounds == 30 and log.n_actions == 4 and log.len_list <= 3
    assert log.position.min() >= 0 and log.position.max() <= 2
    n_cats = sum(len(set(log.feature_names[j].split("=")[0] for j in range(len(log.feature_names))
                         if log.feature_names[j].startswith(f"user_feature_{k}="))) for k in range(4))
    assert n_cats == 4
    assert log.X.shape == (30, len(log.feature_names))
    np.testing.assert_array_equal(log.X[:, :-4].sum(axis=1), 4.0)  # one-hot: one category per user feature

    raw = pd.read_csv(tmp_path / "open-bandit" / "random" / "men" / "men.csv", index_col=0)
    np.testing.assert_array_equal(log.actions, raw["item_id"])
    np.testing.assert_array_equal(log.position, raw["position"] - 1)
    np.testing.assert_array_equal(log.X[:, -4:], raw[[f"user-item_affinity_{j}" for j in range(4)]])
    with pytest.raises(ValueError, match="'campaign'"):
        load_open_bandit("random", "kids", data_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="women"):
        load_open_bandit("random", "women", data_dir=tmp_path)
    raw.loc[raw.index[7], "position"] = 5
    raw.to_csv(tmp_path / "bad.csv")
    with pytest.raises(ValueError, match="'position'.*row 7"):
        load_open_bandit(path=tmp_path / "bad.csv")


def test_bts_action_distribution_from_the_prior(tmp_path):
    _obd_tree(tmp_path)
    prior = read_prior_bts(tmp_path / "open-bandit" / "prior_bts.yaml")["men"]
    np.testing.assert_array_equal(prior["alpha"], [1, 2, 30, 4])
    P = bts_action_distribution(prior["alpha"], prior["beta"], len_list=3, n_sim=20_000, seed=0)
    np.testing.assert_allclose(P.sum(axis=0), 1.0)
    assert P[2, 0] > 0.95  # Beta(30, 10) beats the others nearly always at slot 0
    # slot 0 for two items, exactly: P(θ1 > θ0) for Beta(2,10) vs Beta(1,10) by quadrature
    from scipy import integrate, stats

    exact = integrate.quad(lambda t: stats.beta(2, 10).pdf(t) * stats.beta(1, 10).cdf(t), 0, 1)[0]
    P2 = bts_action_distribution([1.0, 2.0], [10.0, 10.0], len_list=1, n_sim=100_000, seed=1)
    assert abs(P2[1, 0] - exact) < 0.005
    again = bts_action_distribution(prior["alpha"], prior["beta"], len_list=3, n_sim=20_000, seed=0)
    np.testing.assert_array_equal(P, again)


def test_quick_open_bandit_report(tmp_path):
    from noisyfeedback.lab import recipe_names
    from noisyfeedback.lab.papers.open_bandit import QUICK_PLAN
    from noisyfeedback.ope import replication

    assert "open-bandit" in recipe_names()
    cfg = QUICK_PLAN
    replication.make_quick_data(tmp_path / "data", n=3000)
    prob = replication.load_problem(tmp_path / "data", "all", cfg["n_sim"])
    est = replication.estimate_table(prob)
    assert list(est["estimator"]) == ["IPS", "SNIPS", "DM (ridge)", "DR (ridge)"]
    assert (est["relative error"] < 1.0).all() and (est["lower"] <= est["estimate"]).all()
    flips = replication.flip_table(prob, [(0.2, 0.1)], n_draws=15)
    ips = flips[flips["estimator"] == "IPS"].set_index("version")
    assert ips.loc["plain", "bias vs clean"] > 0.1  # ρ0 = 0.2 adds false clicks on ~95 % of rows
    assert abs(ips.loc["corrected", "bias vs clean (SEs)"]) < 4
    # a flip setting alone (the recipe's task) gives the rows of the table's setting
    again = pd.DataFrame(replication.flip_rows(prob, 0.2, 0.1, 0, n_draws=15))
    pd.testing.assert_frame_equal(again, flips)


# ------------------------------------------------------------ river adapter
@pytest.mark.parametrize("make", [lambda: nf.Perceptron(10), lambda: nf.MCSLP(10, m=2)], ids=["Perceptron", "MCSLP"])
def test_river_progressive_val_score_matches_simulate(make):
    river = pytest.importorskip("river")
    from river import evaluate, metrics, stream

    from noisyfeedback.river_adapter import RiverClassifier

    X, y = nf.datasets.load("digits", normalize=True)
    order = np.random.default_rng(0).permutation(len(y))[:400]
    Xs, ys = X[order], y[order]
    metric = evaluate.progressive_val_score(stream.iter_array(Xs, ys), RiverClassifier(make(), classes=range(10)),
                                            metrics.Accuracy())
    trace = nf.simulate(make(), Xs, ys, nf.feedback.FullLabel(), n_rounds=len(ys), seed=0, shuffle=False)
    assert round((1 - metric.get()) * len(ys)) == round(trace.error_rate * len(ys))
    assert 0 < trace.error_rate < 0.5
    assert river.__version__
    # bandit learners run in river too (act, see 1[action = y], learn)
    model = RiverClassifier(nf.Banditron(10, gamma=0.2, seed=0), classes=range(10))
    acc = evaluate.progressive_val_score(stream.iter_array(Xs, ys), model, metrics.Accuracy())
    assert 0 < acc.get() < 1 and np.abs(model.learner.W_).sum() > 0


def test_load_csv_returns_label_names(tmp_path):
    path = tmp_path / "pets.csv"
    path.write_text("a,b,label\n1,2,dog\n3,4,cat\n5,6,dog\n7,8,emu\n")
    X, y, classes = nf.datasets.load_csv(path, return_classes=True)
    assert classes.tolist() == ["cat", "dog", "emu"] and y.tolist() == [1, 0, 1, 2]
    assert classes[y].tolist() == ["dog", "cat", "dog", "emu"]
    assert len(nf.datasets.load_csv(path)) == 2  # unchanged without the flag
    num = tmp_path / "num.csv"
    num.write_text("1,2,-1\n3,4,1\n")
    assert nf.datasets.load_csv(num, return_classes=True)[2].tolist() == [-1, 1]


def test_zero_one_costs_read_as_rewards_without_negative_zero_and_train(tmp_path):
    """VW's classic costs (0 good, 1 bad) read as rewards −cost: 0.0 (not −0.0) and −1.0; fit_logged learns
    from them as they are (no dtype complaint) and prefers the action of cost 0; written back, no "-0.0"."""
    rng = np.random.default_rng(0)
    lines = [f"{a + 1}:{0 if a == 1 else 1}:0.5 | x:{rng.normal()!r}" for a in rng.integers(0, 2, 200)]
    log = nf.datasets.read_vw_cb(lines)
    assert set(log.rewards.tolist()) == {0.0, -1.0} and not np.signbit(log.rewards[log.rewards == 0.0]).any()
    learner = nf.SquareCB(2, seed=0).fit_logged(log.X, log.actions, log.rewards, log.propensities)
    assert (learner.predict(log.X) == 1).all()
    out = nf.datasets.write_vw_cb(tmp_path / "back.vw", log.X, log.actions, log.rewards, log.propensities)
    costs = {line.split()[0].split(":")[1] for line in out.read_text().splitlines()}
    assert costs == {"0.0", "1.0"}  # not "-0.0", nor "-1.0"
