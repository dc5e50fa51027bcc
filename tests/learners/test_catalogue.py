"""Catalogue learners: hashing, the candidate data model, kernels against their reference twins, the
equivalence with the index learners on one-hot candidates, simulate vs the Python loop, slots."""

import numpy as np
import pytest
import reference_catalogue as ref
import scipy.sparse as sp
from tolerances import KERNEL_ATOL, KERNEL_RTOL

import noisyfeedback as nf
from noisyfeedback.catalogue import CandidateRounds, CandidateStream
from noisyfeedback.datasets.ranking import multiclass_candidates, ranking_stream
from noisyfeedback.hashing import FeatureHasher, feature_hash, namespace_hash, normalise_features
from noisyfeedback.learners.catalogue import CatalogueEpsilonGreedy, CatalogueSquareCB
from noisyfeedback.learners.catalogue.squarecb import ADAPTIVE_GAMMA_SCALE
from noisyfeedback.simulate import simulate_catalogue


# ------------------------------------------------------------------ hashing
def test_normalise_features_follows_vw_json():
    got = normalise_features([{"user": {"age": 31, "country": "fr", "vip": True, "gone": False, "x": None},
                               "hour": 5, "device": "ios"},
                              {"item": {"tags": ["a", "b"], "v": [0.5, 2]}}])
    assert got == {"user": {"age": 31.0, "countryfr": 1.0, "vip": 1.0}, " ": {"hour": 5.0, "deviceios": 1.0},
                   "item": {"tagsa": 1.0, "tagsb": 1.0, "v0": 0.5, "v1": 2.0}}
    with pytest.raises(ValueError, match="finite"):
        normalise_features({"u": {"a": float("nan")}})
    with pytest.raises(TypeError, match="dict of namespaces"):
        normalise_features(3)


def test_hashes_are_vws():
    vw = pytest.importorskip("vowpalwabbit")
    ws = vw.Workspace("--quiet -b 18")
    try:
        for ns in ("user", "a", "shared", " ", "Action"):
            assert namespace_hash(ns) == ws.hash_space(ns)
            for name in ("age", "countryfr", "123", "x y"):
                assert feature_hash(name, namespace_hash(ns)) & (2 ** 18 - 1) == ws.hash_feature(
                    name, ws.hash_space(ns))
    finally:
        ws.finish()


def test_hasher_rows_and_namespaces():
    h = FeatureHasher()
    rows = h.transform([{"u": {"a": 1, "b": "x"}}, {}, {"i": {"c": 2.5}}])
    assert rows.indptr.tolist() == [0, 2, 2, 3] and rows.namespaces == ("u", "i")
    assert rows.ns.tolist() == [0, 0, 1] and rows.values.tolist() == [1.0, 1.0, 2.5]
    assert rows.hashes[1] == feature_hash("bx", namespace_hash("u"))
    sub = rows.take(np.array([2, 0]))
    assert sub.indptr.tolist() == [0, 1, 3] and sub.values.tolist() == [2.5, 1.0, 1.0]


# ---------------------------------------------------------------- data model
def test_candidate_rounds_validation_and_slicing():
    ctx = np.arange(6.0).reshape(3, 2)
    items = np.arange(12.0).reshape(6, 2)
    r = CandidateRounds(ctx, items, [0, 1, 4, 6], item_ids=np.array([7, 8, 9, 7, 1, 2]))
    assert r.n_rounds == 3 and r.sizes.tolist() == [1, 3, 2] and r.n_candidates == 6
    sub = r[[2, 0]]
    assert sub.offsets.tolist() == [0, 2, 3] and sub.item_ids.tolist() == [1, 2, 7]
    np.testing.assert_array_equal(sub.items, items[[4, 5, 0]])
    np.testing.assert_array_equal(sub.context, ctx[[2, 0]])
    assert r[1:].n_rounds == 2 and r.round_of().tolist() == [0, 1, 1, 1, 2, 2]
    with pytest.raises(ValueError, match="start at 0"):
        CandidateRounds(ctx, items, [1, 2, 4, 6])
    with pytest.raises(ValueError, match="round 1 has no candidates"):
        CandidateRounds(ctx, items, [0, 2, 2, 6])
    with pytest.raises(ValueError, match="items must have 6 rows"):
        CandidateRounds(ctx, items[:5], [0, 1, 4, 6])
    bad = items.copy()
    bad[4, 1] = np.inf
    with pytest.raises(ValueError, match="row 4"):
        CandidateRounds(ctx, bad, [0, 1, 4, 6])
    bad_sparse = sp.csr_matrix(bad)
    with pytest.raises(ValueError, match="row 4"):
        CandidateRounds(ctx, bad_sparse, [0, 1, 4, 6])
    with pytest.raises(ValueError, match="item_ids"):
        CandidateRounds(ctx, items, [0, 1, 4, 6], item_ids=[1, 2])
    with pytest.raises(ValueError, match="probabilities"):
        CandidateStream(r, np.full(6, 1.5))


def test_from_features_hashes_both_sides_with_one_hasher():
    r = CandidateRounds.from_features([{"user": {"age": 3}}, {"user": {"country": "fr"}}],
                                      [[{"item": {"id": "a"}}, {"item": {"id": "b"}}], [{"item": {"id": "a"}}]],
                                      item_ids=[["a", "b"], ["a"]])
    assert r.hashed and r.sizes.tolist() == [2, 1] and r.context.namespaces == ("user", "item")
    assert r.items.ns.tolist() == [1, 1, 1] and r.item_ids.tolist() == ["a", "b", "a"]
    assert r.items.hashes[0] == r.items.hashes[2] == feature_hash("ida", namespace_hash("item"))


