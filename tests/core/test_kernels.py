"""Every compiled kernel against its slow reference twin (tests/reference.py), on edge cases.

Run also with NUMBA_DISABLE_JIT=1 (``make test`` does) so the kernel code is covered as Python.
Integer-valued data keeps sums exact, so discrete decisions (argmax, draws) must agree exactly;
real-valued data is compared within the tolerances of tests/tolerances.py.
"""

import numpy as np
import pytest
import reference as ref
import scipy.sparse as sp
from tolerances import KERNEL_ATOL, KERNEL_RTOL

from noisyfeedback._validation import check_X
from noisyfeedback.kernels.bandit import RULE_BANDITRON, RULE_BPA, bandit_act, bandit_learn, bandit_simulate
from noisyfeedback.kernels.channels import confusion_label, flip
from noisyfeedback.kernels.linear import (
    REGISTER_K,
    add_row,
    add_sub_rows,
    argmax_first,
    epsilon_greedy_draw,
    fetch_row,
    predict_rows,
    row_scores,
    row_scores_any_k,
    row_scores_coded,
    score_rows,
)
from noisyfeedback.kernels.perceptron import perceptron_learn, perceptron_simulate
from noisyfeedback.learners._linear import kernel_view

NO_STATE = (np.zeros((0, 0)), np.zeros((0, 0)), np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64))
NO_STATE_LEARN = NO_STATE[:3]


def _int_problem(rng, n=40, d=7, K=4, density=0.5):
    X = rng.integers(-3, 4, size=(n, d)).astype(float)
    X[rng.random((n, d)) > density] = 0.0
    X[0] = 0.0  # an all-zero row
    y = rng.integers(0, K, size=n)
    return X, y


def _row(X, i):
    d = X.shape[1]
    idx = np.empty(d, np.int64)
    val = np.empty(d)
    nnz = fetch_row(i, *kernel_view(X), idx, val)
    return idx, val, nnz


def test_fetch_row_dense_and_csr_agree_and_skip_zeros(rng):
    X, _ = _int_problem(rng)
    Xs = sp.csr_matrix(X)
    Xs.data[:3] = 0.0  # explicit stored zeros are skipped too
    Xd = Xs.toarray()
    for i in range(X.shape[0]):
        a = _row(Xd, i)
        b = _row(Xs, i)
        assert a[2] == b[2] == np.count_nonzero(Xd[i])
        np.testing.assert_array_equal(a[0][: a[2]], np.flatnonzero(Xd[i]))
        np.testing.assert_array_equal(a[1][: a[2]], b[1][: b[2]])


