"""train / predict / evaluate on other people's VW logs: VW's own test files accepted with VW's example
counts, costs as VW logs them (--reward), hostile input refused with one plain line, foreign model
records refused naming the model's files."""

import json
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import noisyfeedback as nf
from noisyfeedback.cli import app
from noisyfeedback.datasets import vw_stream

DATA = Path(__file__).parent / "data" / "vw"
runner = CliRunner()

#: examples VW reports for each file ("number of examples", vowpalwabbit 9.11.9: --cb_explore_adf for
#: cb_adf files, --cb_explore 4 for cb files, --ccb_explore_adf for ccb files)
VW_COUNTS = {
    "cb_adf_sm.data": 4, "cb_test.ldf": 3, "cb_test_medium.ldf": 15, "cb_test_non_binary_costs.ldf": 15,
    "cb_test_nonewline.ldf": 3, "cb_test_with_empty_shared_feature.ldf": 3, "cb_features_w_zero_vals.dat": 3,
    "cb_load.dat": 113, "cb_multi_cost.dat": 5, "cb_explore_cover.dat": 8,
    "ccb_test.dat": 24, "ccb_test_interactions.dat": 8, "ccb_zero_value_features.dat": 3, "ccb_reuse_small.data": 4,
}


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def _one_line_error(res):
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in res.output, res.output
    return lines[0]


@pytest.mark.parametrize("name", sorted(VW_COUNTS))
def test_vws_test_files_train_predict_evaluate(tmp_path, name):
    path, model = DATA / name, tmp_path / "m.npz"
    n_vw = VW_COUNTS[name]
    assert vw_stream.count_vw(path)[0] == n_vw
    res = invoke("train", "-d", path, "--model", model)
    assert res.exit_code == 0, res.output
    n_lab = vw_stream.count_vw(path)[1]
    assert f"on {n_lab} " in res.output and model.is_file()
    res = invoke("predict", "-d", path, "--model", model, "-p", tmp_path / "p.txt")
    assert res.exit_code == 0, res.output
    blocks = (tmp_path / "p.txt").read_text().split("\n\n")
    assert blocks[-1] == "" and len(blocks) - 1 == n_vw  # VW's -p: a line (a line a slot) and a blank line
    if name.startswith("ccb"):
        slots = vw_stream.stream_vw(path).__next__().slots[3][0]
        assert all(len(b.split("\n")) == slots for b in blocks[:-1])
    res = invoke("evaluate", "-d", path, "--model", model, "--json")
    assert res.exit_code == 0, res.output


