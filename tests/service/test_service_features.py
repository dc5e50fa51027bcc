"""The decision service for actions described by features (``serve --action-features``), in-process.

- Driven in order by :class:`noisyfeedback.client.Client` with the synthetic ranking stream (one slot and
  three slots), the service's choices and weights equal ``nf.simulate`` of the same learner, bit for bit.
- Recovery: a restart rebuilds, from the last snapshot and the log, the model that was serving.
- Excluded actions, deferred activation (never activated: never learned, counted), idempotent event ids
  and the client's retries, and the refusals (422 naming the field, 404, 409).
"""

import sqlite3
import warnings

import httpx
import numpy as np
import pytest

pytest.importorskip("fastapi")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

import noisyfeedback as nf  # noqa: E402
from noisyfeedback.client import Client, ServiceRefused  # noqa: E402
from noisyfeedback.datasets import ranking_stream  # noqa: E402
from noisyfeedback.service import ServiceConfig, create_app  # noqa: E402
from noisyfeedback.service.auth import create_key  # noqa: E402


def service(tmp_path, name="s.db", **kw):
    cfg = ServiceConfig(db=tmp_path / name, learner=kw.pop("learner", "SquareCB"), action_features=True,
                        synchronous="NORMAL", **kw)
    app = create_app(cfg)
    return cfg, app, create_key(cfg.db, "admin")


def round_request(stream, i):
    """Round i of a numeric stream as the JSON an application sends: the context in namespace "s", each
    candidate's features in namespace "a" (feature j is named "j"; zeros left out, as the learners'
    hashing of numeric columns does)."""
    rd = stream.rounds
    ctx = rd.context[i]
    lo, hi = rd.offsets[i], rd.offsets[i + 1]
    actions = [{"id": str(rd.item_ids[r]), "features": [{"a": {str(j): float(v) for j, v in enumerate(rd.items[r])
                                                                 if v != 0.0}}]} for r in range(lo, hi)]
    return [{"s": {str(j): float(v) for j, v in enumerate(ctx) if v != 0.0}}], actions


def ref_flip(f, u, rho0, rho1):
    if f == 1:
        return 0 if u < rho1 else 1
    return 1 if u < rho0 else 0