def test_row_scores_match_matrix_product(rng):
    W = rng.normal(size=(5, 30))
    X = rng.normal(size=(20, 30))
    X[X < 0] = 0
    s = np.empty(5)
    for i in range(20):
        idx, val, nnz = _row(X, i)
        row_scores(W, idx, val, nnz, s)
        np.testing.assert_allclose(s, ref.scores(W, X[i]), rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
    out = np.empty((20, 5))
    score_rows(W, *kernel_view(X), out)
    np.testing.assert_allclose(out, X @ W.T, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)


@pytest.mark.parametrize("K", [1, 2, 3, 4, 5, 7, 9, 10, 16, 17, 26])
@pytest.mark.parametrize("index_type", [np.int64, np.int32, np.uint16])  # uint16: coded rows
@pytest.mark.parametrize("order", ["F", "C"])
def test_row_scores_registers_equal_running_sums_bit_for_bit(rng, K, index_type, order):
    """The generated fixed-K kernels (K in REGISTER_K) do the same sums in the same order as the
    loop over s, for column-major and row-major W: equal bits on real-valued data, also for an empty
    row and a single non-zero (the last feature)."""
    d = 40
    W = np.asarray(rng.normal(size=(K, d)) * 10.0 ** rng.integers(-8, 8, size=(K, d)), order=order)
    for nnz in (0, 1, 7, d):
        idx = np.sort(rng.choice(d, size=nnz, replace=False)).astype(index_type)
        if nnz == 1:
            idx[0] = d - 1
        val = rng.normal(size=nnz) * 10.0 ** rng.integers(-5, 5, size=nnz)
        fast, slow = np.full(K, np.nan), np.full(K, np.nan)
        row_scores(W, idx, val, nnz, fast)
        row_scores_any_k(W, idx, val, nnz, slow)
        np.testing.assert_array_equal(fast, slow)
        expected = np.zeros(K)  # the documented order, written out
        for p in range(nnz):
            expected = expected + W[:, idx[p]] * val[p]
        np.testing.assert_array_equal(fast, expected)
        # the same row with coded values (values[codes[p]], CodedRows): the same bits again
        values, codes = np.unique(val, return_inverse=True)
        coded = np.full(K, np.nan)
        row_scores_coded(W, idx, codes.astype(np.uint8), values, nnz, coded)
        np.testing.assert_array_equal(coded, expected)
    assert (K in REGISTER_K) == (2 <= K <= 16)


@pytest.mark.parametrize("same_row", [False, True])
def test_add_sub_rows_equals_add_then_subtract(rng, same_row):
    W = rng.normal(size=(4, 12))
    idx = np.array([0, 3, 4, 11])
    val = rng.normal(size=4)
    r_add, r_sub = (2, 2) if same_row else (1, 3)
    fused = W.copy()
    add_sub_rows(fused, r_add, 0.37, r_sub, idx, val, 4)
    twice = W.copy()
    add_row(twice, r_add, 0.37, idx, val, 4)
    twice[r_sub, idx] -= val
    np.testing.assert_array_equal(fused, twice)
    untouched = np.setdiff1d(np.arange(12), idx)
    np.testing.assert_array_equal(fused[:, untouched], W[:, untouched])


@pytest.mark.parametrize("s", [[0.0, 0.0, 0.0], [1.0, 3.0, 3.0], [-1.0, -1.0, -2.0], [5.0], [2.0, 1.0, 2.0]])
def test_argmax_first_lowest_index_wins_ties(s):
    assert argmax_first(np.array(s)) == int(np.argmax(s))


def test_predict_rows_before_learning_is_label_zero(rng):
    X, _ = _int_problem(rng)
    out = np.empty(X.shape[0], np.int64)
    predict_rows(np.zeros((4, X.shape[1])), *kernel_view(X), out)
    assert (out == 0).all()


@pytest.mark.parametrize("K", [2, 3, 10])
@pytest.mark.parametrize("gamma", [1e-9, 0.05, 0.5, 1 - 1e-9])
def test_epsilon_greedy_draw_is_inverse_cdf(K, gamma):
    P_all = [ref.epsilon_greedy_probs(yhat, gamma, K) for yhat in range(K)]
    us = [0.0, 1e-300, 0.5, np.nextafter(1.0, 0.0)]
    for yhat, P in enumerate(P_all):
        cum = np.cumsum(P)
        us_here = us + list(cum[:-1]) + list(np.nextafter(cum[:-1], 0.0))
        for u in us_here:
            a, pa = epsilon_greedy_draw(yhat, gamma, K, u)
            assert a == ref.inverse_cdf(P, u), (yhat, u)
            assert pa == P[a]


def test_epsilon_greedy_draw_frequencies(rng):
    K, gamma, yhat = 4, 0.2, 2
    counts = np.zeros(K)
    for u in rng.random(20000):
        counts[epsilon_greedy_draw(yhat, gamma, K, u)[0]] += 1
    P = ref.epsilon_greedy_probs(yhat, gamma, K)
    # 5 standard errors of a binomial proportion at n = 20000
    assert np.all(np.abs(counts / 20000 - P) < 5 * np.sqrt(P * (1 - P) / 20000))


@pytest.mark.parametrize("rho0,rho1", [(0.0, 0.0), (0.2, 0.4), (0.4, 0.2), (0.0, 0.99)])
def test_flip_matches_reference_at_boundaries(rho0, rho1):
    for f in (0, 1):
        for u in [0.0, rho0, np.nextafter(rho0, 0), rho1, np.nextafter(rho1, 0), 0.5, np.nextafter(1.0, 0)]:
            assert flip(f, u, rho0, rho1) == ref.flip(f, u, rho0, rho1)


def test_confusion_label_is_inverse_cdf_of_column(rng):
    C = rng.random((4, 4))
    C /= C.sum(axis=0)
    C[:, 1] = [0.0, 1.0, 0.0, 0.0]  # a deterministic column
    Ccum = np.cumsum(C, axis=0)
    for y in range(4):
        for u in list(rng.random(50)) + [0.0, np.nextafter(1.0, 0.0)] + list(Ccum[:, y]):
            assert confusion_label(y, u, Ccum) == ref.inverse_cdf(C[:, y], u)


@pytest.mark.parametrize("sparse", [False, True])
def test_perceptron_learn_matches_reference(rng, sparse):
    X, y = _int_problem(rng, n=60)
    W = np.zeros((4, X.shape[1]), order="F")
    Wref = W.copy()
    for i in range(X.shape[0]):
        Wref, _ = ref.perceptron_step(Wref, X[i], y[i])
    Xk = check_X(sp.csr_matrix(X)) if sparse else X
    perceptron_learn(W, *kernel_view(Xk), y)
    np.testing.assert_array_equal(W, Wref)  # integer data: exact



def _rates(rho0: float, rho1: float) -> tuple[np.ndarray, np.ndarray]:
    """The flip rates as the learners pass them to the compiled loops (`feedback.kernel_feedback`): float64
    arrays of one value; scalars would compile another specialisation of each loop for the tests alone."""
    return np.array([rho0]), np.array([rho1])

@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("rho", [(0.0, 0.0), (0.3, 0.1)])
def test_banditron_kernels_match_reference(rng, sparse, rho):
    rho0, rho1 = rho
    h = ((0 - rho0) / (1 - rho0 - rho1), (1 - rho0) / (1 - rho0 - rho1))
    X = rng.normal(size=(50, 9)) * (rng.random((50, 9)) < 0.6)
    K, gamma = 3, 0.3
    y = rng.integers(0, K, size=50)
    order = rng.integers(0, 50, size=120)
    u_l, u_f = rng.random(120), rng.random(120)
    Xk = check_X(sp.csr_matrix(X)) if sparse else X

    W = np.zeros((K, 9), order="F")
    mistakes = np.empty(120, np.int8)
    bandit_simulate(RULE_BANDITRON, W, *kernel_view(Xk), y, order, gamma, h[0], h[1], *_rates(rho0, rho1), u_l, u_f,
                    mistakes, *NO_STATE)

    Wref = np.zeros((K, 9))
    mref = []
    for t, i in enumerate(order):
        Wref, yhat, *_ = ref.banditron_step(Wref, X[i], y[i], gamma, u_l[t], u_f[t], rho0, rho1, h)
        mref.append(int(yhat != y[i]))
    np.testing.assert_allclose(W, Wref, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(mistakes, mref)


def test_banditron_act_then_learn_equals_simulate(rng):
    X = rng.normal(size=(30, 6))
    y = rng.integers(0, 4, size=30)
    u_l, u_f = rng.random(30), rng.random(30)
    order = np.arange(30)
    W1 = np.zeros((4, 6), order="F")
    bandit_simulate(RULE_BANDITRON, W1, *kernel_view(X), y, order, 0.2, 0.0, 1.0, *_rates(0.0, 0.0), u_l, u_f,
                    np.empty(30, np.int8), *NO_STATE)
    W2 = np.zeros((4, 6), order="F")
    for i in range(30):
        a, p = np.empty(1, np.int64), np.empty(1)
        bandit_act(W2, *kernel_view(X[i:i + 1]), 0.2, u_l[i:i + 1], a, p)
        f = np.array([ref.flip(int(a[0] == y[i]), u_f[i], 0.0, 0.0)])
        bandit_learn(RULE_BANDITRON, W2, *kernel_view(X[i:i + 1]), a, f, p, 0.0, 1.0, *NO_STATE_LEARN)
    np.testing.assert_array_equal(W1, W2)


def test_perceptron_simulate_with_confusion_noise_uses_noisy_label(rng):
    X, y = _int_problem(rng, n=30)
    C = np.array([[0.5, 0.0, 0.0, 0.0], [0.5, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    Ccum = np.cumsum(C, axis=0)
    u = rng.random(30)
    W = np.zeros((4, X.shape[1]), order="F")
    perceptron_simulate(W, *kernel_view(X), y, np.arange(30), 1, u, Ccum, np.empty(30, np.int8))
    Wref = np.zeros_like(W)
    for i in range(30):
        Wref, _ = ref.perceptron_step(Wref, X[i], ref.inverse_cdf(C[:, y[i]], u[i]))
    np.testing.assert_array_equal(W, Wref)


@pytest.mark.parametrize("sparse", [False, True])
def test_bpa_kernel_matches_reference(rng, sparse):
    X = rng.normal(size=(40, 6)) * (rng.random((40, 6)) < 0.7)
    X[3] = 0.0  # ‖x‖ = 0: no update
    K, gamma = 4, 0.25
    y = rng.integers(0, K, size=40)
    order = np.concatenate([np.arange(40), rng.integers(0, 40, size=60)])
    u_l, u_f = rng.random(100), rng.random(100)
    W = np.zeros((K, 6), order="F")
    m = np.empty(100, np.int8)
    bandit_simulate(RULE_BPA, W, *kernel_view(check_X(sp.csr_matrix(X)) if sparse else X), y, order, gamma, 0.0, 1.0,
                    *_rates(0.1, 0.2), u_l, u_f, m, *NO_STATE)
    Wref = np.zeros((K, 6))
    for t, i in enumerate(order):
        Wref, yhat, _, _ = ref.bpa_step(Wref, X[i], y[i], gamma, u_l[t], u_f[t], 0.1, 0.2)
        assert m[t] == int(yhat != y[i])
    np.testing.assert_allclose(W, Wref, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("diagonal", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_soba_kernel_matches_explicit_matrices(rng, diagonal, sparse):
    from noisyfeedback.kernels.bandit import RULE_SOBA_DIAG, RULE_SOBA_FULL

    n, d, K, gamma, a = 30, 4, 3, 0.3, 0.7
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.8)
    y = rng.integers(0, K, size=n)
    order = np.concatenate([np.arange(n), rng.integers(0, n, size=90)])
    u_l, u_f = rng.random(120), rng.random(120)
    W = np.zeros((K, d), order="F")
    theta = np.zeros((K, d))
    A = np.full((K, d), a) if diagonal else np.eye(K * d) / a
    cum = np.zeros(1)
    m = np.empty(120, np.int8)
    rule = RULE_SOBA_DIAG if diagonal else RULE_SOBA_FULL
    bandit_simulate(rule, W, *kernel_view(check_X(sp.csr_matrix(X)) if sparse else X), y, order, gamma, 0.0, 1.0,
                    *_rates(0.1, 0.1), u_l, u_f, m, theta, A, cum, *NO_STATE[3:])
    Aref = np.full(K * d, a) if diagonal else a * np.eye(K * d)
    th_ref, cum_ref = np.zeros((K, d)), 0.0
    for t, i in enumerate(order):
        Aref, th_ref, cum_ref, Wt, yhat = ref.soba_step(Aref, th_ref, cum_ref, X[i], y[i], gamma, u_l[t], u_f[t],
                                                        0.1, 0.1, diagonal)
        assert m[t] == int(yhat != y[i]), t
    W_ref = (th_ref.ravel() / Aref if diagonal else np.linalg.solve(Aref, th_ref.ravel())).reshape(K, d)
    np.testing.assert_allclose(W, W_ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(theta, th_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cum[0], cum_ref, rtol=1e-8)
    A_expected = Aref.reshape(K, d) if diagonal else np.linalg.inv(Aref)
    np.testing.assert_allclose(A, A_expected, rtol=1e-8, atol=1e-10)
    assert cum_ref > 0 and (th_ref != 0).any()  # the run did update


@pytest.mark.parametrize("shape,density", [((7, 5), 0.3), ((1, 1), 1.0), ((4, 9), 0.0), ((30, 64), 0.1), ((5, 3), 1.0)])
def test_dense_to_csr_matches_scipy(rng, shape, density):
    from noisyfeedback.kernels.linear import count_row_nonzeros, dense_to_csr

    X = rng.normal(size=shape) * (rng.random(shape) < density)
    if shape[0] > 2:
        X[0] = 0.0  # an empty first row
        X[-1, -1] = 0.0  # the last row ends with a zero (the fill writes one slot past its last non-zero)
        X[1, 0] = -0.0  # a negative zero is a zero
    counts = np.empty(shape[0], np.int64)
    total = count_row_nonzeros(X, counts)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    indices = np.full(total + 1, -1, np.int64)
    data = np.full(total + 1, np.nan)
    dense_to_csr(X, indptr, indices, data)
    expected = sp.csr_matrix(X)
    assert total == expected.nnz
    np.testing.assert_array_equal(indptr, expected.indptr)
    np.testing.assert_array_equal(indices[:total], expected.indices)
    np.testing.assert_array_equal(data[:total], expected.data)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_dense_and_csr_rows_reach_the_kernels_with_one_signature(index_dtype):
    """A dense X's stand-ins for the CSR arrays have the dtypes of a validated CSR X's (int64 offsets,
    int32 columns, float64 values), whatever integer types SciPy gave the CSR: the kernels compile once
    for both. The CSR's rows are unchanged."""
    X = np.random.default_rng(0).normal(size=(6, 4)) * (np.arange(24).reshape(6, 4) % 3 > 0)
    M = sp.csr_matrix(X)
    M.indptr, M.indices = M.indptr.astype(index_dtype), M.indices.astype(index_dtype)
    dense, csr = kernel_view(check_X(X)), kernel_view(check_X(M))
    assert [a.dtype for a in dense[1:4]] == [a.dtype for a in csr[1:4]] == [np.int64, np.int32, np.float64]
    assert dense[0].dtype == csr[0].dtype and dense[0].ndim == csr[0].ndim
    assert np.array_equal(check_X(M).toarray(), X)
