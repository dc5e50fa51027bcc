"""RCINE (Agarwal & Manwani 2021, Algorithm 2): RCNBF with flip rates re-estimated every n_s rounds."""

import numpy as np
import pytest
from conftest import JIT_DISABLED
from test_simulate import python_loop

import noisyfeedback as nf


@pytest.fixture(scope="module")
def data():
    return nf.datasets.synsep(n_samples=3000, seed=3)


def test_compiled_loop_equals_python_loop_including_the_estimates(data):
    X, y = data
    ch = nf.feedback.NoisyBandit(0.2, 0.4)
    n = 1_200
    a = nf.RCINE(9, gamma=0.1, n_s=500, seed=1)
    b = nf.RCINE(9, gamma=0.1, n_s=500, seed=1)
    trace = nf.simulate(a, X, y, ch, n_rounds=n, seed=2)
    mistakes = python_loop(b, X, y, ch, n, seed=2)
    assert trace.mistakes == int(mistakes.sum())
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.rho_history_, b.rho_history_)
    assert a.rho_history_[:, 0].tolist() == [500, 1000]  # estimated at rounds n_s and 2 n_s
    np.testing.assert_array_equal(a.buffer_actions_, b.buffer_actions_)
    assert a.buffer_X_.shape == (500, X.shape[1])


def test_learning_in_pieces_equals_learning_at_once(data):
    X, y = data
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 9, size=700)
    fb = nf.feedback.NoisyBandit(0.1, 0.2).respond(y[:700], actions, rng)
    p = np.full(700, 0.5)
    a = nf.RCINE(9, gamma=0.1, n_s=200, seed=0).learn(X[:700], actions, fb, p)
    b = nf.RCINE(9, gamma=0.1, n_s=200, seed=0)
    for lo, hi in [(0, 150), (150, 420), (420, 700)]:
        b.learn(X[lo:hi], actions[lo:hi], fb[lo:hi], p[lo:hi])
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.rho_history_, b.rho_history_)
    assert a.t_ == b.t_ == 700 and a.rho_history_.shape == (3, 3)


def test_rcine_before_its_first_estimate_is_banditron(data):
    """ρ̂ = 0 until round n_s: the first n_s rounds are Banditron's, bit for bit."""
    X, y = data
    ch = nf.feedback.NoisyBandit(0.2, 0.4)
    r, b = nf.RCINE(9, gamma=0.1, n_s=5000, seed=3), nf.Banditron(9, gamma=0.1, seed=3)
    nf.simulate(r, X, y, ch, n_rounds=4000, seed=1)
    nf.simulate(b, X, y, ch, n_rounds=4000, seed=1)
    np.testing.assert_array_equal(r.W_, b.W_)


@pytest.mark.skipif(JIT_DISABLED, reason="needs many rounds")
@pytest.mark.slow
def test_rcine_estimates_the_rates_and_beats_banditron():
    """Each of its three estimates (rounds 20k, 40k, 60k, each on the last 20k rounds) is within 0.05 of the
    true rates, and once it learns with them (the last 20k rounds) it errs far less than Banditron."""
    X, y = nf.datasets.synsep(n_samples=20_000, seed=3)
    ch = nf.feedback.NoisyBandit(0.2, 0.4)
    marks = np.array([40_000, 60_000])
    r = nf.RCINE(9, gamma=0.05, n_s=20_000, seed=0)
    tr = nf.simulate(r, X, y, ch, n_rounds=60_000, seed=0, checkpoints=marks)
    tb = nf.simulate(nf.Banditron(9, gamma=0.05, seed=0), X, y, ch, n_rounds=60_000, seed=0, checkpoints=marks)
    assert r.rho_history_[:, 0].tolist() == [20_000, 40_000, 60_000]
    assert np.all(np.abs(r.rho_history_[:, 1:] - [0.2, 0.4]) < 0.05), r.rho_history_

    def late(trace):  # the error rate over rounds 40k-60k
        return (trace.curve[1] * 60_000 - trace.curve[0] * 40_000) / 20_000
    assert late(tr) < 0.6 * late(tb), (late(tr), late(tb))


def test_rcine_rejects_an_unknown_estimator(data):
    X, y = data
    with pytest.raises(ValueError, match="'estimator' parameter of RCINE"):
        nf.simulate(nf.RCINE(9, estimator="magic"), X, y, nf.feedback.NoisyBandit(0, 0), n_rounds=10)