@pytest.mark.parametrize("k", [1, 3], ids=["one-slot", "multislot"])
def test_acceptance_driven_in_order_equals_simulate(tmp_path, k):
    rho0, rho1, n, seed = 0.1, 0.2, 160, 11
    stream = ranking_stream(n_rounds=120, context_dim=5, item_dim=4, n_candidates=5, seed=2)
    channel = nf.feedback.NoisyBandit(rho0, rho1)
    params = {"seed": 4, "n_slots": k}
    sim = nf.CatalogueSquareCB(features="hashed", bits=12, **params)
    nf.simulate(sim, stream, None, channel, n_rounds=n, seed=seed)

    cfg, app, key = service(tmp_path, bits=12, params=params)
    _, s_flip, _, s_click = np.random.SeedSequence(seed).spawn(4)
    rng_flip = np.random.Generator(np.random.PCG64(s_flip))
    rng_click = np.random.Generator(np.random.PCG64(s_click))
    exam = stream.examination_for(k)
    slots = [f"slot{j}" for j in range(k)]
    mirror = nf.CatalogueSquareCB(features="hashed", bits=12, **params)  # act -> learn by hand: each choice
    with TestClient(app) as http:
        client = Client("http://testserver", key, session=http)
        for t in range(n):
            i = t % stream.n_rounds
            ctx, actions = round_request(stream, i)
            ids = [a["id"] for a in actions]
            if k == 1:
                ans = client.rank(ctx, actions)
                chosen = [ans["action"]]
                assert ans["ranking"][0]["id"] == ans["action"]
                assert sum(r["probability"] for r in ans["ranking"]) == pytest.approx(1.0)
            else:
                ans = client.rank_multislot(ctx, actions, slots)
                chosen = [s["action"] for s in ans["slots"]]
            want, want_p = mirror.act(stream.rounds[i])
            want, want_p = np.reshape(want, k), np.reshape(want_p, k)
            assert chosen == [ids[p] for p in want]  # the same choice, round by round
            got_p = [ans["probability"]] if k == 1 else [s["probability"] for s in ans["slots"]]
            assert got_p == want_p.tolist()
            uc, uf = rng_click.random(k), rng_flip.random(k)
            clicks = {}
            for j, a in enumerate(chosen):
                pos = ids.index(a)
                clean = int(uc[j] < exam[j] * stream.rewards[stream.rounds.offsets[i] + pos])
                clicks[slots[j]] = ref_flip(clean, uf[j], rho0, rho1)
            f = np.array([clicks[sl] for sl in slots])
            mirror.learn(stream.rounds[i], want if k > 1 else want[:1], f if k > 1 else f[:1], want_p)
            if k == 1:
                r = client.reward(ans["event_id"], clicks[slots[0]])
            else:
                r = client.reward_slots(ans["event_id"], clicks)
            assert r["status"] == "accepted" and r["model_version"] == t + 1
        snap = client._post("/snapshot")
    served = nf.load(snap["path"])
    for name in ("weights_", "sum_sq_grad_", "n_updates_", "exam_clicks_", "exam_scores_"):
        np.testing.assert_array_equal(getattr(served, name), getattr(sim, name), err_msg=name)  # bit for bit
    assert served.rng_.bit_generator.state == sim.rng_.bit_generator.state

    # a restart rebuilds the same model from the log alone (snapshot 0, every draw, every reward)
    con = sqlite3.connect(cfg.db)
    con.execute("DELETE FROM snapshots WHERE reward_seq > 0")
    con.commit()
    con.close()
    app2 = create_app(ServiceConfig(db=cfg.db, synchronous="NORMAL"))
    rebuilt = app2.state.engine.learner
    np.testing.assert_array_equal(rebuilt.weights_, sim.weights_)
    np.testing.assert_array_equal(rebuilt.exam_clicks_, sim.exam_clicks_)
    assert rebuilt.rng_.bit_generator.state == sim.rng_.bit_generator.state


NEWS = {"contextFeatures": [{"timeOfDay": "Morning"}], "actions": [
    {"id": "NewsArticle", "features": [{"type": "News"}]},
    {"id": "SportsArticle", "features": [{"type": "Sports"}]},
    {"id": "EntertainmentArticle", "features": [{"type": "Entertainment"}]}]}


def test_excluded_deferred_and_never_activated_events(tmp_path):
    cfg, app, key = service(tmp_path, params={"seed": 0})
    h = {"Authorization": f"Bearer {key}"}
    ctx, actions = [{"user": {"age": 30, "country": "fr"}}], [{"id": a["id"], "features": a["features"]}
                                                              for a in NEWS["actions"]]
    with TestClient(app) as c:
        r = c.post("/rank", json={"context_features": ctx, "actions": actions, "excluded_actions": ["SportsArticle"]},
                   headers=h).json()
        assert r["action"] != "SportsArticle"
        assert {x["id"]: x["probability"] for x in r["ranking"]}["SportsArticle"] == 0.0
        assert [x["id"] for x in r["ranking"]][-1] == "SportsArticle" and len(r["ranking"]) == 3
        probs = [x["probability"] for x in r["ranking"][1:]]
        assert probs == sorted(probs, reverse=True)  # the chosen one first, then by decreasing probability
        unknown = c.post("/rank", json={"context_features": ctx, "actions": actions, "excluded_actions": ["zzz"]},
                         headers=h).json()
        assert len(unknown["ranking"]) == 3 and all(x["probability"] > 0 for x in unknown["ranking"])
        # numeric-only features of the service: refused by name
        assert c.post("/mode", json={"mode": "apprentice"}, headers=h).status_code == 422
        ev = c.get("/policy/evaluate", params={"candidate": "deployed"}, headers=h)
        assert ev.status_code == 422 and ev.json()["detail"][0]["loc"] == ["body", "candidate"]
        # deferred: its reward is refused until it is activated; never activated: never learned, counted
        d1 = c.post("/rank", json={"context_features": ctx, "actions": actions, "event_id": "d1",
                                   "defer_activation": True}, headers=h).json()
        assert d1["deferred"] is True
        c.post("/rank", json={"context_features": ctx, "actions": actions, "event_id": "d2",
                              "defer_activation": True}, headers=h)
        before = app.state.engine.model_version
        bad = c.post("/reward", json={"event_id": "d1", "reward": 1}, headers=h)
        assert bad.status_code == 409 and bad.json()["field"] == "event_id" and "activate" in bad.json()["detail"]
        assert app.state.engine.model_version == before
        assert c.post("/events/d1/activate", headers=h).json()["status"] == "activated"
        assert c.post("/events/d1/activate", headers=h).json()["status"] == "duplicate"
        assert c.post("/events/nope/activate", headers=h).status_code == 404
        assert c.post("/reward", json={"event_id": "d1", "reward": 1}, headers=h).json()["status"] == "accepted"
        assert app.state.engine.model_version == before + 1
        metrics = c.get("/metrics", headers=h).text
        assert "nf_deferred_events_total 2.0" in metrics and "nf_deferred_not_activated 1.0" in metrics
        con = sqlite3.connect(cfg.db)
        learned = {e for (e,) in con.execute("SELECT event_id FROM rewards")}
        con.close()
        assert "d2" not in learned and "d1" in learned
    # the counts survive a restart
    app2 = create_app(ServiceConfig(db=cfg.db, synchronous="NORMAL"))
    assert app2.state.engine.stats["deferred_pending"] == 1


