"""Hostile and careless input: model files that try to run code, malformed sparse matrices,
parameters changed after fitting, damaged results stores and data files, sizes that cannot fit."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from reference import csr_first_bad_row as ref_csr_first_bad_row
from reference import csr_is_canonical as ref_csr_is_canonical

import noisyfeedback as nf
from noisyfeedback._validation import check_X

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# ------------------------------------------------------------------ model files
def write_npz(path, meta, arrays=None):
    payload = {f"arr__{k}": v for k, v in (arrays or {}).items()}
    payload["__metadata__"] = np.array(json.dumps(meta))
    np.savez(path, **payload)
    return path


def fitted_banditron(d=4, K=3):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, d))
    y = rng.integers(0, K, 50)
    learner = nf.Banditron(K, gamma=0.2, seed=0)
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0, 0), n_rounds=50, seed=0)
    return learner, X


def saved_meta(tmp_path):
    learner, X = fitted_banditron()
    path = learner.save(tmp_path / "ok.npz")
    with np.load(path) as data:
        meta = json.loads(str(data["__metadata__"]))
        arrays = {k[5:]: data[k] for k in data.files if k.startswith("arr__")}
    return learner, X, meta, arrays


def test_the_run_experiment_exploit_runs_nothing_and_writes_nothing(tmp_path, monkeypatch):
    from noisyfeedback.lab import runner

    calls = []
    monkeypatch.setattr(runner, "run_experiment", lambda *a, **k: calls.append((a, k)))
    out = tmp_path / "sweep"
    for name in ("noisyfeedback.lab.runner.run_experiment", "noisyfeedback.lab.runner",
                 "run_experiment", "noisyfeedback.base.load", "os.system"):
        path = write_npz(tmp_path / "evil.npz", {
            "format_version": 1, "class": name,
            "params": {"config": {"datasets": ["synsep"]}, "out": str(out)},
            "scalars": {}, "rng_state": None})
        with pytest.raises(ValueError, match="not a registered learner") as e:
            nf.load(path)
        assert str(path) in str(e.value)
    assert calls == [] and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.npz"]


def test_scalars_cannot_set_private_attributes(tmp_path):
    learner, X, meta, arrays = saved_meta(tmp_path)
    for evil in ({"_rule": 2}, {"__class__": "x"}, {"gamma": 7}, {"W_": 1.0}, {"predict": 0}):
        meta2 = dict(meta, scalars=evil)
        with pytest.raises(ValueError, match="no learned attribute|must be an array"):
            nf.load(write_npz(tmp_path / "m.npz", meta2, arrays))


def test_parameters_are_validated_and_unknown_keys_refused(tmp_path):
    learner, X, meta, arrays = saved_meta(tmp_path)
    cases = [
        (dict(meta, params=dict(meta["params"], gamma=7)), "'gamma' parameter of Banditron"),
        (dict(meta, params=dict(meta["params"], n_classes="3")), "'n_classes' parameter"),
        (dict(meta, params=dict(meta["params"], _rule=2)), "unknown parameters"),
        (dict(meta, params=dict(meta["params"], seed={"__ndarray__": [1], "dtype": "O"})), "dtype"),
        (dict(meta, extra=1), "unknown metadata keys"),
        (dict(meta, format_version=2), "format_version"),
        (dict(meta, format_version="1"), "format_version"),
        (dict(meta, rng_state={"bit_generator": "seed", "state": {}}), "PCG64"),
        (dict(meta, rng_state=dict(meta["rng_state"], state={"state": "x", "inc": 1})), "rng_state"),
    ]
    for bad, match in cases:
        with pytest.raises(ValueError, match=match):
            nf.load(write_npz(tmp_path / "m.npz", bad, arrays))


def test_learned_arrays_are_checked_against_the_parameters(tmp_path):
    learner, X, meta, arrays = saved_meta(tmp_path)
    W = arrays["W_"]
    cases = [
        ({"W_": np.zeros((5, 4))}, "n_classes"),  # K rows must be n_classes = 3
        ({"W_": np.zeros((3, 4, 1))}, "2-D"),
        ({"W_": W.astype(np.float32)}, "dtype float64"),
        ({"W_": np.full((3, 4), np.nan)}, "NaN"),
        ({"W_": W, "theta_": W}, "no learned attribute"),
        ({"W_": W, "_rule": np.array(2)}, "no learned attribute"),
        ({"W_": np.array(["a", "b", "c"])}, "dtype"),
    ]
    for bad, match in cases:
        with pytest.raises(ValueError, match=match):
            nf.load(write_npz(tmp_path / "m.npz", meta, bad))
    # an RCINE buffer of actions outside 0..K-1 is refused too
    X2, y2 = nf.datasets.synsep(n_samples=300, seed=0)
    r = nf.RCINE(9, n_s=20, seed=0)
    nf.simulate(r, X2, y2, nf.feedback.NoisyBandit(0.1, 0.1), n_rounds=300, seed=0)
    p = r.save(tmp_path / "r.npz")
    with np.load(p) as data:
        meta_r = json.loads(str(data["__metadata__"]))
        arr_r = {k[5:]: data[k] for k in data.files if k.startswith("arr__")}
    arr_r["buffer_actions_"] = arr_r["buffer_actions_"] + 100
    with pytest.raises(ValueError, match=r"buffer_actions_ must hold values in \[0, 9\)"):
        nf.load(write_npz(tmp_path / "r2.npz", meta_r, arr_r))


def test_damaged_files_raise_one_value_error_naming_the_file(tmp_path):
    learner, X = fitted_banditron()
    good = learner.save(tmp_path / "good.npz").read_bytes()
    cases = {
        "truncated.npz": good[: len(good) // 2],
        "text.npz": b"hello, not a model\n",
        "empty.npz": b"",
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
    np.save(tmp_path / "bare.npy", np.zeros(3))
    np.savez(tmp_path / "nometa.npz", arr__W_=np.zeros((3, 4)))
    np.savez(tmp_path / "notjson.npz", __metadata__=np.array("{not json"))
    np.savez(tmp_path / "listmeta.npz", __metadata__=np.array("[1, 2]"))
    for name in [*cases, "bare.npy", "nometa.npz", "notjson.npz", "listmeta.npz"]:
        path = tmp_path / name
        with pytest.raises(ValueError) as e:
            nf.load(path)
        msg = str(e.value)
        assert str(path) in msg and "pickled" not in msg, msg


def test_a_learner_without_declared_state_cannot_be_saved(tmp_path):
    learner, X = fitted_banditron()
    learner.extra_ = np.zeros(3)  # an attribute the class does not declare
    with pytest.raises(TypeError, match="_learned_state"):
        learner.save(tmp_path / "m.npz")


@FAST
@given(data=st.data())
def test_fuzzed_model_files_load_validly_or_raise_value_error(tmp_path, data):
    learner, X, meta, arrays = saved_meta(tmp_path)
    json_value = st.recursive(
        st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats() | st.text(max_size=8),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3), max_leaves=6)
    meta = json.loads(json.dumps(meta))
    what = data.draw(st.sampled_from(["param", "scalar", "meta", "array", "class", "bytes"]))
    if what == "param":
        meta["params"][data.draw(st.sampled_from(["n_classes", "gamma", "seed", "other"]))] = data.draw(json_value)
    elif what == "scalar":
        meta["scalars"][data.draw(st.text(max_size=6))] = data.draw(json_value)
    elif what == "meta":
        meta[data.draw(st.sampled_from(list(meta) + ["x"]))] = data.draw(json_value)
    elif what == "class":
        meta["class"] = data.draw(st.sampled_from(
            ["noisyfeedback.simulate.simulate", "noisyfeedback.learners.bandit.rcnbf.RCNBF", "SOBA", "UMA",
             "noisyfeedback.registry._import"]) | st.text(max_size=20))
    elif what == "array":
        shape = tuple(data.draw(st.lists(st.integers(0, 6), min_size=0, max_size=3)))
        dtype = data.draw(st.sampled_from([np.float64, np.float32, np.int64, np.bool_, "U3"]))
        arrays = dict(arrays, **{data.draw(st.sampled_from(["W_", "A_", "x_"])): np.zeros(shape, dtype)})
    path = write_npz(tmp_path / "f.npz", meta, arrays)
    if what == "bytes":
        raw = bytearray(path.read_bytes())
        for _ in range(data.draw(st.integers(1, 8))):
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
        raw = raw[: data.draw(st.integers(0, len(raw)))]
        path.write_bytes(bytes(raw))
    try:
        loaded = nf.load(path)
    except ValueError as e:
        assert str(path) in str(e)
        return
    # what loads is a registered learner in a usable, consistent state
    assert type(loaded).__name__ in nf.registry.LEARNERS
    if hasattr(loaded, "W_"):
        assert loaded.W_.shape[0] == loaded.n_classes and np.isfinite(loaded.W_).all()
        if loaded.W_.shape[1] == X.shape[1]:
            loaded.predict(X)


# ------------------------------------------------------------------ malformed CSR
def bad_index_csr():
    """scipy accepts it: row 1 holds column 7 of a 3-column matrix."""
    return sp.csr_matrix((np.ones(3), np.array([0, 7, 1]), np.array([0, 1, 3])), shape=(2, 3))


def bad_indptr_csr():
    """scipy accepts it: indptr decreases at row 1."""
    return sp.csr_matrix((np.ones(3), np.array([0, 1, 2]), np.array([0, 2, 1, 3])), shape=(3, 3))


def test_malformed_csr_is_refused_naming_the_row_in_every_entry_point():
    rng = np.random.default_rng(0)
    y = np.array([0, 1, 2])
    ch = nf.feedback.NoisyBandit(0, 0)
    for make_bad, row in ((bad_index_csr, 1), (bad_indptr_csr, 1)):
        X = make_bad()
        n, d = X.shape
        yy = y[:n]
        fitted, _ = fitted_banditron(d=d, K=3)
        calls = {
            "simulate": lambda: nf.simulate(nf.Banditron(3, seed=0), X, yy, ch, n_rounds=5, seed=0),
            "act": lambda: fitted.act(X),
            "learn": lambda: fitted.learn(X, np.zeros(n, int), np.zeros(n, int), np.ones(n)),
            "predict": lambda: fitted.predict(X),
            "decision_function": lambda: fitted.decision_function(X),
            "partial_fit": lambda: nf.Perceptron(3).partial_fit(X, yy),
            "fit UMA": lambda: nf.UMA(max_iter=3).fit(X, yy),
            "partial_fit UMA": lambda: nf.UMA(max_iter=3).partial_fit(X, yy, classes=[0, 1, 2]),
            "fit LinearSVM": lambda: nf.LinearSVM().fit(X, np.array([-1, 1, 1])[:n]),
            "regressor learn": lambda: nf.NLMS(1.0).learn(X, rng.normal(size=n)),
            "regressor predict": lambda: nf.NLMS(1.0).fit(np.ones((2, d)), np.ones(2)).predict(X),
            "set learner": lambda: nf.MCSLP(3, m=1).partial_fit(X, yy),
        }
        for call in calls.values():
            with pytest.raises(ValueError, match=f"malformed CSR matrix: row {row} is invalid"):
                call()


def test_malformed_csc_and_coo_are_refused():
    X = bad_index_csr()
    csc = sp.csc_matrix((np.ones(2), np.array([0, 9]), np.array([0, 1, 2, 2])), shape=(2, 3))
    with pytest.raises(ValueError, match="malformed CSC matrix: column 1"):
        check_X(csc)
    coo = sp.coo_matrix((np.ones(1), (np.array([0]), np.array([0]))), shape=(2, 3))
    coo.col[0] = 5
    with pytest.raises(ValueError, match="malformed COO matrix"):
        check_X(coo)
    short = sp.csr_matrix((2, 3))
    short.indptr = np.array([0, 0])
    with pytest.raises(ValueError, match="indptr has 2 entries"):
        check_X(short)
    assert X.shape == (2, 3)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(0, 5), d=st.integers(1, 5), data=st.data())
def test_fuzzed_csr_structures_are_refused_or_sound(n, d, data):
    nnz = data.draw(st.integers(0, 8))
    indices = np.array(data.draw(st.lists(st.integers(-2, d + 2), min_size=nnz, max_size=nnz)), dtype=np.int64)
    inner = sorted(data.draw(st.lists(st.integers(0, nnz), min_size=max(n - 1, 0), max_size=max(n - 1, 0))))
    if data.draw(st.booleans()) and inner:
        inner = data.draw(st.permutations(inner))
    indptr = np.array([0, *inner, nnz][: n + 1] if n else [0], dtype=np.int64)
    X = sp.csr_matrix((n, d))
    X.data, X.indices, X.indptr = np.arange(1.0, nnz + 1), indices, indptr
    if n == 0:
        X.indptr = np.array([0], dtype=np.int64)
        X.data, X.indices = np.zeros(0), np.zeros(0, np.int64)
    from noisyfeedback.kernels.validation import csr_first_bad_row

    expected = ref_csr_first_bad_row(X.indptr, X.indices, d)
    assert tuple(csr_first_bad_row(X.indptr, X.indices, d)) == expected
    if X.indptr[-1] != X.indices.shape[0] and expected[0] < 0:
        expected = (n, 1)  # trailing storage: scipy reads only indptr[-1] entries; still sound
    try:
        out = check_X(X)
    except ValueError as e:
        assert expected[0] >= 0 or "malformed" in str(e)
        if expected[0] >= 0:
            assert f"row {expected[0]} is invalid" in str(e)
        return
    assert expected[0] < 0 or expected == (n, 1)
    from noisyfeedback.kernels.validation import csr_is_canonical

    assert csr_is_canonical(X.indptr, X.indices) == ref_csr_is_canonical(X.indptr, X.indices)
    assert csr_is_canonical(out.indptr, out.indices)  # sorted, no duplicates: ≤ d entries a row
    assert np.diff(out.indptr).max(initial=0) <= d
    np.testing.assert_array_equal(out.toarray(), X.toarray())  # duplicates summed, as scipy reads them
    W = nf.Perceptron(3).partial_fit(out, np.zeros(n, int)).W_
    assert W.shape == (3, d) and np.isfinite(W).all()


def test_csr_with_duplicate_columns_is_summed_not_overrun():
    # d = 1 and eight entries in column 0: before the fix, fetch_row wrote 8 entries into a 1-long buffer
    # (heap corruption: "double free or corruption", SIGABRT)
    X = sp.csr_matrix((1, 1))
    X.data, X.indices, X.indptr = np.arange(1.0, 9.0), np.zeros(8, np.int64), np.array([0, 8], np.int64)
    X.has_canonical_format = True  # a stale flag must not be trusted
    out = check_X(X)
    assert out.nnz == 1 and out.data[0] == 36.0
    learner = nf.Perceptron(2).partial_fit(X, np.zeros(1, int))
    np.testing.assert_array_equal(learner.W_, nf.Perceptron(2).partial_fit(np.array([[36.0]]), np.zeros(1, int)).W_)


def test_zero_column_X_is_refused():
    for X in (np.zeros((4, 0)), sp.csr_matrix((4, 0))):
        with pytest.raises(ValueError, match="no features"):
            nf.Perceptron(3).partial_fit(X, np.zeros(4, int))
        with pytest.raises(ValueError, match="no features"):
            nf.simulate(nf.Banditron(3, seed=0), X, np.zeros(4, int), nf.feedback.NoisyBandit(0, 0), 4, seed=0)


# ------------------------------------------------------------------ parameters changed after fitting
def test_parameters_changed_after_fitting_are_checked_at_every_entry_point():
    learner, X = fitted_banditron()
    learner.gamma = 7
    for call in (lambda: learner.act(X), lambda: learner.predict(X), lambda: learner.decision_function(X),
                 lambda: learner.learn(X, np.zeros(len(X), int), np.zeros(len(X), int), np.ones(len(X))),
                 lambda: nf.simulate(learner, X, np.zeros(len(X), int), nf.feedback.NoisyBandit(0, 0), 5, seed=0)):
        with pytest.raises(ValueError, match="'gamma' parameter of Banditron must be in \\(0, 1\\)"):
            call()
    r = nf.RCNBF(3, rho0=0.2, rho1=0.2, seed=0)
    r.act(X)
    r.rho1 = 0.9
    with pytest.raises(ValueError, match="rho0 \\+ rho1 < 1"):
        r.learn(X, np.zeros(len(X), int), np.zeros(len(X), int), np.ones(len(X)))
    reg = nf.NLMS(1.0).learn(X, np.zeros(len(X)))
    reg.r = -1.0
    with pytest.raises(ValueError, match="'r' parameter of NLMS"):
        reg.predict(X)
    u = nf.UMA(max_iter=3).fit(X, np.arange(len(X)) % 3)
    u.theta = -1.0
    with pytest.raises(ValueError, match="'theta' parameter of UMA"):
        u.predict(X)
    s = nf.LinearSVM().fit(X, np.where(np.arange(len(X)) % 2, 1, -1))
    s.lam = -1.0
    with pytest.raises(ValueError, match="'lam' parameter of LinearSVM"):
        s.decision_function(X)


# ------------------------------------------------------------------ results store
def tiny_config(**over):
    cfg = {"name": "tiny", "n_rounds": 300, "checkpoints": 3, "seeds": [0, 1],
           "datasets": [{"name": "synsep", "n_samples": 100}],
           "channels": [{"name": "NoisyBandit", "params": {"rho0": 0.1, "rho1": 0.1}}],
           "learners": [{"name": "Banditron", "params": {"gamma": 0.1}}]}
    cfg.update(over)
    return cfg


def test_store_checks_task_files_moves_bad_ones_aside_and_reruns_them(tmp_path):
    from noisyfeedback.lab import read_results, run_experiment

    out = tmp_path / "out"
    whole = read_results(run_experiment(tiny_config(), out, progress=False))
    a, b = sorted(whole["task_id"])
    tasks = out / "tasks"
    good_b = (tasks / f"{b}.parquet").read_bytes()
    (tasks / f"{a}.parquet").write_bytes(good_b)  # b's result copied under a's name
    (tasks / f"{b}.parquet").write_bytes(good_b[:100])  # truncated
    with pytest.warns(RuntimeWarning) as record:
        again = read_results(run_experiment(tiny_config(), out, progress=False))
    msgs = " ".join(str(w.message) for w in record)
    assert f"{a}.parquet" in msgs and f"holds task {b}" in msgs and "unreadable" in msgs
    rejected = sorted(p.name for p in (tasks / "rejected").iterdir())
    assert len(rejected) == 2 and rejected[0].startswith(a) and rejected[1].startswith(b)  # kept, not deleted
    cols = ["task_id", "error_rate"]
    pd_equal = (again[cols].sort_values("task_id").values == whole[cols].sort_values("task_id").values)
    assert pd_equal.all()


def test_store_lock_refuses_a_concurrent_run_and_kill_releases_it(tmp_path):
    import subprocess
    import sys

    from noisyfeedback.lab import run_experiment
    from noisyfeedback.lab.store import StoreError, open_results

    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c",
                               "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT);"
                               "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, str(os.getpid()).encode());"
                               "print('locked', flush=True); time.sleep(60)", str(out / ".lock")],
                              stdout=subprocess.PIPE) if out.mkdir() is None else None
    try:
        assert holder.stdout.readline().strip() == b"locked"
        with pytest.raises(StoreError, match=f"another run \\(pid {holder.pid}\\) is writing to"):
            run_experiment(tiny_config(), out, progress=False)
        assert not (out / "tasks").exists()
    finally:
        holder.kill()
        holder.wait()
    with open_results(out, "abc") as store:  # the dead holder's lock is gone
        with pytest.raises(StoreError, match="another run"):
            open_results(out, "abc")
    open_results(out, "abc").release()
    with pytest.raises(StoreError, match="different config.*To start fresh"):
        open_results(out, "def")
    assert store.config_hash == "abc"


@settings(max_examples=25, deadline=None)
@given(cfg=st.fixed_dictionaries({}, optional={
    "n_rounds": st.one_of(st.integers(-5, 10**6), st.integers(10**13, 10**20), st.floats(), st.text(max_size=4)),
    "checkpoints": st.one_of(st.integers(-3, 10**12), st.none()),
    "seeds": st.lists(st.integers(-3, 2**70), max_size=3),
    "datasets": st.lists(st.fixed_dictionaries({"name": st.sampled_from(["synsep", "nosuch", ""])},
                                               optional={"n_samples": st.integers(-1, 10**13)}), max_size=2),
    "learners": st.lists(st.fixed_dictionaries({"name": st.sampled_from(["Banditron", "os.system", "RCNBF"])},
                                               optional={"params": st.dictionaries(
                                                   st.sampled_from(["gamma", "_rule", "n_classes"]),
                                                   st.one_of(st.floats(), st.integers(-2, 10**9)), max_size=2)}),
                         max_size=2),
    "junk": st.integers()}))
@example(cfg={"n_rounds": 10**15})
def test_fuzzed_configs_validate_or_raise_config_error(cfg):
    from noisyfeedback.lab import validate_config
    from noisyfeedback.lab.config import ConfigError

    full = tiny_config(**cfg)
    full.pop("junk", None) if "junk" not in cfg else None
    try:
        plan = validate_config(full)
    except ConfigError as e:
        assert str(e) and "Traceback" not in str(e)
        return
    # what validates is runnable-sized: rounds and samples that fit
    assert 0 < plan.config.n_rounds <= 10**12


# ------------------------------------------------------------------ sizes that cannot fit
def test_sizes_that_cannot_fit_are_refused_before_allocating_saying_the_memory():
    from noisyfeedback.lab import validate_config
    from noisyfeedback.lab.config import ConfigError

    X, y = nf.datasets.synsep(n_samples=20, seed=0)
    cases = [
        lambda: nf.simulate(nf.Banditron(9, seed=0), X, y, nf.feedback.NoisyBandit(0, 0), n_rounds=10**15),
        lambda: nf.simulate(nf.NLMS(1.0), X, y.astype(float), nf.feedback.GaussianNoise(0.1), n_rounds=10**15),
        lambda: nf.Perceptron(10**9).partial_fit(X, y),
        lambda: nf.datasets.synsep(n_samples=10**10),
    ]
    for call in cases:
        with pytest.raises(ValueError, match=r"would need [\d.]+ [kMGTP]B of memory; this machine has"):
            call()
    with pytest.raises(ConfigError, match=r"n_rounds: .*would need .* of memory"):
        validate_config(tiny_config(n_rounds=10**15))


# ------------------------------------------------------------------ data files
def test_damaged_data_files_are_named_with_the_line(tmp_path):
    import bz2
    import gzip

    from noisyfeedback.datasets import loaders

    rng = np.random.default_rng(0)
    csv_text = "".join(f"{a:.6f},{b:.6f},{int(a > 0)}\n" for a, b in rng.normal(size=(3000, 2))).encode()
    svm_text = "".join(f"{int(a > 0)} 1:{a:.6f} 2:{b:.6f}\n" for a, b in rng.normal(size=(3000, 2))).encode()
    letter_text = "".join(f"{chr(65 + i % 26)}," + ",".join(str(v) for v in rng.integers(0, 16, 16)) + "\n"
                          for i in range(3000)).encode()
    cases = {  # file -> (content, loader, expected message)
        "empty.csv": (b"", loaders.load_csv, "holds no data"),
        "empty.svm": (b"\n", loaders.load_libsvm, "holds no data"),
        "empty.data": (b"", loaders.load_letter, "holds no data"),
        "cut.csv.gz": (gzip.compress(csv_text)[:2000], loaders.load_csv, r"line \d+: the file is truncated"),
        "cut.csv.bz2": (bz2.compress(csv_text)[:2000], loaders.load_csv, r"line \d+: the file is truncated"),
        "cut.svm.gz": (gzip.compress(svm_text)[:2000], loaders.load_libsvm, r"line \d+: the file is truncated"),
        "cut.svm.bz2": (bz2.compress(svm_text)[:2000], loaders.load_libsvm, r"line \d+: the file is truncated"),
        "cut.data.gz": (gzip.compress(letter_text)[:2000], loaders.load_letter, r"line \d+: the file is truncated"),
        "latin1.csv": ("a,b,label\n1,2,x\n3,4,caf\xe9\n".encode("latin-1"), loaders.load_csv,
                       "line 3: the file is not UTF-8"),
        "latin1.data": (letter_text[:200] + "\xe9\n".encode("latin-1"), loaders.load_letter, "not UTF-8"),
        "latin1.svm": ("1 1:2\n\xe9 1:3\n".encode("latin-1"), loaders.load_libsvm, "line 2: the file is not UTF-8"),
    }
    for name, (content, load, match) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(ValueError, match=match) as e:
            load(path)
        assert name in str(e.value), str(e.value)


def test_mnist_labels_outside_0_to_9_are_refused(tmp_path):
    import gzip

    def write_idx(path, arr):
        header = bytes([0, 0, 8, arr.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in arr.shape)
        path.write_bytes(gzip.compress(header + arr.astype(np.uint8).tobytes()))

    root = tmp_path / "mnist"
    root.mkdir()
    for prefix in ("train", "t10k"):
        write_idx(root / f"{prefix}-images-idx3-ubyte.gz", np.zeros((3, 2, 2)))
        write_idx(root / f"{prefix}-labels-idx1-ubyte.gz", np.array([1, 12, 3]))
    with pytest.raises(ValueError, match=r"train-labels-idx1-ubyte.gz: labels must be 0..9; label 1 is 12"):
        nf.datasets.load("mnist", data_dir=tmp_path)


# ------------------------------------------------------------------ CLI and scheduler
def test_cli_errors_are_one_line_without_traceback(tmp_path):
    import gzip
    import socket
    import time

    from typer.testing import CliRunner

    from noisyfeedback.cli import app

    rng = np.random.default_rng(0)
    text = "".join(f"{a:.6f},{b:.6f},{int(a > 0)}\n" for a, b in rng.normal(size=(3000, 2))).encode()
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(gzip.compress(text)[:2000])
    listener = socket.socket()  # accepts connections and never speaks: not a scheduler
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    silent = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    refused = f"tcp://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    cfg = tmp_path / "c.toml"
    cfg.write_text('n_rounds = 100\n[[datasets]]\nname = "synsep"\nn_samples = 50\n'
                   '[[channels]]\nname = "NoisyBandit"\n[[learners]]\nname = "Banditron"\n')
    runs = [
        (["simulate", "-l", "banditron", "--dataset", str(cut), "--rounds", "100"], "truncated"),
        (["simulate", "-l", "banditron", "--dataset", "synsep", "--n-samples", "10000000000"], "of memory"),
        (["simulate", "-l", "banditron", "--dataset", "synsep", "--n-samples", "100",
          "--rounds", "1000000000000000"], "of memory"),
        (["run", str(cfg), "--out", str(tmp_path / "o1"), "--scheduler", refused], "cannot reach"),
        (["run", str(cfg), "--out", str(tmp_path / "o2"), "--scheduler", silent], "Dask scheduler"),
    ]
    try:
        for args, words in runs:
            t0 = time.monotonic()
            result = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
            assert time.monotonic() - t0 < 20, args
            assert result.exit_code == 2, (args, result.output)
            out = result.output
            assert "Traceback" not in out and "Aborted" not in out and words in out, (args, out)
            errors = [line for line in out.splitlines() if line.startswith("Error")]
            assert len(errors) == 1, out
    finally:
        listener.close()