def _zero_one_log(path, n, seed):
    """cb_adf, 4 actions described by one feature each; action 2 has cost 0 (good) 80% of the time, the
    others 30%; uniform logging, VW's classic 0-good/1-bad costs."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        a = int(rng.integers(4))
        good = rng.random() < (0.8 if a == 2 else 0.3)
        lines.append(f"shared |u x:{rng.random():.3f}")
        for j in range(4):
            lab = f"0:{0 if good else 1}:0.25 " if j == a else ""
            lines.append(f"{lab}|a id{j}")
        lines.append("")
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("reward", ["cost", "one-minus-cost"])
def test_a_learner_on_zero_good_one_bad_costs_lowers_the_cost(tmp_path, reward):
    _zero_one_log(tmp_path / "log.vw", 1500, 0)
    res = invoke("train", "-d", tmp_path / "log.vw", "--model", tmp_path / "m.npz", "--reward", reward)
    assert res.exit_code == 0, res.output
    res = invoke("predict", "-d", tmp_path / "log.vw", "--model", tmp_path / "m.npz", "-p", tmp_path / "p.txt",
                 "--greedy")
    assert res.exit_code == 0, res.output
    first = [int(b.split(":")[0]) for b in (tmp_path / "p.txt").read_text().split("\n\n") if b]
    assert np.mean(np.array(first) == 2) == 1.0  # the known best action: lowest expected cost
    est = json.loads(invoke("evaluate", "-d", tmp_path / "log.vw", "--model", tmp_path / "m.npz",
                            "--policy", "greedy", "--json").output)
    want = 0.8 if reward == "one-minus-cost" else -0.2  # reward 1 - cost, or -cost
    assert abs(est["snips"]["value"] - want) < 0.06


def test_reward_click_and_one_minus_cost_check_the_costs(tmp_path):
    (tmp_path / "c.vw").write_text("|a x\n0:0.5:0.5 |a y\n\n|a x\n0:1:0.5 |a y\n")
    line = _one_line_error(invoke("train", "-d", tmp_path / "c.vw", "--model", tmp_path / "m.npz",
                                  "--reward", "click"))
    assert "has cost 0.5;" in line and "one-minus-cost" in line and "np." not in line
    (tmp_path / "d.vw").write_text("|a x\n0:2:0.5 |a y\n")
    line = _one_line_error(invoke("train", "-d", tmp_path / "d.vw", "--model", tmp_path / "m.npz",
                                  "--reward", "one-minus-cost"))
    assert "has cost 2;" in line
    line = _one_line_error(invoke("train", "-d", tmp_path / "c.vw", "--model", tmp_path / "m.npz",
                                  "--reward", "clicks"))
    assert "--reward must be one of cost, click, one-minus-cost" in line
    line = _one_line_error(invoke("train", "-d", tmp_path / "c.vw", "--model", tmp_path / "m.npz", "--rho0", 0.1))
    assert "flip rates" in line


def test_labels_print_as_written(tmp_path):
    (tmp_path / "bad.vw").write_text("shared |u a\n|a x\n0:-1:1.5 |a y\n")
    line = _one_line_error(invoke("train", "-d", tmp_path / "bad.vw", "--model", tmp_path / "m.npz"))
    assert "bad.vw, line 3:" in line and "'0:-1:1.5'" in line  # no emoji, no markup


def test_hostile_files_end_fast_with_one_line(tmp_path, monkeypatch):
    f = tmp_path / "f.vw"
    f.write_bytes(b"1000000000:-1:0.5 | a b\n")
    assert f.stat().st_size == 24
    t = time.perf_counter()
    line = _one_line_error(invoke("train", "--data", f, "--model", tmp_path / "m.npz"))
    assert time.perf_counter() - t < 10 and "f.vw, line 1" in line and "beyond" in line
    assert not (tmp_path / "m.npz").exists()
    monkeypatch.setattr(vw_stream, "MAX_LINE_BYTES", 4096)  # the documented limit, lowered
    f.write_text("1:-1:0.5 |a " + "x" * 100_000 + "\n")
    line = _one_line_error(invoke("train", "--data", f, "--model", tmp_path / "m.npz"))
    assert "line 1: the line is longer than 4096 bytes" in line


def test_a_model_that_would_not_be_finite_is_not_written(tmp_path):
    (tmp_path / "big.vw").write_text("shared |u a:1e200\n|i x:1e200\n0:-1:0.5 |i y:1e200\n\n" * 3)
    line = _one_line_error(invoke("train", "-d", tmp_path / "big.vw", "--model", tmp_path / "m.npz"))
    assert "not finite" in line and not list(tmp_path.glob("m.npz*"))
    line = _one_line_error(invoke("train", "-d", DATA / "cb_test_medium.ldf", "--model", tmp_path / "m.npz",
                                  "--param", "learning_rate=1e308"))
    assert "not finite" in line and not list(tmp_path.glob("m.npz*"))


def test_model_naming_a_directory_is_refused(tmp_path):
    (tmp_path / "models").mkdir()
    line = _one_line_error(invoke("train", "-d", DATA / "cb_test.ldf", "--model", tmp_path / "models"))
    assert "is a directory" in line and not list(tmp_path.glob("models.npz*"))


def test_model_records_that_are_not_ours_are_refused_naming_the_model(tmp_path):
    model = tmp_path / "m.npz"
    assert invoke("train", "-d", DATA / "cb_test_medium.ldf", "--model", model).exit_code == 0
    record = tmp_path / "m.npz.json"
    good = json.loads(record.read_text())
    for bad, words in (([1, 2], "a JSON list"), ({**good, "format": "ccb"}, "format 'ccb' (1 slots) does not match"),
                       ({**good, "format": "cb", "n_actions": None}, "n_actions")):
        record.write_text(json.dumps(bad))
        for cmd in (("predict", "-p", tmp_path / "p.txt"), ("evaluate",)):
            line = _one_line_error(invoke(cmd[0], "-d", DATA / "cb_test.ldf", "--model", model, *cmd[1:]))
            assert "m.npz.json" in line and words in line and "cb_test.ldf" not in line
    record.write_text("not json")
    assert "m.npz.json" in _one_line_error(invoke("evaluate", "-d", DATA / "cb_test.ldf", "--model", model))
    record.write_text(json.dumps(good))
    X, y = nf.datasets.load("iris")
    nf.SquareCB(n_classes=2).fit_logged(X, y % 2, np.ones(len(y)), np.full(len(y), 0.5)).save(model)  # an index learner
    line = _one_line_error(invoke("predict", "-d", DATA / "cb_test.ldf", "--model", model, "-p", tmp_path / "p"))
    assert "m.npz: holds a SquareCB" in line


def test_evaluate_warns_on_small_logs_and_implausible_flip_rates(tmp_path):
    model = tmp_path / "m.npz"
    assert invoke("train", "-d", DATA / "cb_test_medium.ldf", "--model", model, "--reward", "one-minus-cost"
                  ).exit_code == 0
    res = invoke("evaluate", "-d", DATA / "cb_test_medium.ldf", "--model", model)
    assert res.exit_code == 0 and "Warning: only 10 labelled examples" in res.output, res.output
    res = invoke("evaluate", "-d", DATA / "cb_test_medium.ldf", "--model", model, "--rho0", 0.9)
    assert res.exit_code == 0 and "the corrected rewards are implausible" in res.output, res.output
    assert "outside the rewards' range" in res.output


def test_chunk_size_changes_no_bit_of_the_model(tmp_path):
    for rows in (3, 4096):
        res = invoke("train", "-d", DATA / "cb_load.dat", "--model", tmp_path / f"m{rows}.npz", "--passes", 2,
                     "--chunk-rows", rows)
        assert res.exit_code == 0, res.output
    a, b = nf.load(tmp_path / "m3.npz"), nf.load(tmp_path / "m4096.npz")
    assert a.weights_.any() and np.array_equal(a.weights_, b.weights_)
    assert np.array_equal(a.sum_sq_grad_, b.sum_sq_grad_)


def test_evaluate_scores_each_candidate_once_with_the_same_distributions(tmp_path):
    """evaluate scores each chunk once: greedy, the one-hot rows from the scores are the learner's own
    greedy choice (the first best candidate on ties); exploring, the distribution and the scores come
    from one pass, equal bit for bit to `action_probabilities` and `decision_function`."""
    from noisyfeedback.cli.vw import _distributions, _first_max

    _zero_one_log(tmp_path / "log.vw", 600, 0)
    assert invoke("train", "-d", tmp_path / "log.vw", "--model", tmp_path / "m.npz").exit_code == 0
    lrn = nf.load(tmp_path / "m.npz")
    rounds = next(vw_stream.stream_vw(tmp_path / "log.vw")).rounds
    q = lrn.decision_function(rounds)
    assert np.unique(q).shape[0] > 3
    np.testing.assert_array_equal(_first_max(q, rounds.offsets), _distributions(lrn, rounds, True))
    P, q1 = lrn.action_probabilities(rounds, return_scores=True)
    np.testing.assert_array_equal(q1, q)
    np.testing.assert_array_equal(P, lrn.action_probabilities(rounds))
    q = np.round(q * 4) / 4  # many ties
    P = _first_max(q, rounds.offsets)
    for i in range(rounds.n_rounds):
        seg = q[rounds.offsets[i]:rounds.offsets[i + 1]]
        assert P[rounds.offsets[i]:rounds.offsets[i + 1]].tolist() == [float(j == np.argmax(seg))
                                                                       for j in range(seg.shape[0])]


# ------------------------------------------------------------------ table logs (Parquet, CSV)
@pytest.fixture
def table_log(tmp_path):
    """Three Parquet files of a 4-action log (uniform logging) and an index learner's model."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(0)
    (tmp_path / "log").mkdir()
    for f in range(3):
        X = rng.normal(size=(300, 3))
        a = rng.integers(0, 4, 300)
        r = (rng.random(300) < 0.2 + 0.5 * (a == (X[:, 0] > 0))).astype(float)
        pq.write_table(pa.table({"x0": X[:, 0], "x1": X[:, 1], "x2": X[:, 2], "item": a, "click": r,
                                 "p": np.full(300, 0.25)}), tmp_path / "log" / f"part-{f}.parquet")
    cols = {"action": "item", "reward": "click", "propensity": "p"}
    learner = nf.SquareCB(4, seed=0).fit_logged(nf.datasets.read_log(tmp_path / "log" / "part-0.parquet", **cols))
    learner.save(tmp_path / "m.npz")
    return tmp_path / "log", tmp_path / "m.npz", cols, learner