@pytest.mark.parametrize("body, field", [
    ({"actions": []}, "actions"),
    ({"actions": [{"id": "a"}, {"id": "a"}]}, "actions"),
    ({"actions": [{"id": "a"}], "excluded_actions": ["a"]}, "excluded_actions"),
    ({"actions": [{"id": "é"}]}, "actions"),
    ({"actions": [{"id": "a", "features": [{"x": {"y": {"z": {"w": 1}}}}]}]}, "actions"),
    (b'{"actions": [{"id": "a"}], "context_features": [{"x": 1e400}]}', "context_features"),
    (b'{"actions": [{"id": "a"}], "context_features": [{"x": NaN}]}', "context_features"),
    ({"actions": [{"id": "a"}], "event_id": "has space"}, "event_id"),
    ({"actions": [{"id": str(i)} for i in range(51)]}, "actions"),
    ({"actions": [{"id": "a", "features": [{"x": [1, "s"]}]}]}, "actions"),
    ({"actions": [{"id": "a"}], "context_features": [{"x": [1, "s"]}]}, "context_features"),
    ({"actions": [{"id": "a"}], "context": [1.0]}, "context"),
])
def test_bad_feature_requests_get_422_naming_the_field_and_log_nothing(tmp_path, body, field):
    cfg, app, key = service(tmp_path, params={"seed": 0})
    with TestClient(app) as c:
        h = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        r = (c.post("/rank", content=body, headers=h) if isinstance(body, bytes)
             else c.post("/rank", json=body, headers=h))
        assert r.status_code == 422, r.text
        assert field in ".".join(map(str, r.json()["detail"][0]["loc"])), r.text
        assert app.state.engine.stats["events"] == 0