def test_estimate_every_estimates_at_its_rounds_on_the_last_n_s_tuples(data):
    """estimate_every=400, n_s=150: estimates at rounds 400 and 800, each on rounds [250, 400) / [650, 800)."""
    X, y = data
    ch = nf.feedback.NoisyBandit(0.2, 0.4)
    a = nf.RCINE(9, gamma=0.1, n_s=150, estimate_every=400, seed=1)
    b = nf.RCINE(9, gamma=0.1, n_s=150, estimate_every=400, seed=1)
    full = nf.RCINE(9, gamma=0.1, n_s=10_000, seed=1)  # never estimates: keeps every tuple, same path to 400
    nf.simulate(a, X, y, ch, n_rounds=900, seed=2)
    mistakes = python_loop(b, X, y, ch, 900, seed=2)
    assert int(mistakes.sum()) == int(nf.simulate(nf.RCINE(9, gamma=0.1, n_s=150, estimate_every=400, seed=1),
                                                  X, y, ch, n_rounds=900, seed=2).mistakes)
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.rho_history_, b.rho_history_)
    assert a.rho_history_[:, 0].tolist() == [400, 800]
    # the buffer after round 800 holds rounds [650, 800) and then the 100 rounds after; at 400 it held [250, 400)
    assert a.buffer_actions_.shape == (150,)
    nf.simulate(full, X, y, ch, n_rounds=400, seed=2)
    c = nf.RCINE(9, gamma=0.1, n_s=150, estimate_every=400, seed=1)
    nf.simulate(c, X, y, ch, n_rounds=399, seed=2)  # before its first estimate: the window [250, 399)
    np.testing.assert_array_equal(c.buffer_actions_, full.buffer_actions_[250:399])
    np.testing.assert_array_equal(c.buffer_X_, full.buffer_X_[250:399])
    with pytest.raises(ValueError, match="'estimate_every' parameter of RCINE"):
        nf.simulate(nf.RCINE(9, estimate_every=0), X, y, ch, n_rounds=10)


@pytest.mark.parametrize("sparse", [False, True])
def test_buffer_in_uneven_pieces_holds_the_window_rows(data, sparse):
    """The reused buffer store (moved up in place, filled in pieces) holds what concatenating every
    kept piece and keeping the last n_s rows holds — pieces smaller than, across and larger than the window."""
    import scipy.sparse as sp

    X, y = data
    rng = np.random.default_rng(5)
    n = 1_300
    actions = rng.integers(0, 9, size=n)
    fb = nf.feedback.NoisyBandit(0.1, 0.2).respond(y[:n], actions, rng)
    p = np.full(n, 0.5)
    Xin = sp.csr_matrix(X[:n]) if sparse else X[:n]
    a = nf.RCINE(9, gamma=0.1, n_s=150, estimate_every=400, seed=0)
    kept_X, kept_a = np.zeros((0, X.shape[1])), np.zeros(0, np.int64)
    bounds = [0, 100, 260, 265, 390, 420, 700, 760, 1290, 1300]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        for s_lo in range(lo, hi, 1):  # learn's segments end at the estimates (multiples of 400)
            if s_lo != lo and s_lo % 400:
                continue
            s_hi = min(hi, (s_lo // 400 + 1) * 400)
            keep = s_lo + max(0, (s_lo // 400 + 1) * 400 - 150 - s_lo, s_hi - s_lo - 150)
            kept_X = np.concatenate([kept_X, X[keep:s_hi]])[-150:]
            kept_a = np.concatenate([kept_a, actions[keep:s_hi]])[-150:]
        a.learn(Xin[lo:hi], actions[lo:hi], fb[lo:hi], p[lo:hi])
        np.testing.assert_array_equal(a.buffer_X_, kept_X)
        np.testing.assert_array_equal(a.buffer_actions_, kept_a)
    assert a.rho_history_[:, 0].tolist() == [400, 800, 1200]


def test_warm_start_keeps_the_first_estimate_and_the_rates(data, tmp_path):
    X, y = data
    ch = nf.feedback.NoisyBandit(0.2, 0.3)
    kw = {"gamma": 0.1, "n_s": 1000, "seed": 4}
    cold, warm = nf.RCINE(9, **kw), nf.RCINE(9, warm_start=True, **kw)
    nf.simulate(cold, X, y, ch, n_rounds=3000, seed=1)
    nf.simulate(warm, X, y, ch, n_rounds=3000, seed=1)
    np.testing.assert_array_equal(warm.rho_history_[0], cold.rho_history_[0])  # the first estimate is cold
    assert warm.warm_l2_ is not None and warm.rho_history_.shape == (3, 3)
    assert np.abs(warm.rho_history_[:, 1:] - [0.2, 0.3]).max() < 0.1, warm.rho_history_
    back = nf.load(warm.save(tmp_path / "w.npz"))
    assert back.warm_l2_ == warm.warm_l2_
    np.testing.assert_array_equal(back.warm_components_, warm.warm_components_)
    with pytest.raises(ValueError, match="'warm_start' parameter of RCINE"):
        nf.simulate(nf.RCINE(9, estimator="nrest", warm_start=True), X, y, ch, n_rounds=10)