@pytest.mark.parametrize("policy", ["explore", "greedy"])
def test_evaluate_on_a_table_log_prints_the_librarys_estimates(table_log, policy):
    from noisyfeedback.cli.table_logs import TABLE_ESTIMATORS, GreedyPolicy
    from noisyfeedback.ope import evaluate_log

    log, model, cols, learner = table_log
    res = invoke("evaluate", "--data", log, "--model", model, "--json", "--policy", policy,
                 *[x for role, name in cols.items() for x in ("--column", f"{role}={name}")])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)
    expected = evaluate_log(GreedyPolicy(learner) if policy == "greedy" else learner, log, TABLE_ESTIMATORS, **cols)
    assert list(printed) == list(TABLE_ESTIMATORS)
    for name, est in expected.items():
        assert printed[name]["value"] == est.value and printed[name]["interval"] == est.interval
    greedy = GreedyPolicy(learner).action_probabilities(np.eye(3))
    assert (greedy.sum(axis=1) == 1).all() and set(np.unique(greedy)) == {0.0, 1.0}


def test_table_log_refusals_name_what_is_wrong(table_log, tmp_path):
    log, model, cols, _ = table_log
    given = [x for role, name in cols.items() for x in ("--column", f"{role}={name}")]
    assert "no column named 'action'" in _one_line_error(invoke("evaluate", "--data", log, "--model", model))
    assert "ROLE=NAME" in _one_line_error(invoke("evaluate", "--data", log, "--model", model, "--column", "act=item"))
    assert "table log's rewards" in _one_line_error(invoke("evaluate", "--data", log, "--model", model, *given,
                                                           "--reward", "click"))
    vw_model = tmp_path / "vw.npz"
    assert invoke("train", "--data", DATA / "cb_test.ldf", "--model", vw_model).exit_code == 0
    line = _one_line_error(invoke("evaluate", "--data", log, "--model", vw_model, *given))
    assert str(vw_model) in line and "index learner's model" in line
    line = _one_line_error(invoke("evaluate", "--data", DATA / "cb_test.ldf", "--model", vw_model,
                                  "--scheduler", "tcp://127.0.0.1:1"))
    assert "table logs" in line