def test_multislot_refusals_and_rewards_per_slot(tmp_path):
    cfg, app, key = service(tmp_path, params={"seed": 0, "n_slots": 2})
    h = {"Authorization": f"Bearer {key}"}
    actions = [{"id": a["id"], "features": a["features"]} for a in NEWS["actions"]]
    with TestClient(app) as c:
        # one service, single- and multi-slot: /rank fills the first slot (its reward learned as slot 1's)
        one = c.post("/rank", json={"actions": actions, "event_id": "s1"}, headers=h)
        assert one.status_code == 200 and "slots" not in one.json(), one.text
        assert c.post("/reward", json={"event_id": "s1", "reward": 0.5}, headers=h).json()["status"] == "accepted"
        assert app.state.engine.model_version == 1
        few = c.post("/rank/multislot", json={"actions": actions, "slots": [{"id": "a"}], "event_id": "s2"},
                     headers=h).json()
        assert [s["id"] for s in few["slots"]] == ["a"]
        three = c.post("/rank/multislot", json={"actions": actions, "slots": [{"id": "a"}, {"id": "b"}, {"id": "c"}]},
                       headers=h)
        assert three.status_code == 422 and three.json()["detail"][0]["loc"][1] == "slots"
        base = c.post("/rank/multislot", json={"actions": actions, "slots": [{"id": "a", "baseline_action": "x"},
                                                                              {"id": "b"}]}, headers=h)
        assert base.status_code == 422 and "baseline" in base.text
        ans = c.post("/rank/multislot", json={"actions": actions, "slots": [
            {"id": "top", "features": [{"size": "large"}], "baseline_action": "NewsArticle"}, {"id": "side"}],
            "event_id": "m1"}, headers=h).json()
        assert [s["id"] for s in ans["slots"]] == ["top", "side"]
        assert len({s["action"] for s in ans["slots"]}) == 2 and all(0 < s["probability"] <= 1 for s in ans["slots"])
        bad = c.post("/reward/multislot", json={"event_id": "m1", "rewards": [{"slot_id": "nope", "reward": 1}]},
                     headers=h)
        assert bad.status_code == 422
        ok = c.post("/reward/multislot", json={"event_id": "m1", "rewards": [{"slot_id": "side", "reward": 1}]},
                    headers=h).json()
        assert ok["status"] == "accepted"
        again = c.post("/reward/multislot", json={"event_id": "m1", "rewards": [{"slot_id": "side", "reward": 1}]},
                       headers=h).json()
        assert again["status"] == "duplicate"
        other = c.post("/reward/multislot", json={"event_id": "m1", "rewards": [{"slot_id": "top", "reward": 1}]},
                       headers=h)
        assert other.status_code == 409
        single = c.post("/reward", json={"event_id": "m1", "reward": 1}, headers=h)
        assert single.status_code == 422
        # fewer actions than slots: the last slot stays empty, and cannot be clicked
        short = c.post("/rank/multislot", json={"actions": actions[:1], "slots": [{"id": "top"}, {"id": "side"}],
                                                "event_id": "m2"}, headers=h).json()
        assert short["slots"][0]["action"] == "NewsArticle" and short["slots"][1]["action"] is None
        empty = c.post("/reward/multislot", json={"event_id": "m2", "rewards": [{"slot_id": "side", "reward": 1}]},
                       headers=h)
        assert empty.status_code == 422 and "empty" in empty.text
        assert c.post("/reward/multislot", json={"event_id": "m2", "rewards": [{"slot_id": "top", "reward": 1}]},
                      headers=h).json()["status"] == "accepted"
        # an event the service named ('ev~N') is rewarded by that name
        own = c.post("/rank/multislot", json={"actions": actions, "slots": [{"id": "top"}, {"id": "side"}]},
                     headers=h).json()
        assert "~" in own["event_id"]
        assert c.post("/reward/multislot", json={"event_id": own["event_id"], "rewards": [
            {"slot_id": "top", "reward": 1}]}, headers=h).json()["status"] == "accepted"
        con = sqlite3.connect(cfg.db)
        assert con.execute("SELECT slots FROM rewards ORDER BY seq").fetchall() == [(None,), ("0,1",), ("1,0",),
                                                                                   ("1,0",)]
        con.close()


class DropFirstAnswers(httpx.BaseTransport):
    """Forwards every request to the service but loses the answers of the first ``n`` (as a dropped
    connection after the service has acted would)."""

    def __init__(self, inner, n):
        self.inner, self.n = inner, n

    def handle_request(self, request):
        response = self.inner.handle_request(request)
        response.read()
        if self.n > 0:
            self.n -= 1
            raise httpx.ReadError("connection lost", request=request)
        return response


