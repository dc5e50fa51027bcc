"""nf.simulate: determinism, equality with the plain-Python act/feedback/learn loop, learning."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import JIT_DISABLED

import noisyfeedback as nf
from noisyfeedback.simulate import round_order, simulation_streams

#: more rounds than the 20,000 rows (the second pass over the data reshuffles them)
ROUNDS = 3_000 if JIT_DISABLED else 30_000


@pytest.fixture(scope="module")
def synsep_data():
    return nf.datasets.synsep(n_samples=20_000, seed=3)


def python_loop(learner, X, y, channel, n_rounds, seed):
    """The reference: public predict/act/respond/learn, one round at a time, in Python."""
    rng_order, rng_feedback, _ = simulation_streams(seed)
    order = round_order(X.shape[0], n_rounds, rng_order)
    mistakes = np.empty(n_rounds, dtype=np.int64)
    for t in range(n_rounds):
        i = order[t]
        x = X[i:i + 1]
        mistakes[t] = learner.predict(x)[0] != y[i]
        actions, propensities = learner.act(x)
        feedback = channel.respond(y[i:i + 1], actions, rng_feedback)
        learner.learn(x, actions, feedback, propensities)
    return mistakes


def test_acceptance_banditron_trace_is_deterministic_and_equals_python_loop(synsep_data):
    X, y = synsep_data
    make = lambda: nf.Banditron(9, gamma=0.1, seed=0)  # noqa: E731
    channel = nf.feedback.NoisyBandit(0, 0)
    t1 = nf.simulate(make(), X, y, feedback=channel, n_rounds=ROUNDS, seed=1)
    t2 = nf.simulate(make(), X, y, feedback=channel, n_rounds=ROUNDS, seed=1)
    assert t1 == t2
    learner = make()
    compiled = nf.simulate(learner, X, y, feedback=channel, n_rounds=ROUNDS, seed=1)
    ref_learner = make()
    mistakes = python_loop(ref_learner, X, y, channel, ROUNDS, seed=1)
    assert compiled.mistakes == int(mistakes.sum())
    cum = np.cumsum(mistakes)
    np.testing.assert_array_equal(compiled.curve, cum[compiled.checkpoints - 1] / compiled.checkpoints)
    np.testing.assert_array_equal(learner.W_, ref_learner.W_)  # bit for bit
    assert learner.rng_.bit_generator.state == ref_learner.rng_.bit_generator.state


@pytest.mark.parametrize(
    "make,channel",
    [
        (lambda: nf.Banditron(9, gamma=0.2, seed=5), nf.feedback.NoisyBandit(0.2, 0.4)),
        (lambda: nf.Perceptron(9), nf.feedback.FullLabel()),
        (lambda: nf.Perceptron(9), nf.feedback.ConfusionNoise(np.full((9, 9), 0.05) + 0.55 * np.eye(9))),
    ],
)
def test_compiled_loop_equals_python_loop_under_noise(synsep_data, make, channel):
    X, y = synsep_data
    X, y = X[:500], y[:500]
    n = 2_000
    learner, ref_learner = make(), make()
    trace = nf.simulate(learner, X, y, channel, n_rounds=n, seed=7)
    mistakes = python_loop(ref_learner, X, y, channel, n, seed=7)
    assert trace.mistakes == int(mistakes.sum())
    np.testing.assert_array_equal(learner.W_, ref_learner.W_)


def test_dense_and_csr_give_identical_traces(synsep_data):
    X, y = synsep_data
    a, b = nf.Banditron(9, gamma=0.1, seed=0), nf.Banditron(9, gamma=0.1, seed=0)
    ch = nf.feedback.NoisyBandit(0.1, 0.1)
    t_dense = nf.simulate(a, X, y, ch, n_rounds=ROUNDS // 5, seed=2)
    t_csr = nf.simulate(b, sp.csr_matrix(X), y, ch, n_rounds=ROUNDS // 5, seed=2)
    assert t_dense == t_csr
    np.testing.assert_array_equal(a.W_, b.W_)


def test_rounds_pass_over_X_in_fresh_permutations():
    rng_order, _, _ = simulation_streams(0)
    order = round_order(10, 35, rng_order)
    for k in range(3):
        assert sorted(order[10 * k:10 * (k + 1)]) == list(range(10))
    assert not np.array_equal(order[:10], order[10:20])
    assert len(set(order[30:])) == 5


def test_seed_none_learner_is_seeded_by_simulate(synsep_data):
    X, y = synsep_data
    ch = nf.feedback.NoisyBandit(0, 0)
    t1 = nf.simulate(nf.Banditron(9, gamma=0.1), X, y, ch, n_rounds=2000, seed=4)
    t2 = nf.simulate(nf.Banditron(9, gamma=0.1), X, y, ch, n_rounds=2000, seed=4)
    t3 = nf.simulate(nf.Banditron(9, gamma=0.1), X, y, ch, n_rounds=2000, seed=5)
    assert t1 == t2
    assert t1 != t3


@pytest.mark.skipif(JIT_DISABLED, reason="learning quality needs many rounds")
def test_acceptance_learning_happens(synsep_data):
    X, y = synsep_data
    perceptron = nf.simulate(nf.Perceptron(9), X, y, nf.feedback.FullLabel(), n_rounds=100_000, seed=0)
    assert perceptron.error_rate < 0.02
    banditron = nf.simulate(nf.Banditron(9, gamma=0.05, seed=0), X, y, nf.feedback.NoisyBandit(0, 0),
                            n_rounds=100_000, seed=0)
    chance = 1 - 1 / 9
    assert banditron.error_rate < 0.1 * chance
    assert banditron.curve[-1] < banditron.curve[len(banditron.curve) // 2]  # still improving / flat


def test_trace_curve_and_checkpoints(synsep_data):
    X, y = synsep_data
    t = nf.simulate(nf.Perceptron(9), X, y, nf.feedback.FullLabel(), n_rounds=1000, seed=0,
                    checkpoints=np.array([10, 100, 1000]))
    assert t.checkpoints.tolist() == [10, 100, 1000]
    assert t.curve[-1] == t.error_rate == t.mistakes / 1000
    assert t.wall_time >= 0 and t.rounds_per_second > 0
    assert set(t.to_dict()) >= {"error_rate", "curve", "checkpoints", "seed", "n_rounds", "wall_time"}


@pytest.mark.parametrize(
    "kwargs,exc,words",
    [
        (dict(n_rounds=0), ValueError, "n_rounds"),
        (dict(n_rounds=1.5), TypeError, "n_rounds"),
        (dict(seed=-1), ValueError, "seed"),
        (dict(feedback=nf.feedback.FullLabel()), TypeError, "bandit"),
        (dict(feedback="clean"), TypeError, "feedback"),
        (dict(checkpoints=np.array([5, 3])), ValueError, "checkpoints"),
    ],
)
def test_simulate_rejects_bad_arguments(synsep_data, kwargs, exc, words):
    X, y = synsep_data
    args = dict(feedback=nf.feedback.NoisyBandit(0, 0), n_rounds=10, seed=0)
    args.update(kwargs)
    with pytest.raises(exc, match=words):
        nf.simulate(nf.Banditron(9, gamma=0.1, seed=0), X[:50], y[:50], **args)


def test_simulate_rejects_bad_data(synsep_data):
    X, y = synsep_data
    X, y = X[:50].copy(), y[:50].copy()
    ch = nf.feedback.NoisyBandit(0, 0)
    bad = X.copy()
    bad[7, 3] = np.nan
    with pytest.raises(ValueError, match="row 7"):
        nf.simulate(nf.Banditron(9, seed=0), bad, y, ch, n_rounds=10)
    y_bad = y.copy()
    y_bad[4] = 9
    with pytest.raises(ValueError, match="row 4"):
        nf.simulate(nf.Banditron(9, seed=0), X, y_bad, ch, n_rounds=10)
    with pytest.raises(TypeError, match="integer"):
        nf.simulate(nf.Banditron(9, seed=0), X, y.astype(float), ch, n_rounds=10)
    with pytest.raises(ValueError, match="entries"):
        nf.simulate(nf.Banditron(9, seed=0), X, y[:-1], ch, n_rounds=10)
    with pytest.raises(ValueError, match="2-D"):
        nf.simulate(nf.Banditron(9, seed=0), X[0], y[:1], ch, n_rounds=10)


def _mostly_zero(n=400, d=60, K=4, seed=0):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(K, d))
    X = rng.random((n, d)) * (rng.random((n, d)) < 0.15)
    X[::17] = 0.0  # some empty rows
    return X, np.argmax(X @ W.T, axis=1)


@pytest.mark.parametrize("make,channel", [
    (lambda: nf.RCNBF(4, gamma=0.2, rho0=0.1, rho1=0.2, seed=1), nf.feedback.NoisyBandit(0.1, 0.2)),
    (lambda: nf.Perceptron(4), nf.feedback.ConfusionNoise(np.full((4, 4), 0.05) + 0.8 * np.eye(4))),
    (lambda: nf.MCDBF(4, m=2, gamma=0.3, seed=1), nf.feedback.Diluted(2)),
])
def test_mostly_zero_dense_x_read_as_csr_gives_the_same_bits(monkeypatch, make, channel):
    """simulate reads a mostly-zero dense X as CSR; forcing the dense path must not change a bit."""
    from noisyfeedback._rows import simulation_rows

    X, y = _mostly_zero()
    assert sp.issparse(simulation_rows(X, n_rounds=2000))
    _converted_equals_dense(monkeypatch, make, channel, X, y)


def _converted_equals_dense(monkeypatch, make, channel, X, y):
    """simulate as is (X converted by simulation_rows) and with the conversion switched off give the
    same trace and the same W; returns the two learners."""
    import sys

    sim = sys.modules["noisyfeedback.simulate"]  # the module (nf.simulate is the function)
    a, b = make(), make()
    t_rows = nf.simulate(a, X, y, channel, n_rounds=2000, seed=4)
    monkeypatch.setattr(sim, "simulation_rows", lambda X, n_rounds=None, cache=False: X)
    t_dense = nf.simulate(b, X, y, channel, n_rounds=2000, seed=4)
    assert t_rows == t_dense
    np.testing.assert_array_equal(a.W_, b.W_)
    return a, b


def _few_values(n=400, d=60, K=4, seed=0, n_values=7):
    """Mostly-zero X whose non-zeros take ``n_values`` distinct values (read as CodedRows)."""
    X, y = _mostly_zero(n, d, K, seed)
    levels = np.random.default_rng(seed + 1).normal(size=n_values) * 3.3
    X[X != 0] = levels[np.random.default_rng(seed + 2).integers(0, n_values, size=int((X != 0).sum()))]
    return X, y


@pytest.mark.parametrize("make,channel", [
    (lambda: nf.RCNBF(4, gamma=0.2, rho0=0.1, rho1=0.2, seed=1), nf.feedback.NoisyBandit(0.1, 0.2)),
    (lambda: nf.BPA(4, gamma=0.2, seed=1), nf.feedback.NoisyBandit(0.1, 0.2)),
    (lambda: nf.SOBA(4, gamma=0.2, diagonal=True, seed=1), nf.feedback.NoisyBandit(0.1, 0.2)),
    (lambda: nf.RCINE(4, gamma=0.2, n_s=300, estimate_every=700, seed=1), nf.feedback.NoisyBandit(0.1, 0.2)),
    (lambda: nf.Perceptron(4), nf.feedback.ConfusionNoise(np.full((4, 4), 0.05) + 0.8 * np.eye(4))),
    (lambda: nf.MCDBF(4, m=2, gamma=0.3, seed=1), nf.feedback.Diluted(2)),
    (lambda: nf.MCSLP(4, m=2), nf.feedback.FullLabel()),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_coded_rows_give_the_same_bits_as_dense_x(monkeypatch, make, channel, dtype):
    """A mostly-zero X with few distinct values is read as CodedRows (one-byte codes into the values);
    forcing the dense path must not change a bit, for every learner's compiled loop."""
    from noisyfeedback._rows import CodedRows, simulation_rows

    X, y = _few_values()
    X = X.astype(dtype)
    assert isinstance(simulation_rows(X, n_rounds=2000), CodedRows)
    a, b = _converted_equals_dense(monkeypatch, make, channel, X, y)
    if isinstance(a, nf.RCINE):  # the remembered rows are gathered from the coded rows
        np.testing.assert_array_equal(a.buffer_X_, b.buffer_X_)
        assert a.rho_history_.shape[0] == 2


