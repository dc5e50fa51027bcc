"""``noisyfeedback train / predict / evaluate`` on VW cb and cb_adf files: a catalogue learner trained
on a uniform log ranks items it never saw (new ids, new feature vectors) close to the best policy,
with and without flipped clicks; predictions in VW's -p format; errors name the file and line."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from noisyfeedback.cli import app
from noisyfeedback.cli.vw import format_distribution, format_distributions
from noisyfeedback.datasets import ADFExample, CBLabel, write_vw_adf

runner = CliRunner()
D = 4
K = 8


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def _unit(rng, n):
    x = rng.normal(size=(n, D))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _world(seed):
    """A hidden preference map: P(click | user u, item v) = 0.5 + 0.4·uᵀMv (M orthogonal, so in [0.1, 0.9])."""
    rng = np.random.default_rng(seed)
    M, _ = np.linalg.qr(rng.normal(size=(D, D)))
    return M


def _examples(M, n_rounds, n_items, seed, labelled, rho0=0.0, rho1=0.0, id_offset=0):
    """Rounds of K candidates drawn from a catalogue of n_items (features + an id string); a uniform
    logging policy; its clicks flipped at (rho0, rho1). Returns (examples, true click probabilities)."""
    rng = np.random.default_rng(seed)
    items = _unit(rng, n_items)
    users = _unit(rng, n_rounds)
    exs, truth = [], []
    for i in range(n_rounds):
        cand = rng.choice(n_items, K, replace=False)
        p = 0.5 + 0.4 * (users[i] @ M @ items[cand].T)
        acts = [{"Action": {f"v{j}": float(items[c, j]) for j in range(D)}, "Item": {"id": f"i{id_offset + c}"}}
                for c in cand]
        label = None
        if labelled:
            a = int(rng.integers(K))
            click = rng.random() < p[a]
            seen = (rng.random() >= rho1) if click else (rng.random() < rho0)
            label = CBLabel(a, -1.0 if seen else 0.0, 1.0 / K)
        exs.append(ADFExample({"User": {f"u{j}": float(users[i, j]) for j in range(D)}}, acts, label))
        truth.append(p)
    return exs, np.array(truth)


def _greedy_share(pred_file, truth):
    text = pred_file.read_text()
    assert text.endswith("\n\n") and "\n\n\n" not in text  # VW's -p: a blank line after each example
    lines = [line for line in text.splitlines() if line]
    assert len(lines) == truth.shape[0]
    chosen = []
    for line in lines:
        pairs = [p.split(":") for p in line.split(",")]
        idx = [int(i) for i, _ in pairs]
        prob = np.array([float(q) for _, q in pairs])
        assert sorted(idx) == list(range(K)) and prob.sum() == pytest.approx(1.0, abs=1e-5)
        assert (np.diff(prob) <= 0).all()  # most probable first
        chosen.append(idx[0])
    earned = truth[np.arange(len(chosen)), chosen].mean()
    uniform, best = truth.mean(), truth.max(axis=1).mean()
    return (earned - uniform) / (best - uniform)


@pytest.mark.parametrize("rho0, rho1", [(0.0, 0.0), (0.2, 0.3)])
def test_train_on_a_uniform_log_then_rank_new_items(tmp_path, rho0, rho1):
    M = _world(0)
    train, _ = _examples(M, 4000, 300, seed=1, labelled=True, rho0=rho0, rho1=rho1)
    test, truth = _examples(M, 1000, 300, seed=2, labelled=False, id_offset=10_000)  # every item new
    write_vw_adf(tmp_path / "train.vw", train)
    write_vw_adf(tmp_path / "test.vw", test)
    res = invoke("train", "--data", tmp_path / "train.vw", "--learner", "SquareCB", "--model", tmp_path / "m.npz",
                 "--rho0", rho0, "--rho1", rho1, "--passes", 2)
    assert res.exit_code == 0, res.output
    assert "cb_adf" in res.output and (tmp_path / "m.npz.json").is_file()
    res = invoke("predict", "--data", tmp_path / "test.vw", "--model", tmp_path / "m.npz",
                 "--predictions", tmp_path / "preds.txt")
    assert res.exit_code == 0, res.output
    share = _greedy_share(tmp_path / "preds.txt", truth)
    assert share >= 0.8, f"greedy earns {share:.3f} of the uniform-to-best gap"


def test_evaluate_prints_estimates_that_cover_the_greedy_policys_value(tmp_path):
    M = _world(0)
    train, _ = _examples(M, 3000, 300, seed=3, labelled=True)
    log, truth = _examples(M, 6000, 300, seed=4, labelled=True, rho0=0.2, rho1=0.1, id_offset=20_000)
    write_vw_adf(tmp_path / "train.vw", train)
    write_vw_adf(tmp_path / "log.vw", log)
    assert invoke("train", "-d", tmp_path / "train.vw", "--model", tmp_path / "m.npz", "--passes", 2).exit_code == 0
    res = invoke("evaluate", "-d", tmp_path / "log.vw", "--model", tmp_path / "m.npz", "--policy", "greedy",
                 "--rho0", 0.2, "--rho1", 0.1, "--json")
    assert res.exit_code == 0, res.output
    est = json.loads(res.output)
    assert set(est) == {"ips", "snips", "dr", "sndr", "dm", "logged policy"}
    assert est["dm"]["interval"] == "none"
    # the greedy policy's true value on these rounds, from the model's own greedy choices
    res = invoke("predict", "-d", tmp_path / "log.vw", "--model", tmp_path / "m.npz", "-p", tmp_path / "g.txt",
                 "--greedy")
    assert res.exit_code == 0, res.output
    chosen = [int(line.split(":")[0]) for line in (tmp_path / "g.txt").read_text().splitlines() if line]
    value = truth[np.arange(len(chosen)), chosen].mean()
    for e in ("ips", "snips", "dr", "sndr"):
        assert est[e]["lower"] <= value <= est[e]["upper"], (e, est[e], value)
    assert est["logged policy"]["lower"] <= truth.mean() <= est["logged policy"]["upper"]
    text = invoke("evaluate", "-d", tmp_path / "log.vw", "--model", tmp_path / "m.npz").output
    assert "no interval" in text and "ips" in text


def test_cb_files_train_and_predict(tmp_path):
    """A --cb file (one line an example, 1-based actions): each action a one-hot candidate."""
    rng = np.random.default_rng(5)
    lines, X = [], rng.normal(size=(3000, 3))
    best = (X[:, 0] > 0).astype(int)  # action index 1 pays when x0 > 0, action index 0 otherwise
    for x, b in zip(X, best):
        a = int(rng.integers(3))
        click = rng.random() < (0.8 if a == b else 0.1)
        feats = " ".join(f"{n}:{float(v)!r}" for n, v in zip("abc", x))
        lines.append(f"{a + 1}:{-1 if click else 0}:{1 / 3!r} |x {feats}")
    (tmp_path / "train.vw").write_text("\n".join(lines) + "\n")
    (tmp_path / "test.vw").write_text("|x a:1.5 b:0 c:0\n|x a:-1.5 b:0.1 c:0\n")
    res = invoke("train", "-d", tmp_path / "train.vw", "--model", tmp_path / "m.npz", "--passes", 2,
                 "--param", "learning_rate=0.2")
    assert res.exit_code == 0, res.output
    assert "cb examples" in res.output
    assert json.loads((tmp_path / "m.npz.json").read_text())["n_actions"] == 3
    res = invoke("predict", "-d", tmp_path / "test.vw", "--model", tmp_path / "m.npz", "-p", tmp_path / "p.txt")
    assert res.exit_code == 0, res.output
    first = [int(line.split(":")[0]) for line in (tmp_path / "p.txt").read_text().splitlines() if line]
    assert first == [1, 0]
    # an unlabelled first line reads as cb_adf; --format cb says what it is
    (tmp_path / "mixed.vw").write_text("|x a:1\n" + "\n".join(lines) + "\n")
    res = invoke("train", "-d", tmp_path / "mixed.vw", "--model", tmp_path / "m2.npz", "--format", "cb")
    assert res.exit_code == 0 and f"on {len(lines)} cb examples" in res.output, res.output


def test_errors_are_one_line_naming_file_and_line(tmp_path):
    (tmp_path / "bad.vw").write_text("shared |u a\n|a x\n0:-1:2 |a y\n")
    res = invoke("train", "-d", tmp_path / "bad.vw", "--model", tmp_path / "m.npz")
    assert res.exit_code == 2 and "bad.vw, line 3" in res.output and "Traceback" not in res.output
    (tmp_path / "cost.vw").write_text("shared |u a\n|a x\n0:0.5:0.5 |a y\n")
    res = invoke("train", "-d", tmp_path / "cost.vw", "--model", tmp_path / "m.npz", "--reward", "click")
    assert res.exit_code == 2 and "costs must be -1" in res.output and "cost 0.5;" in res.output
    res = invoke("train", "-d", tmp_path / "cost.vw", "--model", tmp_path / "m.npz", "--learner", "BPA")
    assert res.exit_code == 2
    res = invoke("predict", "-d", tmp_path / "cost.vw", "--model", tmp_path / "none.npz", "-p", tmp_path / "p")
    assert res.exit_code == 2 and "none.npz" in res.output
    (tmp_path / "slots.vw").write_text("ccb shared |u a\nccb action |a x\nccb slot 0:-1:1 |s\n")
    res = invoke("train", "-d", tmp_path / "slots.vw", "--model", tmp_path / "m.npz")  # ccb: the multi-slot learner
    assert res.exit_code == 0 and "on 1 ccb examples" in res.output, res.output


def test_format_distribution_is_vws():
    assert format_distribution(np.array([0.25, 0.25, 0.5])) == "2:0.5,0:0.25,1:0.25"


def test_format_distributions_writes_the_bytes_of_format_distribution_round_by_round():
    """The chunk formatter (one sort and one ``%`` a chunk) against the per-round one: equal and unequal
    numbers of actions, ties (stable by index), -0.0, tiny probabilities (exponent form), offsets not from 0."""
    rng = np.random.default_rng(0)
    for trial in range(200):
        n = int(rng.integers(0, 30))
        sizes = np.full(n, int(rng.integers(0, 12))) if trial % 2 else rng.integers(0, 12, size=n)
        o = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        P = rng.random(int(o[-1])) ** int(rng.integers(1, 30))
        if trial % 3 == 0:
            P = np.round(P, 1)
        if trial % 5 == 0:
            P[::4] = -0.0
        want = "".join(format_distribution(P[o[i]:o[i + 1]]) + "\n\n" for i in range(n))
        assert format_distributions(P, o) == want
        if n > 1:
            assert format_distributions(P, o[1:]) == want[want.index("\n\n") + 2:]