def test_client_retries_with_the_same_event_id_get_the_same_answer(tmp_path):
    cfg, app, key = service(tmp_path, params={"seed": 0})
    actions = {a["id"]: a["features"] for a in NEWS["actions"]}
    with TestClient(app) as http:
        drop = DropFirstAnswers(http._transport, 2)
        flaky = httpx.Client(base_url="http://testserver", transport=drop)
        client = Client("http://testserver", key, session=flaky, backoff=0.0)
        ans = client.rank([{"user": {"age": 3}}], actions)  # answered on the third attempt
        engine = app.state.engine
        assert engine.stats["events"] == 1 and engine.next_event_seq == 2  # drawn and logged once
        direct = Client("http://testserver", key, session=http)
        again = direct.rank([{"user": {"age": 3}}], actions, event_id=ans["event_id"])
        assert again == ans
        with pytest.raises(ServiceRefused) as err:
            direct.rank([{"user": {"age": 4}}], actions, event_id=ans["event_id"])
        assert err.value.status == 409
        drop.n = 1
        assert client.reward(ans["event_id"], 1)["status"] == "duplicate"  # the first, lost, was accepted
        assert engine.model_version == 1
        drop.n = 5
        with pytest.raises(httpx.TransportError):
            client.activate(ans["event_id"])  # more failures than retries


def test_a_numeric_database_is_not_served_with_action_features_and_back(tmp_path):
    numeric = ServiceConfig(db=tmp_path / "n.db", learner="RCNBF", n_classes=3, n_features=4)
    create_app(numeric)
    with pytest.raises(ValueError, match="numeric API"):
        create_app(ServiceConfig(db=tmp_path / "n.db", learner="SquareCB", action_features=True))
    cfg, app, key = service(tmp_path, "f.db", params={"seed": 0}, bits=10)
    with pytest.raises(ValueError, match="bits = 10"):
        create_app(ServiceConfig(db=cfg.db, action_features=True, bits=12))
    with pytest.raises(ValueError, match="no action-feature form"):
        service(tmp_path, "g.db", learner="RCNBF")
    with pytest.raises(ValueError, match="leave out features"):
        service(tmp_path, "h.db", params={"features": "dense"})
    with pytest.raises(ValueError, match="serve it with --action-features"):
        create_app(ServiceConfig(db=tmp_path / "j.db", learner="CatalogueSquareCB", n_classes=3, n_features=4))
    assert not (tmp_path / "j.db").exists()  # a refused start leaves nothing behind
    with pytest.raises(ValueError, match="n_classes"):
        ServiceConfig(db=tmp_path / "i.db", learner="SquareCB", action_features=True, n_classes=3).check()


@pytest.mark.parametrize("name", nf.registry.learners_where(family="catalogue"))
def test_every_catalogue_learner_is_served_with_action_features(tmp_path, name):
    cfg, app, key = service(tmp_path, learner=name, params={"seed": 0}, bits=8)
    actions = {a["id"]: a["features"] for a in NEWS["actions"]}
    with TestClient(app) as http:
        c = Client("http://testserver", key, session=http)
        ans = c.rank([{"user": {"country": "fr"}}], actions)
        assert c.reward(ans["event_id"], 1)["status"] == "accepted"
    assert type(app.state.engine.learner).__name__ == name