def test_simulation_rows_codes_few_values_exactly_and_falls_back():
    from noisyfeedback import _rows

    X, _ = _few_values(n_values=_rows.MAX_CODED_VALUES)
    R = _rows.simulation_rows(X)
    assert isinstance(R, _rows.CodedRows) and R.values.shape == (_rows.MAX_CODED_VALUES,)
    assert R.codes.dtype == np.uint8 and R.indices.dtype == np.uint16 and R.indptr.dtype == np.int64
    np.testing.assert_array_equal(R.toarray(), X)
    assert (R.values != 0).all()
    np.testing.assert_array_equal(np.diff(R.indptr), (X != 0).sum(axis=1))
    # one value more: a float CSR (int32 columns), same values
    X2, _ = _few_values(n_values=_rows.MAX_CODED_VALUES + 1)
    R2 = _rows.simulation_rows(X2)
    assert sp.issparse(R2) and (R2 != sp.csr_matrix(X2)).nnz == 0
    # -0.0 is a zero, not a value; a CSR X with few values is coded too
    X3 = X.copy()
    X3[X3 == X3[X3 != 0][0]] = -0.0
    R3 = _rows.simulation_rows(X3)
    np.testing.assert_array_equal(R3.toarray(), X3)
    assert R3.nnz == np.count_nonzero(X3)
    R4 = _rows.simulation_rows(sp.csr_matrix(X))
    assert isinstance(R4, _rows.CodedRows)
    np.testing.assert_array_equal(R4.toarray(), X)
    assert _rows.simulation_rows(sp.csr_matrix(X2)).format == "csr"
    # too dense: stays dense, whatever the values
    dense = np.ones((50, 4))
    assert _rows.simulation_rows(dense) is dense
    # wide X: 32-bit columns
    wide = np.zeros((3, 70_000))
    wide[1, 69_999] = 2.0
    Rw = _rows.simulation_rows(wide)
    assert Rw.indices.dtype == np.int32
    np.testing.assert_array_equal(Rw.toarray(), wide)