# ------------------------------------------------------ kernels vs reference twins
def _random_rounds(rng, n=6, d_c=5, d_a=4, sparse=False):
    sizes = rng.integers(1, 6, size=n)
    off = np.concatenate([[0], np.cumsum(sizes)])
    ctx = rng.normal(size=(n, d_c)) * (rng.random((n, d_c)) < 0.7)
    ctx[0] = 0.0  # a zero context row (x̂ = 0)
    items = rng.normal(size=(off[-1], d_a)) * (rng.random((off[-1], d_a)) < 0.8)
    items[1] = 0.0  # a zero item row
    if sparse:
        ctx, items = sp.csr_matrix(ctx), sp.csr_matrix(items)
    return CandidateRounds(ctx, items, off)


def _dense(M):
    return M.toarray() if sp.issparse(M) else M


@pytest.mark.parametrize("context_norm", ["auto", "unit"])  # auto: none with the ridge oracle
@pytest.mark.parametrize("item_norm", ["unit", "none"])
@pytest.mark.parametrize("lin", ["all", "item", "none"])
@pytest.mark.parametrize("sparse", [False, True])
def test_dense_scores_match_reference(lin, sparse, item_norm, context_norm):
    rng = np.random.default_rng(1)
    r = _random_rounds(rng, sparse=sparse)
    L = CatalogueSquareCB(linear=lin, item_norm=item_norm, context_norm=context_norm, seed=0)
    L._init_state(r)
    assert L._context_norm() == ("none" if context_norm == "auto" else "unit")
    L.weights_[:] = rng.normal(size=L.weights_.shape)
    got = L.decision_function(r)
    C, Z = _dense(r.context), _dense(r.items)
    want = np.array([L.weights_ @ ref.phi_dense(C[i], Z[j], lin, unit_items=item_norm == "unit",
                                                unit_context=context_norm == "unit")
                     for i in range(r.n_rounds)
                     for j in range(r.offsets[i], r.offsets[i + 1])])
    np.testing.assert_allclose(got, want, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)


@pytest.mark.parametrize("interactions", [None, ("ui",)])
def test_hashed_rounds_of_items_with_the_same_feature_names_score_as_one_candidate_at_a_time(interactions):
    """Where every candidate of a round has the same feature names (embeddings), the kernel sums the context
    side once a round for each item feature; the scores are those of each candidate scored alone (a round of
    one candidate takes the general path), bit for bit, and the reference's; rounds whose candidates differ
    in one feature name, or in one namespace, or leave one feature out, take the general path."""
    rng = np.random.default_rng(5)
    shared = [{"u": {"a": rng.normal(), "b": rng.normal(), "c": "x"}, "v": {"d": rng.normal()}} for _ in range(4)]
    emb = lambda: {"i": {f"e{j}": rng.normal() for j in range(4)}, "j": {"w": rng.normal()}}  # noqa: E731
    rounds = [[emb() for _ in range(n)] for n in (5, 3, 4, 3)]
    rounds[1][2]["i"]["other"] = 1.0         # one more feature: the general path
    rounds[2][1]["j"] = {"w2": 1.0}          # another name
    del rounds[3][0]["i"]["e1"]               # one left out
    r = CandidateRounds.from_features(shared, rounds)
    alone = CandidateRounds.from_features([shared[i] for i in range(4) for _ in rounds[i]],
                                          [[a] for acts in rounds for a in acts])
    L = CatalogueSquareCB(features="hashed", bits=8, interactions=interactions, seed=0)
    L._init_state(r)
    L.weights_[:] = rng.normal(size=L.weights_.shape)
    got = L.decision_function(r)
    np.testing.assert_array_equal(got, L.decision_function(alone))
    Q = L._q(r.context.namespaces)

    def triples(H, row):
        lo, hi = H.indptr[row], H.indptr[row + 1]
        return list(zip(H.hashes[lo:hi].tolist(), H.values[lo:hi].tolist(), H.ns[lo:hi].tolist()))

    want = [L.weights_ @ ref.phi_hashed(triples(r.context, i), triples(r.items, j), 8, Q)
            for i in range(r.n_rounds) for j in range(r.offsets[i], r.offsets[i + 1])]
    np.testing.assert_allclose(got, want, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)


