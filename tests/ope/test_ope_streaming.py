"""Logs read in chunks: evaluate_log (and nf.ope.evaluate on a path) gives the in-memory estimates and
intervals to float tolerance, whatever the chunk size; fit_logged on a stream gives the same model bits."""

import numpy as np
import pytest

pytest.importorskip("pyarrow")

import noisyfeedback as nf  # noqa: E402
import noisyfeedback.ope.estimators as E  # noqa: E402
from noisyfeedback.datasets import stream_log, write_log  # noqa: E402
from noisyfeedback.ope import evaluate_log, stream_folds  # noqa: E402

N, D, K = 3000, 3, 4


def _log(tmp_path, n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    a = rng.integers(0, K, n)
    p = np.full(n, 1 / K)
    r = (rng.random(n) < 0.2 + 0.1 * a + 0.2 * (X[:, 0] > 0)).astype(float)
    return write_log(tmp_path / "log.parquet", X, a, r, p), (X, a, r, p)


def _policy(Z):
    s = np.exp(np.asarray(Z) @ (np.arange(D * K).reshape(D, K) / 10.0))
    return s / s.sum(axis=1, keepdims=True)


class _StreamFolds:
    """make_rng stand-in for the in-memory estimator: its fold permutation replaced by the streamed folds."""

    def __init__(self, seed):
        self.seed = seed

    def permutation(self, n):
        return stream_folds(self.seed, 0, n)


@pytest.mark.parametrize("interval", ["normal", "bernstein"])
def test_streamed_estimates_and_intervals_are_the_in_memory_ones(tmp_path, monkeypatch, interval):
    path, (X, a, r, p) = _log(tmp_path)
    got = evaluate_log(_policy, path, ("ips", "snips", "dm", "dr"), interval=interval, seed=3, chunk_rows=251)
    monkeypatch.setattr(E, "make_rng", _StreamFolds)  # the same cross-fitting folds in memory
    for e in ("ips", "snips", "dm", "dr"):
        want = E.evaluate(_policy(X), X, a, r, p, e, interval=interval, seed=3)
        g = got[e]
        assert g.n == N and g.interval == ("none" if e == "dm" else interval)
        np.testing.assert_allclose(g.value, want.value, rtol=1e-12)
        if e in ("snips", "dm") and interval == "bernstein":  # a documented wider range bound
            assert g.lower <= want.lower and g.upper >= want.upper
            continue
        np.testing.assert_allclose([g.lower, g.upper], [want.lower, want.upper], rtol=1e-11)
    assert got["dm"].interval == "none" and got["dm"].lower == got["dm"].upper == got["dm"].value


def test_noise_corrected_and_fixed_model_estimates_match(tmp_path):
    path, (X, a, r, p) = _log(tmp_path)
    Q = np.full((N, K), 0.4)

    class Model:
        def predict(self, Z):
            return np.full((len(Z), K), 0.4)

    got = evaluate_log(_policy, path, ("snips", "dr", "dm"), rho0=0.1, rho1=[0.1, 0.0, 0.2, 0.05],
                       reward_model=Model(), chunk_rows=1000)
    for e in ("snips", "dr", "dm"):
        want = E.evaluate(_policy(X), X, a, r, p, e, rho0=0.1, rho1=[0.1, 0.0, 0.2, 0.05], interval="normal",
                          reward_model=Q)
        np.testing.assert_allclose([got[e].value, got[e].lower, got[e].upper], [want.value, want.lower, want.upper],
                                   rtol=1e-12)
        assert got[e].rho1 == (0.1, 0.0, 0.2, 0.05)


def test_chunk_size_and_file_split_do_not_change_the_estimate(tmp_path):
    path, (X, a, r, p) = _log(tmp_path)
    one = evaluate_log(_policy, path, ("ips", "snips", "dr"), chunk_rows=N)
    (tmp_path / "parts").mkdir()
    for k, (lo, hi) in enumerate([(0, 1000), (1000, 1700), (1700, N)]):
        write_log(tmp_path / "parts" / f"p{k}.parquet", X[lo:hi], a[lo:hi], r[lo:hi], p[lo:hi])
    for source, rows in ((path, 7), (path, 640), (tmp_path / "parts", 300)):
        other = evaluate_log(_policy, source, ("ips", "snips", "dr"), chunk_rows=rows)
        for e in (("ips", "snips") if source != path else one):  # other files, other cross-fitting folds
            np.testing.assert_allclose([other[e].value, other[e].lower, other[e].upper],
                                       [one[e].value, one[e].lower, one[e].upper], rtol=1e-13)


def test_compacted_sums_keep_the_exact_sum():
    """A long list of per-chunk sums is replaced by Shewchuk's partials: fsum of the partials plus what
    comes later is fsum of everything, bit for bit, for floats of very different magnitudes and for arrays."""
    import math

    from noisyfeedback.ope.streaming import _compact, _expansion

    rng = np.random.default_rng(0)
    for _ in range(100):
        n = int(rng.integers(2, 200))
        v = (rng.standard_normal(n) * 10.0 ** rng.integers(-20, 20, size=n)).tolist()
        assert math.fsum(_expansion(v[: n // 2]) + v[n // 2:]) == math.fsum(v)
        assert math.fsum(_compact(v[: n // 2]) + v[n // 2:]) == math.fsum(v)
    parts = [rng.standard_normal((3, 2)) * 10.0 ** rng.integers(-12, 12) for _ in range(100)]
    compact = _compact(parts)
    assert len(compact) < 20 and all(c.shape == (3, 2) for c in compact)
    flat, cflat = np.stack(parts).reshape(100, 6), np.stack(compact).reshape(len(compact), 6)
    assert [math.fsum(flat[:, j]) for j in range(6)] == [math.fsum(cflat[:, j]) for j in range(6)]
    # a non-finite part is kept as it is (fsum's inf or nan)
    assert _compact([1.0, math.inf, 2.0]) == [1.0, math.inf, 2.0]
    # and so are parts whose partials would leave the float range (the sums then fail or not as before)
    big = [1.7e308, 1.7e308, -1.7e308]
    assert _compact(big) == big


def test_many_chunks_keep_bounded_sums_and_the_same_estimates(tmp_path, monkeypatch):
    """500 chunks: the per-chunk sums never hold more than COMPACT_AT parts, and the estimates are those of
    a run that keeps every chunk's sums (bit for bit)."""
    import noisyfeedback.ope.streaming as S

    path, _ = _log(tmp_path)
    seen = []
    acc, add = S._acc, S.StreamSums.add

    def acc_spy(stats, key, vals):
        acc(stats, key, vals)
        seen.append(max(len(v) for v in stats[key].values()))

    def add_spy(self, name, values):
        add(self, name, values)
        seen.append(len(self.parts[name]))

    monkeypatch.setattr(S, "_acc", acc_spy)
    monkeypatch.setattr(S.StreamSums, "add", add_spy)
    got = evaluate_log(_policy, path, ("ips", "snips", "dr"), chunk_rows=6, seed=1)
    assert max(seen) == S.COMPACT_AT and len(seen) > 500  # (500 parts a sum without compacting)
    monkeypatch.setattr(S, "COMPACT_AT", 10**9)
    kept = evaluate_log(_policy, path, ("ips", "snips", "dr"), chunk_rows=6, seed=1)
    for e in ("ips", "snips", "dr"):
        assert (got[e].value, got[e].lower, got[e].upper) == (kept[e].value, kept[e].lower, kept[e].upper)


def test_nf_ope_evaluate_takes_a_log_path(tmp_path):
    path, (X, a, r, p) = _log(tmp_path)
    learner = nf.SquareCB(K, seed=0).fit_logged(X, a, r, p)
    est = nf.ope.evaluate(learner, path, estimator="dr", seed=1)
    assert est.interval == "normal" and est.n == N and est.lower < est.value < est.upper
    in_mem = nf.ope.evaluate(learner, X, a, r, p, "ips", interval="normal")
    assert nf.ope.evaluate(learner, path, estimator="ips").value == pytest.approx(in_mem.value, rel=1e-12)
    log = nf.datasets.read_log(path)
    assert nf.ope.evaluate(learner, log, estimator="ips").value == pytest.approx(in_mem.value, rel=1e-12)


def test_refusals(tmp_path):
    path, _ = _log(tmp_path, n=50)
    with pytest.raises(ValueError, match="bootstrap needs the rows in memory"):
        evaluate_log(_policy, path, "ips", interval="bootstrap")
    with pytest.raises(ValueError, match="reads the log twice"):
        evaluate_log(_policy, stream_log(path), "dr")
    with pytest.raises(ValueError, match="'ridge' reward model only"):
        evaluate_log(_policy, path, "dm", reward_model="logistic")
    with pytest.raises(ValueError, match="'estimators' parameter"):
        evaluate_log(_policy, path, "ipw")
    bad = write_log(tmp_path / "bad.parquet", np.ones((3, D)), [0, 1, 9], [1, 0, 1], [0.5] * 3)
    with pytest.raises(ValueError, match=r"rows 0..2 of the log: actions must be in 0..3; row 2"):
        evaluate_log(_policy, bad, "ips")
    with pytest.raises(TypeError, match="unexpected keyword"):
        nf.ope.evaluate(np.full((3, K), 0.25), np.ones((3, D)), [0, 1, 2], [1, 0, 1], [0.5] * 3, chunk_rows=2)


@pytest.mark.parametrize("params", [{"oracle": "ridge", "features": "quadratic"}, {"oracle": "adagrad"}, {}])
def test_fit_logged_on_a_stream_is_the_same_model(tmp_path, params):
    path, (X, a, r, p) = _log(tmp_path, n=1200)
    whole = nf.SquareCB(K, seed=0, **params).fit_logged(X, a, r, p)
    streamed = nf.SquareCB(K, seed=0, **params).fit_logged(stream_log(path, chunk_rows=97))
    for name in ("W_", "intercept_", "ridge_inverse_", "sum_sq_grad_"):
        np.testing.assert_array_equal(getattr(streamed, name), getattr(whole, name))
    assert streamed.features_ == whole.features_
    again = nf.SquareCB(K, seed=0, **params).fit_logged(nf.datasets.read_log(path))  # a BanditLog
    np.testing.assert_array_equal(again.W_, whole.W_)


_LEAN = r"""
import sys
import noisyfeedback as nf
from noisyfeedback.datasets import stream_log
path = sys.argv[1]
policy = nf.SquareCB(4, seed=0).fit_logged(stream_log(path))
res = nf.ope.evaluate_log(policy, path, ("ips", "snips", "dr"), seed=0)
heavy = sorted(m for m in ("pandas", "scipy.stats", "pyarrow.dataset") if m in sys.modules)
print(heavy, res["dr"].lower < res["dr"].upper)
"""


def test_the_parquet_path_imports_neither_pandas_nor_scipy_stats(tmp_path):
    """Learning from and evaluating a Parquet log reads it with pyarrow.parquet and takes the normal
    quantile from scipy.special: pyarrow.dataset (it imports pandas) and scipy.stats cost about 50 and
    44 MB of the memory that a log of any size is read in."""
    import subprocess
    import sys

    path, _ = _log(tmp_path)
    out = subprocess.run([sys.executable, "-c", _LEAN, str(path)], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[0] == "[] True", out.stdout + out.stderr


def test_a_chunk_is_scored_in_blocks_of_rows_with_the_same_probabilities(tmp_path, monkeypatch):
    """The policy sees a chunk's rows a block at a time (a learner's feature map of a block, not of the
    chunk): the same estimates; a bad row is named by its place in the chunk."""
    from noisyfeedback.ope import streaming

    path, _ = _log(tmp_path)
    whole = evaluate_log(_policy, path, ("ips", "dr"), seed=0)
    monkeypatch.setattr(streaming, "POLICY_BLOCK_ROWS", 64)
    blocks = evaluate_log(_policy, path, ("ips", "dr"), seed=0)
    assert all(blocks[k].value == whole[k].value and blocks[k].upper == whole[k].upper for k in whole)

    def bad_from_row_200(Z):
        P = _policy(Z)
        bad_from_row_200.seen += Z.shape[0]
        if bad_from_row_200.seen > 200:
            P[200 - (bad_from_row_200.seen - Z.shape[0]):] *= 2
        return P
    bad_from_row_200.seen = 0
    with pytest.raises(ValueError, match=r"rows 0\.\.2999 of the log: .*row 200 is"):
        evaluate_log(bad_from_row_200, path, "ips", chunk_rows=N)


def test_a_parquet_file_without_a_column_of_the_first_is_named(tmp_path):
    first, _ = _log(tmp_path)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"action": [0, 1], "reward": [1.0, 0.0], "propensity": [0.25, 0.25], "x0": [1.0, 2.0]}),
                   tmp_path / "second.parquet")
    with pytest.raises(ValueError, match=r"second\.parquet: no column named 'x1'"):
        list(stream_log([first, tmp_path / "second.parquet"]))