def test_simulation_rows_converts_only_mostly_zero_x_and_caches_per_array():
    import gc

    from noisyfeedback import _rows

    X, _ = _mostly_zero()
    dense = np.ones((50, 4))
    assert _rows.simulation_rows(dense) is dense  # above MAX_DENSITY: stays dense
    assert _rows.simulation_rows(X, n_rounds=10) is X  # too few rounds to pay for a pass over X
    R = _rows.simulation_rows(X, n_rounds=10_000)
    assert R.indices.dtype == np.int32 and R.indptr.dtype == np.int64  # int32 columns: fewer bytes a round
    from noisyfeedback._validation import check_X

    assert check_X(R) is R  # simulate takes the runner's converted X as is: no copy per task
    assert (R != sp.csr_matrix(X)).nnz == 0
    c1 = _rows.simulation_rows(X, cache=True)
    assert _rows.simulation_rows(X, cache=True) is c1
    assert _rows.simulation_rows(X.copy(), cache=True) is not c1
    key = id(X)
    del X
    gc.collect()
    assert key not in _rows._CACHE


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("make,channel", [
    (lambda: nf.RCNBF(4, gamma=0.2, rho0=0.1, rho1=0.2, seed=1), nf.feedback.NoisyBandit(0.1, 0.2)),
    (lambda: nf.Perceptron(4), nf.feedback.FullLabel()),
    (lambda: nf.MCDBF(4, m=2, gamma=0.3, seed=1), nf.feedback.Diluted(2)),
])
def test_float32_x_is_read_without_a_copy_and_gives_the_float64_bits(sparse, make, channel):
    """float32 X: no float64 copy; the kernels compute in float64, so the bits equal those of X as float64."""
    from noisyfeedback._validation import check_X

    X, y = _mostly_zero()
    X32 = X.astype(np.float32)
    X64 = X32.astype(np.float64)
    if sparse:
        X32, X64 = sp.csr_matrix(X32), sp.csr_matrix(X64)
    else:
        assert check_X(X32) is X32
    a, b = make(), make()
    ta = nf.simulate(a, X32, y, channel, n_rounds=2000, seed=3)
    tb = nf.simulate(b, X64, y, channel, n_rounds=2000, seed=3)
    assert ta == tb
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.predict(X32), b.predict(X64))