@pytest.mark.parametrize("item_norm", ["none", "unit"])
@pytest.mark.parametrize("interactions", [None, ("ui",), ("uj",)])
def test_hashed_scores_match_reference(interactions, item_norm):
    rng = np.random.default_rng(2)
    shared = [{"u": {"a": rng.normal(), "c": "x"}, "v": {"b": 1.0}}, {"u": {"a": 0.5}}, {}]
    actions = [[{"i": {"id": "p", "w": 2.0}}, {"i": {"id": "q"}, "j": {"z": 1.0}}], [{"i": {"id": "p"}}],
               [{"j": {"z": 3.0}}, {"i": {"id": "r"}}]]
    r = CandidateRounds.from_features(shared, actions)
    bits = 6  # a small table: collisions happen and must be handled as the reference adds them
    L = CatalogueSquareCB(features="hashed", bits=bits, interactions=interactions, item_norm=item_norm, seed=0)
    L._init_state(r)
    L.weights_[:] = rng.normal(size=L.weights_.shape)
    Q = L._q(r.context.namespaces)
    got = L.decision_function(r)

    def triples(H, row):
        lo, hi = H.indptr[row], H.indptr[row + 1]
        return list(zip(H.hashes[lo:hi].tolist(), H.values[lo:hi].tolist(), H.ns[lo:hi].tolist()))

    want = [L.weights_ @ ref.phi_hashed(triples(r.context, i), triples(r.items, j), bits, Q,
                                        unit_items=item_norm == "unit")
            for i in range(r.n_rounds) for j in range(r.offsets[i], r.offsets[i + 1])]
    np.testing.assert_allclose(got, want, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
    if interactions == ("uj",):
        assert Q.sum() == 1  # only u × j


@pytest.mark.parametrize("oracle", ["adagrad", "normalized"])
def test_one_step_matches_reference(oracle):
    rng = np.random.default_rng(3)
    r = _random_rounds(rng, n=1)
    r = CandidateRounds(r.context + 1.0, _dense(r.items)[:1] + 0.5, [0, 1])
    L = CatalogueSquareCB(oracle=oracle, learning_rate=0.3, seed=0)
    L._init_state(r)
    theta0 = rng.normal(size=L.weights_.shape)
    L.weights_[:] = theta0
    L.sum_sq_grad_[:] = rng.random(L.weights_.shape)
    G0 = L.sum_sq_grad_.copy()
    phi = ref.phi_dense(r.context[0], r.items[0])
    L.learn(r, [0], [1], [1.0])
    e = 1.0 - theta0 @ phi
    if oracle == "adagrad":
        want, want_G = ref.adagrad_step(theta0, G0, phi, e, 0.3)
        np.testing.assert_allclose(L.sum_sq_grad_, want_G, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
    else:
        want = theta0 + 0.3 * e * phi / (phi @ phi + 1.0)
    np.testing.assert_allclose(L.weights_, want, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)


@pytest.mark.parametrize("context_norm", ["none", "unit"])
def test_ridge_is_the_batch_ridge_solution(context_norm):
    """The ridge solution with the penalty relative to the first round's scale (the context as given, or at
    unit norm); scaling the context scales the interaction and context weights and leaves the scores."""
    rng = np.random.default_rng(4)
    r = _random_rounds(rng, n=40, d_c=3, d_a=2)
    L = CatalogueSquareCB(oracle="ridge", lam=0.7, context_norm=context_norm, seed=0)
    actions, probs = L.act(r)
    f = rng.integers(0, 2, size=r.n_rounds)
    L.learn(r, actions, f, probs)
    unit = context_norm == "unit"
    Phi = np.array([ref.phi_dense(r.context[i], r.items[r.offsets[i] + actions[i]], unit_context=unit)
                    for i in range(r.n_rounds)])
    x0 = ref.unit(r.context[0]) if unit else r.context[0]
    s2 = ref.ridge_scales(x0, r.items[r.offsets[0]:r.offsets[1]])
    np.testing.assert_allclose(L.feature_scale_, [s2[-2], s2[3 * 2]])  # [‖x0‖², mean ‖z‖²]
    np.testing.assert_allclose(L.weights_, ref.ridge_solution(Phi, f, 0.7, s2), rtol=1e-8, atol=1e-10)
    if not unit:  # the context 1,000 times larger: the same scores (a first round with a non-zero context:
        # a zero one leaves the scale at 1)
        r1 = r.take(np.arange(1, r.n_rounds))
        big = CandidateRounds(r1.context * 1000.0, r1.items, r1.offsets)
        A, B = (CatalogueSquareCB(oracle="ridge", lam=0.7, seed=0) for _ in range(2))
        A.learn(r1, actions[1:], f[1:], probs[1:])
        B.learn(big, actions[1:], f[1:], probs[1:])
        np.testing.assert_allclose(B.feature_scale_, A.feature_scale_ * [1e6, 1.0])
        np.testing.assert_allclose(B.decision_function(big), A.decision_function(r1), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("cls,k", [(CatalogueSquareCB, 1), (CatalogueSquareCB, 3), (CatalogueEpsilonGreedy, 2)])
def test_policy_and_slots_match_reference(cls, k):
    rng = np.random.default_rng(5)
    r = _random_rounds(rng, n=8)
    L = cls(n_slots=k, seed=11)
    L._init_state(r)
    L.weights_[:] = rng.normal(size=L.weights_.shape)
    L.n_updates_[0] = 17
    v = L.decision_function(r)
    if cls is CatalogueSquareCB:
        assert L.gamma_scale == "adaptive" and L.oracle_ == "ridge"  # D = 5·4 + 4 + 5 + 1 = 30 weights
        gamma = ADAPTIVE_GAMMA_SCALE[0] * np.sqrt(18.0)  # greedy first with the ridge oracle, before any switch
        dist = lambda s: ref.igw(s, gamma)  # noqa: E731
    else:
        dist = lambda s: ref.epsilon_greedy(s, L.epsilon)  # noqa: E731
    P = L.action_probabilities(r)
    us = np.random.Generator(np.random.PCG64(np.random.SeedSequence(11))).random(r.n_rounds * k)
    chosen, probs = L.act(r)
    chosen, probs = chosen.reshape(r.n_rounds, -1), probs.reshape(r.n_rounds, -1)
    for i in range(r.n_rounds):
        s = v[r.candidates(i)]
        np.testing.assert_allclose(P[r.candidates(i)], dist(s), rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
        want_c, want_p = ref.slots(s, k, us[i * k:(i + 1) * k], dist)
        n = len(want_c)
        assert chosen[i, :n].tolist() == want_c and (chosen[i, n:] == -1).all()
        np.testing.assert_allclose(probs[i, :n], want_p, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)


# ----------------------------------------------------- equivalence with the index learners
@pytest.fixture(scope="module")
def digits_shuffled():
    X, y = nf.datasets.load("digits")
    perm = np.random.default_rng(0).permutation(X.shape[0])
    return X[perm], y[perm]


@pytest.mark.parametrize("index_cls,cat_cls,extra", [(nf.SquareCB, CatalogueSquareCB, {"gamma_scale": 10.0}),
                                                     (nf.EpsilonGreedy, CatalogueEpsilonGreedy, {"epsilon": 0.1})])
def test_one_hot_candidates_are_the_index_learner_bit_for_bit(digits_shuffled, index_cls, cat_cls, extra):
    """All K classes as one-hot candidates every round, linear='item': the same mistakes and weights
    as the index learner after 10,000 rounds with flips (0.2, 0.3): M = Wᵀ and w_item = b exactly."""
    X, y = digits_shuffled
    stream = multiclass_candidates(X, y, n_classes=10)
    ch = nf.feedback.NoisyBandit(0.2, 0.3)
    idx = index_cls(10, oracle="adagrad", seed=5, **extra)
    ti = nf.simulate(idx, X, y, ch, n_rounds=10_000, seed=1, shuffle=False)
    cat = cat_cls(linear="item", oracle="adagrad", seed=5, **extra)  # the same fixed γ_scale (or ε)
    tc = nf.simulate(cat, stream, None, ch, n_rounds=10_000, seed=1)
    d = X.shape[1]
    assert tc.mistakes == ti.mistakes
    np.testing.assert_array_equal(cat.weights_[:d * 10].reshape(d, 10), idx.W_.T)
    np.testing.assert_array_equal(cat.weights_[d * 10:d * 10 + 10], idx.intercept_)
    assert not cat.weights_[d * 10 + 10:].any()
    assert cat.n_updates_[0] == idx.n_updates_[0] == 10_000


def test_one_hot_candidates_with_auto_oracles_are_the_index_learner(digits_shuffled):
    """Both with oracle="auto" (the default) and a fixed γ_scale (the catalogue's "auto" one): on digits (d = 64;
    one-hot, D = 715 weights) both resolve to the ridge oracle, and make the same mistakes with the same
    weights as SquareCB over 10,000 rounds. The
    catalogue ridge sums φᵀPφ over the whole φ (the index one starts from the intercept's row), so the
    weights agree to rounding, not bit for bit."""
    X, y = digits_shuffled
    stream = multiclass_candidates(X, y, n_classes=10)
    ch = nf.feedback.NoisyBandit(0.2, 0.3)
    idx = nf.SquareCB(10, gamma_scale=30.0, seed=5)  # the catalogue's "auto" γ_scale with the ridge oracle
    ti = nf.simulate(idx, X, y, ch, n_rounds=10_000, seed=1, shuffle=False)
    cat = CatalogueSquareCB(linear="item", gamma_scale="auto", context_norm="unit", seed=5)
    tc = nf.simulate(cat, stream, None, ch, n_rounds=10_000, seed=1)
    assert idx.oracle == cat.oracle == "auto" and idx.oracle_ == cat.oracle_ == "ridge"
    assert cat.gamma_scale_in_use() == 30.0
    assert cat.ridge_inverse_.shape == (715, 715)
    assert tc.mistakes == ti.mistakes
    np.testing.assert_array_equal(tc.curve, ti.curve)  # the same mistakes at every checkpoint
    d = X.shape[1]
    np.testing.assert_allclose(cat.weights_[:d * 10].reshape(d, 10), idx.W_.T, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(cat.weights_[d * 10:d * 10 + 10], idx.intercept_, rtol=1e-9, atol=1e-11)
    assert not cat.weights_[d * 10 + 10:].any()


def test_auto_oracle_resolution_is_recorded_and_saved(tmp_path):
    """oracle="auto": ridge for dense features up to AUTO_RIDGE_MAX_WEIGHTS weights, AdaGrad above and for
    hashed features; the choice is ``oracle_`` and travels in the model file."""
    from noisyfeedback.learners.catalogue._base import AUTO_RIDGE_MAX_WEIGHTS

    small = ranking_stream(n_rounds=50, context_dim=4, item_dim=3, n_candidates=4, seed=1)
    L = CatalogueSquareCB(seed=0)
    nf.simulate(L, small, None, None, n_rounds=50, seed=0)
    D = 4 * 3 + 3 + 4 + 1
    assert L.oracle == "auto" and L.oracle_ == "ridge" and L.ridge_inverse_.shape == (D, D)
    same = CatalogueSquareCB(oracle="ridge", seed=0)
    nf.simulate(same, small, None, None, n_rounds=50, seed=0)
    np.testing.assert_array_equal(L.weights_, same.weights_)
    loaded = nf.load(L.save(tmp_path / "auto.npz"))
    assert loaded.oracle_ == "ridge"
    np.testing.assert_array_equal(loaded.ridge_inverse_, L.ridge_inverse_)
    nf.simulate(L, small, None, None, n_rounds=30, seed=2)
    nf.simulate(loaded, small, None, None, n_rounds=30, seed=2)
    np.testing.assert_array_equal(loaded.weights_, L.weights_)
    # a model file of an "auto" learner must say which oracle it resolved to
    import json

    with np.load(tmp_path / "auto.npz", allow_pickle=False) as data:
        payload = {k: data[k] for k in data.files}
    meta = json.loads(str(payload["__metadata__"]))
    assert meta["scalars"]["oracle_"] == "ridge"
    del meta["scalars"]["oracle_"]
    payload["__metadata__"] = np.array(json.dumps(meta))
    np.savez(tmp_path / "no_oracle.npz", **payload)
    with pytest.raises(ValueError, match="oracle_"):
        nf.load(tmp_path / "no_oracle.npz")
    # above the threshold, and for hashed features: AdaGrad
    wide = ranking_stream(n_rounds=20, context_dim=50, item_dim=42, n_candidates=3, seed=1)
    assert 50 * 42 + 42 + 50 + 1 > AUTO_RIDGE_MAX_WEIGHTS
    W = CatalogueSquareCB(seed=0)
    nf.simulate(W, wide, None, None, n_rounds=20, seed=0)
    assert W.oracle_ == "adagrad" and W.ridge_inverse_.shape == (0, 0)
    # gamma_scale="auto" follows the oracle: 30 with ridge, 10 (the index SquareCB's) with AdaGrad; the default
    # "adaptive" is greedy first with ridge (its high value before a switch) and AdaGrad's 10 with it
    assert L.gamma_scale_in_use() == ADAPTIVE_GAMMA_SCALE[0] == 3_000.0 and W.gamma_scale_in_use() == 10.0
    L.gamma_scale = W.gamma_scale = "auto"
    assert L.gamma_scale_in_use() == 30.0 and W.gamma_scale_in_use() == 10.0
    assert CatalogueSquareCB(gamma_scale=7.0).gamma_scale_in_use() == 7.0
    adagrad_10 = CatalogueSquareCB(oracle="adagrad", gamma_scale=10.0, seed=0)
    auto_adagrad = CatalogueSquareCB(oracle="adagrad", seed=0)
    for learner in (adagrad_10, auto_adagrad):
        nf.simulate(learner, small, None, None, n_rounds=50, seed=0)
    np.testing.assert_array_equal(auto_adagrad.weights_, adagrad_10.weights_)
    H = CatalogueSquareCB(features="hashed", bits=10, seed=0)
    nf.simulate(H, small, None, None, n_rounds=20, seed=0)
    assert H.oracle_ == "adagrad"
    # a doctored file: hashed features with oracle_="ridge" is refused before any D×D matrix is made
    with np.load(H.save(tmp_path / "hashed.npz"), allow_pickle=False) as data:
        payload = {k: data[k] for k in data.files}
    meta = json.loads(str(payload["__metadata__"]))
    meta["scalars"]["oracle_"] = "ridge"
    payload["__metadata__"] = np.array(json.dumps(meta))
    np.savez(tmp_path / "hashed_ridge.npz", **payload)
    with pytest.raises(ValueError, match="oracle_='ridge' needs dense features"):
        nf.load(tmp_path / "hashed_ridge.npz").decision_function(small.rounds)
    E = CatalogueEpsilonGreedy(seed=0)
    nf.simulate(E, small, None, None, n_rounds=20, seed=0)
    assert E.oracle_ == "ridge"


def test_one_hot_candidates_make_the_same_choices(digits_shuffled):
    """The act/learn path, round by round: the same actions and propensities as SquareCB's."""
    X, y = digits_shuffled
    X, y = X[:400], y[:400]
    stream = multiclass_candidates(X, y, n_classes=10)
    idx = nf.SquareCB(10, oracle="adagrad", gamma_scale=10.0, seed=3)
    cat = CatalogueSquareCB(linear="item", oracle="adagrad", gamma_scale=10.0, seed=3)
    rng = np.random.default_rng(0)
    for t in range(X.shape[0]):
        a_i, p_i = idx.act(X[t:t + 1])
        a_c, p_c = cat.act(stream.rounds[t])
        assert a_i[0] == a_c[0] and p_i[0] == p_c[0]
        f = np.array([int(a_i[0] == y[t]) ^ int(rng.random() < 0.1)])
        idx.learn(X[t:t + 1], a_i, f, p_i)
        cat.learn(stream.rounds[t], a_c, f, p_c)
    np.testing.assert_array_equal(cat.weights_[:640].reshape(64, 10), idx.W_.T)


def test_multiclass_candidates_subsets():
    X, y = nf.datasets.load("iris")
    s = multiclass_candidates(X, y, k_min=2, p_label=0.7, seed=0)
    sizes = s.rounds.sizes
    assert sizes.min() >= 1 and sizes.max() <= 3 and set(np.unique(sizes)) <= {2, 3}
    has = np.array([s.rewards[s.rounds.candidates(i)].sum() for i in range(len(y))])
    assert set(np.unique(has)) <= {0.0, 1.0} and 0.55 < has.mean() < 0.85
    for i in range(len(y)):
        ids = s.rounds.item_ids[s.rounds.candidates(i)]
        assert (np.diff(ids) > 0).all()
        np.testing.assert_array_equal(s.rewards[s.rounds.candidates(i)], (ids == y[i]).astype(float))
        np.testing.assert_array_equal(s.rounds.items[s.rounds.candidates(i)], np.eye(3)[ids])


def test_ranking_stream_churn_and_ground_truth():
    a = ranking_stream(n_rounds=3000, seed=4)
    b = ranking_stream(n_rounds=3000, seed=4)
    np.testing.assert_array_equal(a.rewards, b.rewards)
    np.testing.assert_array_equal(a.rounds.item_ids, b.rounds.item_ids)
    assert a.rounds.sizes.tolist() == [10] * 3000 and a.rounds.items.shape[1] == 10
    young = (a.item_age < 200).mean()
    assert 0.4 < young < 0.6, young
    assert ((a.rewards > 0) & (a.rewards < 1)).all()
    for i in range(0, 3000, 500):  # distinct candidates in a round
        ids = a.rounds.item_ids[a.rounds.candidates(i)]
        assert len(set(ids.tolist())) == ids.shape[0]
    assert len(np.unique(a.rounds.item_ids)) > 100  # items arrive and retire
    assert not np.array_equal(ranking_stream(n_rounds=3000, seed=5).rewards, a.rewards)


# --------------------------------------------------------- simulate vs the Python loop
def _python_loop(learner, stream, feedback, n_rounds, seed):
    """act → clean clicks (u_click < examination[slot]·reward) → flips → learn, one round at a time,
    with the random streams simulate documents."""
    ss = np.random.SeedSequence(seed)
    _, s_flip, s_learner, s_click = ss.spawn(4)
    rng_flip = np.random.Generator(np.random.PCG64(s_flip))
    rng_click = np.random.Generator(np.random.PCG64(s_click))
    k = learner.n_slots
    exam = stream.examination_for(k)
    for t in range(n_rounds):
        i = t % stream.n_rounds
        rd = stream.rounds[i]
        a, p = learner.act(rd)
        a2 = np.asarray(a).reshape(1, k)
        uc, uf = rng_click.random(k), rng_flip.random(k)
        f = np.zeros((1, k), np.int64)
        for j in range(k):
            if a2[0, j] < 0:
                continue
            clean = int(uc[j] < exam[j] * stream.rewards[stream.rounds.offsets[i] + a2[0, j]])
            f[0, j] = ref_flip(clean, uf[j], feedback.rho0, feedback.rho1)
        learner.learn(rd, a, f.reshape(np.shape(a)), p)
    return learner


def ref_flip(f, u, rho0, rho1):
    if f == 1:
        return 0 if u < rho1 else 1
    return 1 if u < rho0 else 0


@pytest.mark.parametrize("params", [
    {}, {"features": "hashed", "bits": 10}, {"n_slots": 3}, {"n_slots": 2, "examination": (1.0, 0.5)},
    {"oracle": "ridge"}, {"oracle": "normalized", "linear": "none"}, {"item_norm": "none"},
    {"features": "hashed", "bits": 10, "item_norm": "none", "n_slots": 2}, {"oracle": "adagrad"},
    {"oracle": "adagrad", "n_slots": 3, "item_norm": "unit"},
], ids=["dense", "hashed", "slots-estimated", "slots-given", "ridge", "normalized", "raw-items", "hashed-raw-items",
        "adagrad", "adagrad-slots-unit"])
def test_simulate_equals_the_python_loop(params):
    stream = ranking_stream(n_rounds=150, context_dim=4, item_dim=3, n_candidates=4, seed=2,
                            examination=(1.0, 0.6, 0.35))
    ch = nf.feedback.NoisyBandit(0.1, 0.2)
    a = CatalogueSquareCB(seed=None, **params)
    ta = nf.simulate(a, stream, None, ch, n_rounds=200, seed=9)
    b = CatalogueSquareCB(seed=None, **params)
    b._init_state(stream.rounds, np.random.SeedSequence(9).spawn(4)[2])
    _python_loop(b, stream, ch, 200, 9)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    np.testing.assert_array_equal(a.exam_clicks_, b.exam_clicks_)
    assert ta.n_rounds == 200 and 0 <= ta.error_rate <= 1 and ta.metrics["regret_rate"] >= 0


def test_simulate_rejects_other_channels():
    stream = ranking_stream(n_rounds=20, context_dim=3, item_dim=2, n_candidates=3, seed=0)
    with pytest.raises(TypeError, match="NoisyBandit"):
        nf.simulate(CatalogueSquareCB(seed=0), stream, None, nf.feedback.FullLabel(), n_rounds=5)
    with pytest.raises(TypeError, match="CandidateStream"):
        simulate_catalogue(CatalogueSquareCB(seed=0), stream.rounds, None, 5)
    with pytest.raises(TypeError, match="y=None"):
        nf.simulate(CatalogueSquareCB(seed=0), stream, np.zeros(20), nf.feedback.NoisyBandit(), n_rounds=5)


# ------------------------------------------------------------------ slots
def test_slots_recover_item_scores_without_the_position_bias():
    """Three positions examined with probabilities (1, 0.6, 0.35), examination estimated online: over
    the last 10 % of rounds the item scores rank the candidates as their true click probabilities do
    (mean per-round Spearman ≥ 0.9) and the examination estimates are close to the truth."""
    from scipy.stats import spearmanr

    n = 20_000
    stream = ranking_stream(n_rounds=n, seed=1, examination=(1.0, 0.6, 0.35))
    L = CatalogueSquareCB(n_slots=3, seed=0)
    tr = nf.simulate(L, stream, None, nf.feedback.NoisyBandit(0.0, 0.0), n_rounds=2 * n, seed=0)
    last = stream.take(np.arange(int(0.9 * n), n))
    v = L.decision_function(last.rounds)
    rho = np.mean([spearmanr(v[last.rounds.candidates(i)], last.rewards[last.rounds.candidates(i)])[0]
                   for i in range(last.n_rounds)])
    assert rho >= 0.9, rho
    np.testing.assert_allclose(L.examination_estimates(), [1.0, 0.6, 0.35], atol=0.08)
    assert tr.metrics["clicks_rate"] > 0


def test_learn_refuses_bad_slot_actions():
    stream = ranking_stream(n_rounds=5, context_dim=3, item_dim=2, n_candidates=4, seed=0)
    L = CatalogueSquareCB(n_slots=2, seed=0)
    a, p = L.act(stream.rounds)
    f = np.zeros_like(a)
    bad = a.copy()
    bad[3, 1] = bad[3, 0]
    with pytest.raises(ValueError, match="row 3 places a candidate in two slots"):
        L.learn(stream.rounds, bad, f, p)
    bad = a.copy()
    bad[2, 0] = 4
    with pytest.raises(ValueError, match="row 2"):
        L.learn(stream.rounds, bad, f, p)
    with pytest.raises(ValueError, match="propensities"):
        L.learn(stream.rounds, a, f, np.zeros_like(p))


def _mean_spearman(scores: np.ndarray, truth: np.ndarray, k: int) -> float:
    """The mean over rounds of k candidates of Spearman's correlation between the two: Pearson's on the
    ranks (ties averaged), as scipy.stats.spearmanr, for every round at once."""
    from scipy.stats import rankdata

    a, b = (rankdata(z.reshape(-1, k), axis=1) for z in (scores, truth))
    a, b = a - a.mean(axis=1, keepdims=True), b - b.mean(axis=1, keepdims=True)
    return float(np.mean((a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))))


def test_mean_spearman_is_scipys_round_by_round():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(3)
    s, t = rng.normal(size=60), rng.integers(0, 3, size=60).astype(float)  # ties in t
    expected = np.mean([spearmanr(s[i:i + 6], t[i:i + 6])[0] for i in range(0, 60, 6)])
    assert _mean_spearman(s, t, 6) == pytest.approx(expected, rel=1e-12)


def test_position_model_keeps_position_bias_out_of_logged_learning():
    """A log whose placement favours one item feature (Plackett–Luce on it, 3 of 10 candidates shown):
    a position-blind model (examination 1 everywhere) learns the slot's examination as item value; the
    position-based model, examination given or estimated, ranks the held-out candidates by their true
    click probabilities (mean per-round Spearman ≥ 0.9) and better than the blind one."""
    n, K = 30_000, 10
    stream = ranking_stream(n_rounds=n, n_candidates=K, seed=2, examination=(1.0, 0.6, 0.35))
    r = stream.rounds
    rng = np.random.default_rng(0)
    Z = r.items.reshape(n, K, -1)
    order = np.argsort(-(3.0 * np.sqrt(10) * Z[:, :, 0] - np.log(-np.log(rng.random((n, K))))), axis=1)[:, :3]
    R = stream.rewards.reshape(n, K)
    clicks = (rng.random((n, 3)) < np.array([1.0, 0.6, 0.35]) * np.take_along_axis(R, order, 1)).astype(np.int64)
    m = int(0.9 * n)
    last = stream.take(np.arange(m, n))
    rho = {}
    for name, ex in (("blind", (1.0, 1.0, 1.0)), ("given", (1.0, 0.6, 0.35)), ("estimated", None)):
        L = CatalogueSquareCB(n_slots=3, examination=ex, seed=0).fit_logged(r[:m], order[:m], clicks[:m],
                                                                             np.ones((m, 3)))
        rho[name] = _mean_spearman(L.decision_function(last.rounds), last.rewards, K)
    assert rho["given"] >= 0.9 and rho["estimated"] >= 0.9, rho
    assert rho["blind"] < min(rho["given"], rho["estimated"]) - 0.03, rho


@pytest.mark.parametrize("full", [False, True], ids=["sparse-context", "full-context"])
@pytest.mark.parametrize("c", [1.0, 0.6])
@pytest.mark.parametrize("lin", ["all", "item", "none"])
def test_dense_adagrad_fast_path_is_the_feature_list_step_bit_for_bit(c, lin, full):
    """The contiguous-row AdaGrad step (item rows with every feature non-zero; with every context feature
    too, the whole bilinear block as one run) gives the bits of the generic step over the feature list
    (features_of + adagrad_features)."""
    from noisyfeedback.kernels import catalogue as K
    from noisyfeedback.learners.catalogue._base import _LINEAR

    rng = np.random.default_rng(7)
    d_c, d_a = 7, 5
    x = rng.normal(size=d_c) * (1.0 if full else (rng.random(d_c) < 0.8))
    z = rng.normal(size=d_a) + 3.0
    c_idx = np.flatnonzero(x).astype(np.int64)
    c_val = x[c_idx]
    a_idx, a_val = np.arange(d_a, dtype=np.int64), z
    D = d_c * d_a + d_a + d_c + 1
    theta, G = rng.normal(size=D), rng.random(D) * (rng.random(D) < 0.7)
    inv_x, inv_z = 1 / np.sqrt(np.sum(c_val ** 2)), 1 / np.sqrt(np.sum(a_val ** 2))
    code = _LINEAR[lin]
    t1, G1 = theta.copy(), G.copy()
    kidx, kval = np.empty(100, np.int64), np.empty(100)
    n = K.features_of(K.MODE_DENSE, code, d_c, d_a, 0, np.ones((1, 1), np.int8), True, c_idx, c_val, c_idx, 0,
                      len(c_idx), inv_x, a_idx, a_val, a_idx, 0, d_a, inv_z, c, kidx, kval)
    K.adagrad_features(t1, G1, kidx, kval, n, 0.37, 0.05)
    t2, G2 = theta.copy(), G.copy()
    assert (len(c_idx) == d_c) == full
    K.adagrad_dense_rows(code, t2, G2, np.empty(d_a + d_c + d_c * d_a), d_c, d_a, c_idx, c_val, 0, len(c_idx), inv_x,
                         a_val, 0, d_a, inv_z, c, 0.37, 0.05)
    np.testing.assert_array_equal(t1, t2)
    np.testing.assert_array_equal(G1, G2)
    assert not np.array_equal(t1, theta)


# ------------------------------------------------------------- graded (real-valued) rewards
def test_ridge_graded_rewards_are_the_batch_ridge_solution():
    rng = np.random.default_rng(4)
    r = _random_rounds(rng, n=40, d_c=3, d_a=2)
    L = CatalogueSquareCB(oracle="ridge", lam=0.7, context_norm="unit", seed=0)
    actions, probs = L.act(r)
    f = rng.uniform(-1.0, 1.0, size=r.n_rounds)
    L.learn(r, actions, f, probs)
    Phi = np.array([ref.phi_dense(r.context[i], r.items[r.offsets[i] + actions[i]]) for i in range(r.n_rounds)])
    s2 = ref.ridge_scales(ref.unit(r.context[0]), r.items[r.offsets[0]:r.offsets[1]])
    np.testing.assert_allclose(L.weights_, ref.ridge_solution(Phi, f, 0.7, s2), rtol=1e-8, atol=1e-10)


def _kinds_rounds(rng, n, start):
    """Rounds of 5 new candidates (ids never seen before), each of kind 'good' or 'plain' (at least one of each),
    a user feature each round; hashed from JSON-like dicts as the service does."""
    shared, actions, kinds = [], [], []
    for i in range(n):
        kind = rng.permutation(["good", "plain"] + list(rng.choice(["good", "plain"], 3)))
        kinds.append(kind == "good")
        shared.append({"user": {"hour": int(rng.integers(0, 24)), "device": str(rng.choice(["a", "b"]))}})
        actions.append([{"item": {"id": f"x{start + 5 * i + j}", "kind": str(k)}} for j, k in enumerate(kind)])
    return CandidateRounds.from_features(shared, actions), np.array(kinds)


@pytest.mark.parametrize("cls", [CatalogueSquareCB, CatalogueEpsilonGreedy])
def test_graded_rewards_learn_the_good_kind_of_candidate(cls):
    """Rewards 0.8 for the good kind of candidate and 0.3 for the others (never 0 or 1), 2,000 rounds; then
    rounds of new candidate ids: the top-ranked candidate is of the good kind in at least 80 % of them."""
    rng = np.random.default_rng(0)
    L = cls(features="hashed", bits=18, seed=0)
    train, good = _kinds_rounds(rng, 2000, 0)
    for lo in range(0, 2000, 100):
        part = train[lo:lo + 100]
        a, p = L.act(part)
        L.learn(part, a, np.where(good[lo:lo + 100][np.arange(100), a], 0.8, 0.3), p)
    test, good_t = _kinds_rounds(rng, 300, 10 ** 6)
    top = L.predict(test)
    assert good_t[np.arange(300), top].mean() >= 0.8


def test_catalogue_graded_rewards_with_flip_rates_are_refused_and_clicks_keep_their_bits():
    stream = ranking_stream(n_rounds=30, context_dim=3, item_dim=2, n_candidates=4, seed=0)
    r = stream.rounds
    L = CatalogueSquareCB(rho0=0.1, seed=0)
    a, p = L.act(r)
    f = np.full(30, 0.5)
    with pytest.raises(ValueError, match="rho0=0.1, rho1=0.0.*flip correction is for clicks.*row 0 has 0.5"):
        L.learn(r, a, f, p)
    clicks = (np.arange(30) % 3 == 0).astype(np.int64)
    want = CatalogueSquareCB(seed=0).learn(r, a, clicks, p).weights_
    for g in (clicks.astype(bool), clicks.astype(np.float64), np.where(clicks == 1, 1.0, -0.0)):
        np.testing.assert_array_equal(CatalogueSquareCB(seed=0).learn(r, a, g, p).weights_, want)
        np.testing.assert_array_equal(CatalogueSquareCB(seed=0).fit_logged(r, a, g, p).weights_, want)
    with pytest.raises(ValueError, match="feedback must be finite; row 4"):
        CatalogueSquareCB(seed=0).learn(r, a, np.where(np.arange(30) == 4, np.inf, 0.5), p)
    # several slots: graded rewards per slot, refused naming the round
    L2 = CatalogueSquareCB(n_slots=2, seed=0)
    a2, p2 = L2.act(r)
    L2.learn(r, a2, np.full((30, 2), 0.4), p2)
    assert L2.weights_.any()
    with pytest.raises(ValueError, match="feedback must be finite; row 7 has \\[0.4, nan\\]"):
        L2.learn(r, a2, np.where(np.arange(60).reshape(30, 2) == 15, np.nan, 0.4), p2)
