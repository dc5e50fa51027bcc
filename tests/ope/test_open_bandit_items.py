"""The Open Bandit Dataset's item features and the action-feature learners on its logs: ``item_context.csv``
read and written, a log as rounds of candidates, the learners trained on half a log and estimated
off-policy on the other half. On small generated files (never the real data)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import noisyfeedback as nf
from noisyfeedback.datasets.open_bandit import (
    CandidateLog,
    ItemContext,
    candidate_log,
    load_item_context,
    load_open_bandit,
    write_item_context_csv,
    write_open_bandit_csv,
)
from noisyfeedback.ope import replication

K = 5
#: one number, then two hashed strings, per item (the sample's form)
ITEM_FEATURES = [[0.5, -1.0, 2.0, 0.0, 1.5], ["ab12", "cd34", "ab12", "ef56", "cd34"],
                 ["x9f", "x9f", "y0a", "y0a", "x9f"]]


def _write(root, n=40, seed=0, item_features=ITEM_FEATURES):
    rng = np.random.default_rng(seed)
    aff = rng.random((n, K)) * (rng.random((n, K)) < 0.3)
    return write_open_bandit_csv(root / "open-bandit" / "random" / "men" / "men.csv", rng.integers(0, K, n),
                                 rng.integers(0, 3, n), rng.integers(0, 2, n), np.full(n, 1 / K),
                                 rng.integers(0, 3, size=(n, 4)), aff, item_features=item_features)


def test_item_context_written_next_to_the_log_and_read_back(tmp_path):
    path = _write(tmp_path)
    assert (path.parent / "item_context.csv").is_file()
    items = load_item_context("random", "men", data_dir=tmp_path)
    assert isinstance(items, ItemContext) and items.n_items == K
    assert items.numeric_names == ["item_feature_0"]
    assert items.categorical_names == ["item_feature_1", "item_feature_2"]
    np.testing.assert_array_equal(items.numeric[:, 0], ITEM_FEATURES[0])
    assert items.categorical[:, 0].tolist() == ITEM_FEATURES[1]
    # dense: the number, then each string column one-hot in sorted order
    D, names = items.dense()
    assert names == ["item_feature_0", "item_feature_1=ab12", "item_feature_1=cd34", "item_feature_1=ef56",
                     "item_feature_2=x9f", "item_feature_2=y0a"]
    np.testing.assert_array_equal(D[:, 0], ITEM_FEATURES[0])
    np.testing.assert_array_equal(D[:, 1:4].sum(axis=1), 1.0)
    assert D[3, 3] == 1.0 and D[2, 5] == 1.0
    # namespaced dicts: the number as a value, the strings as strings (hashed by the learner)
    d = items.dicts()
    assert d[1] == {"item": {"item_feature_0": -1.0, "item_feature_1": "cd34", "item_feature_2": "x9f"}}


def test_item_context_rows_are_sorted_by_item_id_and_errors_are_named(tmp_path):
    path = write_item_context_csv(tmp_path / "item_context.csv", ITEM_FEATURES)
    raw = pd.read_csv(path, index_col=0)
    raw.iloc[::-1].to_csv(tmp_path / "reversed.csv")
    items = load_item_context(path=tmp_path / "reversed.csv")
    np.testing.assert_array_equal(items.numeric[:, 0], ITEM_FEATURES[0])
    bad = raw.copy()
    bad.loc[bad.index[2], "item_id"] = 7
    bad.to_csv(tmp_path / "bad_id.csv")
    with pytest.raises(ValueError, match="'item_id'"):
        load_item_context(path=tmp_path / "bad_id.csv")
    bad = raw.copy()
    bad.loc[bad.index[3], "item_feature_1"] = np.nan
    bad.to_csv(tmp_path / "bad_na.csv")
    with pytest.raises(ValueError, match="'item_feature_1' is missing for item 3"):
        load_item_context(path=tmp_path / "bad_na.csv")
    with pytest.raises(ValueError, match="'campaign'"):
        load_item_context("random", "kids", data_dir=tmp_path)
    _write(tmp_path / "noitems", item_features=None)
    with pytest.raises(FileNotFoundError, match="item_context.csv"):
        load_item_context("random", "men", data_dir=tmp_path / "noitems")
    with pytest.raises(ValueError, match="same length"):
        write_item_context_csv(tmp_path / "x.csv", [[1.0, 2.0], ["a"]])


def test_candidate_log_rounds_actions_and_features(tmp_path):
    _write(tmp_path)
    log = load_open_bandit("random", "men", data_dir=tmp_path)
    items = load_item_context("random", "men", data_dir=tmp_path)
    cl = candidate_log(log, items)
    assert isinstance(cl, CandidateLog) and cl.n_rounds == log.n_rounds
    assert cl.rounds.sizes.tolist() == [K] * log.n_rounds
    np.testing.assert_array_equal(cl.actions, log.actions)  # the item's place in its round is its id
    np.testing.assert_array_equal(cl.propensities, log.propensities)
    np.testing.assert_array_equal(cl.rewards, log.reward)
    np.testing.assert_array_equal(cl.rounds.item_ids, np.tile(np.arange(K), log.n_rounds))
    # context: the user features one-hot, then the slot one-hot
    n_user = sum(name.startswith("user_feature_") for name in log.feature_names)
    assert cl.context_names[-3:] == ["position=1", "position=2", "position=3"]
    C = cl.rounds.context
    np.testing.assert_array_equal(C[:, :n_user], log.X[:, :n_user])
    np.testing.assert_array_equal(C[:, n_user:].argmax(axis=1), log.position)
    # candidates: the item's dense row, then this user's affinity to the item
    A = cl.rounds.items.toarray()
    D, names = items.dense()
    assert cl.item_names == names + ["affinity"]
    i = 7
    block = A[cl.rounds.candidates(i)]
    np.testing.assert_array_equal(block[:, :-1], D)
    np.testing.assert_array_equal(block[:, -1], log.X[i, -K:])
    sub = cl.take([3, 1])
    np.testing.assert_array_equal(sub.actions, log.actions[[3, 1]])
    np.testing.assert_array_equal(sub.rounds.items.toarray(), np.vstack([A[15:20], A[5:10]]))
    # a catalogue learner takes it as it is
    L = nf.CatalogueSquareCB(seed=0).fit_logged(cl.rounds, cl.actions, cl.rewards, cl.propensities)
    P = L.action_probabilities(cl.rounds)
    np.testing.assert_allclose(np.add.reduceat(P, cl.offsets[:-1]), 1.0)
    with pytest.raises(ValueError, match="only 3"):
        candidate_log(log, ItemContext(np.zeros((3, 1)), ["f"], np.zeros((3, 0), object), []))
    with pytest.raises(ValueError, match="'n_slots'"):
        candidate_log(log, items, n_slots=0)
    assert log.position.max() == 2
    with pytest.raises(ValueError, match="slot 3"):
        candidate_log(log, items, n_slots=2)


def test_split_rows_and_minimum_detectable_ratio():
    tr, ev = replication.split_rows(10, 0.5, seed=3)
    assert tr.size == ev.size == 5 and np.array_equal(np.sort(np.concatenate([tr, ev])), np.arange(10))
    again = replication.split_rows(10, 0.5, seed=3)
    assert np.array_equal(again[0], tr)
    with pytest.raises(ValueError, match="'train_fraction'"):
        replication.split_rows(10, 1.0)
    # known numbers: se = 0.001, se0 = 0 → 1 + 2.80 × 0.001 / 0.004
    assert abs(replication.minimum_detectable_ratio(0.001, 0.0, 0.004) - (1 + 2.801585 * 0.25)) < 1e-6
    # the uniform policy: the design's se is the random policy's own, √(v0(1 − v0)/n)
    P = np.full(4 * 100, 0.25)
    assert abs(replication.design_se(P, 4, 0.25, 0.01) - math.sqrt(0.01 * 0.99 / 100)) < 1e-12
    # a greedy policy: Σπ² = 1, four times the second moment of the weights
    G = np.tile([1.0, 0, 0, 0], 100)
    assert abs(replication.design_se(G, 4, 0.25, 0.01) - math.sqrt((0.04 - 0.0001) / 100)) < 1e-12


def test_learning_table_on_the_quick_data(tmp_path):
    replication.make_quick_data(tmp_path / "data", n=2000)
    prob = replication.load_problem(tmp_path / "data", "all", 5_000)
    items = load_item_context("random", "all", data_dir=tmp_path / "data")
    assert items.n_items == 10 and items.numeric_names == ["item_feature_0"] and len(items.categorical_names) == 3
    df = replication.learning_table(prob, items, seed=0)
    assert list(df["policy"].unique()) == list(replication.POLICY_NAMES.values())
    assert len(df) == 2 + 3 * 4
    est = df[df["estimator"] != "mean click"]
    assert np.isfinite(est[["estimate", "lower", "upper", "ratio to random"]].to_numpy()).all()
    assert (est["lower"] <= est["estimate"] + 1e-12).all() and (est["estimate"] <= est["upper"] + 1e-12).all()
    dm = est[est["estimator"] == "DM (ridge)"]
    assert (dm["interval"] == "none").all() and (dm["lower"] == dm["upper"]).all()
    rnd = df[df["policy"] == "random (uniform)"].iloc[0]
    assert rnd["rows"] == 1000 and rnd["estimate"] == rnd["clicks"] / 1000 and rnd["ratio to random"] == 1.0
    ips = df[df["estimator"] == "IPS"]
    assert np.isfinite(ips[["paired ratio lower", "paired ratio upper", "ESS", "top click's share",
                            "min. detectable ratio", "min. detectable ratio (design)"]].to_numpy()).all()
    assert (ips["min. detectable ratio (design)"] > 1).all()
    # the same seed, the same numbers
    pd.testing.assert_frame_equal(df, replication.learning_table(prob, items, seed=0))
    with pytest.raises(ValueError, match="item context has 9"):
        replication.learning_table(prob, ItemContext(items.numeric[:9], items.numeric_names, items.categorical[:9],
                                                     items.categorical_names), seed=0)
