"""From logs to the service and back: ``train`` on a VW cb_adf log → ``serve --action-features --model`` →
rank/reward → ``export-log -o log.vw`` → ``train`` again.

- The served model is the trained one (its first ranking is the trained model's distribution over the same
  features, sent as JSON where the log had VW text) and keeps learning from the service's rewards.
- The export's hashed features hash back to the very rows the service learned from: the trained model
  updated with the exported examples is the service's model, bit for bit.
- The next model, trained on the export, learned what the service's rewards taught (the action kind the
  world now rewards ranks first; the first model ranked another kind first).
"""

import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("fastapi")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

import noisyfeedback as nf  # noqa: E402
from noisyfeedback.catalogue import CandidateRounds  # noqa: E402
from noisyfeedback.cli import app as cli  # noqa: E402
from noisyfeedback.client import Client  # noqa: E402
from noisyfeedback.datasets import ADFExample, CBLabel, read_vw_adf, write_vw_adf  # noqa: E402
from noisyfeedback.service import ServiceConfig, create_app  # noqa: E402
from noisyfeedback.service.auth import create_key  # noqa: E402

runner = CliRunner()


def to_rounds(examples) -> CandidateRounds:
    """Hashed rounds of VW ADF/CCB examples, as ``train`` hashes them (VW's rules)."""
    return CandidateRounds.from_features([e.shared for e in examples], [e.actions for e in examples])


KINDS = ("a", "b", "c", "d")