def test_serve_action_features_from_the_command_line_with_the_client(tmp_path):
    """``noisyfeedback serve --action-features --bits --interaction`` as a process, driven by the client over
    HTTP; a restart keeps the configuration and the model."""
    import socket
    import subprocess
    import sys
    import time

    def start(*args):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen([sys.executable, "-m", "noisyfeedback.cli", "serve", "--db", str(tmp_path / "c.db"),
                                 "--port", str(port), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode()
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    return proc, url
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        proc.kill()
        raise RuntimeError("no server")

    key = create_key(tmp_path / "c.db", "rank")
    proc, url = start("--learner", "SquareCB", "--action-features", "--bits", "12", "--interaction", "ua",
                      "--param", "seed=1", "--sync", "NORMAL")
    ctx = [{"user": {"country": "fr"}}]
    actions = {"news-1": [{"a": {"topic": "politics"}}], "sport-7": [{"a": {"topic": "football"}}]}
    try:
        with Client(url, key) as c:
            r = c.rank(ctx, actions)
            assert r["action"] in actions and c.reward(r["event_id"], 1)["status"] == "accepted"
            with pytest.raises(ServiceRefused) as err:
                c.reward(r["event_id"], 0)
            assert err.value.status == 409
            before = httpx.post(url + "/rank", json={"context_features": ctx, "actions": [
                {"id": k, "features": v} for k, v in actions.items()]}, headers={"Authorization": f"Bearer {key}"})
    finally:
        proc.kill()
        proc.wait(10)
        proc.stderr.close()
    proc, url = start()  # the database's configuration
    try:
        health = httpx.get(url + "/health").json()
        assert health["learner"] == "CatalogueSquareCB" and health["rewards"] == 1 and health["events"] == 2
        with Client(url, key) as c:
            again = c.rank(ctx, actions)
        assert again["ranking"] != []
        assert {x["id"]: x["probability"] for x in again["ranking"]} == \
            {x["id"]: x["probability"] for x in before.json()["ranking"]}  # the same model after the restart
    finally:
        proc.kill()
        proc.wait(10)
        proc.stderr.close()
    from noisyfeedback.service.export import export_log

    with pytest.raises(ValueError, match="export its log as .parquet"):
        export_log(tmp_path / "c.db", tmp_path / "log.csv")
    import pyarrow.parquet as pq

    table = pq.read_table(export_log(tmp_path / "c.db", tmp_path / "log.parquet")).to_pylist()
    assert [row["event_id"] for row in table] == [r["event_id"], "ev~2", again["event_id"]]
    assert table[0]["chosen"] == [r["action"]] and table[0]["slot_rewards"] == [1] and table[1]["reward"] is None
    assert sorted(table[0]["actions"]) == sorted(actions) and table[0]["probabilities"] == [r["probability"]]
    con = sqlite3.connect(tmp_path / "c.db")
    import json as _json

    conf = _json.loads(con.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
    con.close()
    assert conf["bits"] == 12 and conf["interactions"] == ["ua"]


@pytest.mark.parametrize("interactions", [None, ("ua",), ("u:", "xa")])
def test_namespace_classes_give_the_same_bits(interactions):
    """The service maps each namespace to its class under the interactions (first letter named by a pair,
    or one class for the rest): the learner's choices and weights are those of the original namespaces."""
    from noisyfeedback.catalogue import CandidateRounds
    from noisyfeedback.service.catalogue import canonical_namespaces

    rng = np.random.default_rng(0)
    shared = [[{"user": {"age": float(rng.normal())}, "uplift": {"x": 1.0}, "zone": {"z": float(rng.normal())}}]
              for _ in range(30)]
    acts = [[{"act": {"p": float(rng.normal())}, "xtra": {"q": 1.0}, "brand": {f"b{j}": 1.0}} for j in range(4)]
            for _ in range(30)]
    rounds = CandidateRounds.from_features(shared, acts)
    canon = canonical_namespaces(rounds, interactions)
    assert len(canon.context.namespaces) <= 4 < len(rounds.context.namespaces)
    a, b = (nf.CatalogueSquareCB(features="hashed", bits=10, interactions=interactions, seed=3) for _ in range(2))
    for i in range(30):
        xa, pa = a.act(rounds[i])
        xb, pb = b.act(canon[i])
        assert xa.tolist() == xb.tolist() and pa.tolist() == pb.tolist()
        a.learn(rounds[i], xa, [int(xa[0] % 2)], pa)
        b.learn(canon[i], xb, [int(xb[0] % 2)], pb)
    np.testing.assert_array_equal(a.weights_, b.weights_)


def test_a_request_inventing_many_namespaces_is_cheap(tmp_path):
    cfg, app, key = service(tmp_path, params={"seed": 0}, interactions=("ua",), bits=10)
    ctx = [{f"n{i}": {"f": 1.0} for i in range(200)} for _ in range(60)]
    with TestClient(app) as c:
        r = c.post("/rank", json={"context_features": ctx, "actions": [{"id": "a", "features": [
            {f"a{i}": {"g": 1.0} for i in range(200)}]}, {"id": "b"}]}, headers={"Authorization": f"Bearer {key}"})
        assert r.status_code == 200, r.text
        assert c.post("/reward", json={"event_id": r.json()["event_id"], "reward": 1},
                      headers={"Authorization": f"Bearer {key}"}).status_code == 200