def invoke(*args):
    res = runner.invoke(cli, [str(a) for a in args], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return res


def offline_log(n: int, seed: int) -> list[ADFExample]:
    """A uniform log of rounds of the four kinds of action: kind "a" is clicked 70 % of the time, "b" 50 %,
    the others 10 %. VW text form: ``|Item ka`` (the JSON requests send ``{"Item": {"k": "a"}}``)."""
    rng = np.random.default_rng(seed)
    exs = []
    for _ in range(n):
        user = {"User": {"u0": float(rng.normal()), "u1": float(rng.normal())}}
        a = int(rng.integers(4))
        click = rng.random() < {"a": 0.7, "b": 0.5}.get(KINDS[a], 0.1)
        exs.append(ADFExample(user, [{"Item": {f"k{k}": 1.0}} for k in KINDS], CBLabel(a, -1.0 if click else 0.0,
                                                                                       0.25)))
    return exs


def request(rng, t: int):
    """A JSON request of the same kind: the context in namespace User, each action's kind as a string."""
    ctx = [{"User": {"u0": float(rng.normal()), "u1": float(rng.normal())}}]
    return ctx, [{"id": f"{k}{t}", "features": [{"Item": {"k": k}}]} for k in KINDS]


def kind_scores(learner) -> np.ndarray:
    """The model's mean score of each kind over a few contexts."""
    ex = [ADFExample({"User": {"u0": float(u0), "u1": float(u1)}}, [{"Item": {f"k{k}": 1.0}} for k in KINDS])
          for u0, u1 in np.random.default_rng(9).normal(size=(20, 2))]
    return learner.decision_function(to_rounds(ex)).reshape(20, 4).mean(axis=0)


def test_train_serve_export_train(tmp_path):
    write_vw_adf(tmp_path / "log0.vw", offline_log(400, seed=0))
    invoke("train", "--data", tmp_path / "log0.vw", "--model", tmp_path / "m1.npz", "-b", 16, "-q", "UI")
    m1 = nf.load(tmp_path / "m1.npz")
    assert np.argmax(kind_scores(m1)) == 0  # the offline log taught: kind "a" first

    cfg = ServiceConfig(db=tmp_path / "s.db", model=tmp_path / "m1.npz", action_features=True, synchronous="NORMAL")
    app = create_app(cfg)
    key = create_key(cfg.db, "admin")
    rng = np.random.default_rng(1)
    with TestClient(app) as http:
        client = Client("http://testserver", key, session=http)
        # the served model is the trained one, over the same features: JSON here, VW text in the log
        ctx, actions = request(rng, 0)
        ans = client.rank(ctx, actions, event_id="first")
        text = "shared |User " + " ".join(f"{n}:{v!r}" for n, v in ctx[0]["User"].items()) + "\n" + \
            "".join(f"|Item k{k}\n" for k in KINDS)
        want = m1.action_probabilities(to_rounds(read_vw_adf(text)))
        got = {r["id"]: r["probability"] for r in ans["ranking"]}
        assert [got[a["id"]] for a in actions] == want.tolist()
        assert max(got, key=got.get) == "a0"
        client.reward("first", 0.0)
        # the world changed: kind "b" is what users take now
        for t in range(1, 200):
            ctx, actions = request(rng, t)
            ans = client.rank(ctx, actions)
            client.reward(ans["event_id"], 1.0 if ans["action"].startswith("b") else 0.0)
        served = app.state.engine.learner
        snapshot_weights = served.weights_.copy()
    assert np.argmax(kind_scores(served)) == 1  # the served model kept learning

    invoke("export-log", "--db", cfg.db, "--out", tmp_path / "log1.vw")
    exported = read_vw_adf(tmp_path / "log1.vw")
    assert len(exported) == 200
    # the exported features hash to the service's rows: the trained model + the export = the served model
    replay = nf.load(tmp_path / "m1.npz")
    lab = [e for e in exported if e.label is not None]
    replay.learn(to_rounds(lab), [e.label.index for e in lab], [-e.label.cost for e in lab],
                 [e.label.probability for e in lab])
    np.testing.assert_array_equal(replay.weights_, snapshot_weights)

    # the next model, trained on the service's log, learned from the service's rewards
    invoke("train", "--data", tmp_path / "log1.vw", "--model", tmp_path / "m2.npz", "-b", 16, "-q", "UI")
    m2 = nf.load(tmp_path / "m2.npz")
    s1, s2 = kind_scores(m1), kind_scores(m2)
    assert np.argmax(s1) == 0 and np.argmax(s2) == 1 and s2[0] < s1[0]


def test_multislot_log_exports_as_ccb_that_replays_to_the_service_model(tmp_path):
    from noisyfeedback.datasets import read_vw_ccb

    cfg = ServiceConfig(db=tmp_path / "s.db", learner="SquareCB", action_features=True, bits=14,
                        interactions=("uI",), params={"n_slots": 2, "seed": 3}, synchronous="NORMAL")
    app = create_app(cfg)
    key = create_key(cfg.db, "admin")
    rng = np.random.default_rng(2)
    start = nf.load(next((tmp_path / "s.db.snapshots").iterdir()))
    with TestClient(app) as http:
        client = Client("http://testserver", key, session=http)
        for t in range(30):
            ctx = [{"user": {"x": float(rng.normal())}, "device": "mobile"}]
            actions = [{"id": f"{k}{t}", "features": [{"Item": {"k": k, "price": float(rng.random())}}]}
                       for k in KINDS]
            ans = client.rank_multislot(ctx, actions, ["top", "side"])
            client.reward_slots(ans["event_id"], {"top": float(ans["slots"][0]["action"].startswith("a")),
                                                  "side": 0.0})
        served = app.state.engine.learner.weights_.copy()
    invoke("export-log", "--db", cfg.db, "--out", tmp_path / "log.vw")
    exs = read_vw_ccb(tmp_path / "log.vw")
    assert len(exs) == 30 and all(len(e.slots) == 2 for e in exs)
    rounds = to_rounds(exs)
    chosen = [[s.label.action for s in e.slots] for e in exs]
    rewards = [[-s.label.cost for s in e.slots] for e in exs]
    probs = [[s.label.probabilities[0][1] for s in e.slots] for e in exs]
    start.learn(rounds, chosen, rewards, probs)
    np.testing.assert_array_equal(start.weights_, served)


def test_serve_model_refusals(tmp_path):
    write_vw_adf(tmp_path / "log0.vw", offline_log(50, seed=0))
    invoke("train", "--data", tmp_path / "log0.vw", "--model", tmp_path / "m.npz", "-b", 12)
    nf.SquareCB(3, seed=0).fit_logged(np.eye(3), [0, 1, 2], [1, 0, 1], [1, 1, 1]).save(tmp_path / "index.npz")
    nf.CatalogueSquareCB(seed=0).save(tmp_path / "dense.npz")
    (tmp_path / "junk.npz").write_text("[1, 2]")
    cases = [({"model": tmp_path}, "is a folder"), ({"model": tmp_path / "none.npz"}, "no such file"),
             ({"model": tmp_path / "index.npz"}, "holds a SquareCB; --action-features serves the catalogue"),
             ({"model": tmp_path / "dense.npz"}, "dense features"),
             ({"model": tmp_path / "junk.npz"}, "junk.npz is not a valid noisyfeedback model file"),
             ({"model": tmp_path / "m.npz", "bits": 18}, "trained with bits = 12; --bits 18 differs"),
             ({"model": tmp_path / "m.npz", "learner": "EpsilonGreedy"}, "trained with learner = 'CatalogueSquareCB'"),
             ({"model": tmp_path / "m.npz", "interactions": ("UI",)}, "trained with interaction = None"),
             ({"model": tmp_path / "m.npz", "params": {"bits": 12}}, "cannot change a trained model")]
    for i, (kw, msg) in enumerate(cases):
        with pytest.raises(ValueError, match=msg.replace("(", r"\(")):
            create_app(ServiceConfig(db=tmp_path / f"s{i}.db", action_features=True, **kw))
        assert not (tmp_path / f"s{i}.db").exists()
    # agreeing options and an exploration parameter are fine; a restart with another model is refused
    cfg = ServiceConfig(db=tmp_path / "ok.db", model=tmp_path / "m.npz", action_features=True, bits=12,
                        learner="SquareCB", params={"gamma_scale": 5.0})
    engine = create_app(cfg).state.engine
    assert engine.learner.gamma_scale == 5.0 and engine.learner.weights_.any()
    engine.storage.close()
    nf.CatalogueSquareCB(features="hashed", bits=13, seed=0).save(tmp_path / "other.npz")
    with pytest.raises(ValueError, match="serves model's bits = 12; model's bits 13 differs"):
        create_app(ServiceConfig(db=tmp_path / "ok.db", model=tmp_path / "other.npz", action_features=True))
