"""Personalizer-compatible routes: the request bodies of Microsoft's REST reference (Rank v1.0 and
Multi Slot Rank v1.1-preview.1 samples, the quickstart's reward bodies) rank → reward → activate end to end,
with excluded actions (per slot too) and deferred activation, under every version served (the paths and
``?api-version=``); errors in Personalizer's body; single- and multi-slot rank on one service; the
unsupported routes answer 501."""

import copy
import sqlite3
import warnings

import pytest

pytest.importorskip("fastapi")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from noisyfeedback.service import ServiceConfig, create_app  # noqa: E402
from noisyfeedback.service.auth import create_key  # noqa: E402

# the sample request of "Rank - Rank" (POST {Endpoint}/personalizer/v1.0/rank)
RANK = {
    "contextFeatures": [{"timeOfDay": "Morning"}],
    "actions": [
        {"id": "NewsArticle", "features": [{"type": "News"}]},
        {"id": "SportsArticle", "features": [{"type": "Sports"}]},
        {"id": "EntertainmentArticle", "features": [{"type": "Entertainment"}]},
    ],
    "excludedActions": ["SportsArticle"],
    "eventId": "75269AD0-BFEE-4598-8196-C57383D38E10",
    "deferActivation": False,
}

# the sample request of "Multi Slot - Rank" (POST {Endpoint}/personalizer/v1.1-preview.1/multislot/rank)
MULTISLOT = {
    "contextFeatures": [
        {"user": {"profileType": "AnonymousUser", "latLong": "47.6,-122.1"}},
        {"environment": {"dayOfMonth": "28", "monthOfYear": "8", "weather": "Sunny"}},
        {"device": {"mobile": True, "windows": True}},
        {"recentActivity": {"itemsInCart": 3}},
    ],
    "actions": [
        {"id": "NewsArticle", "features": [{"type": "News"}]},
        {"id": "SportsArticle", "features": [{"type": "Sports"}]},
        {"id": "EntertainmentArticle", "features": [{"type": "Entertainment"}]},
    ],
    "slots": [
        {"id": "Main Article", "features": [{"size": "Large", "position": "Top Middle"}],
         "excludedActions": ["SportsArticle"], "baselineAction": "EntertainmentArticle"},
        {"id": "Side Bar", "features": [{"size": "Small"}], "baselineAction": "NewsArticle"},
    ],
    "eventId": "75269AD0-BFEE-4598-8196-C57383D38E10",
    "deferActivation": False,
}


@pytest.fixture
def pz(tmp_path):
    def make(n_slots=1):
        cfg = ServiceConfig(db=tmp_path / f"p{n_slots}.db", learner="SquareCB", action_features=True,
                            params={"seed": 0, "n_slots": n_slots}, synchronous="NORMAL")
        app = create_app(cfg)
        return cfg, app, {"Ocp-Apim-Subscription-Key": create_key(cfg.db, "rank")}
    return make


def test_acceptance_rank_reward_with_excluded_actions(pz):
    cfg, app, key = pz()
    with TestClient(app) as c:
        r = c.post("/personalizer/v1.0/rank", json=RANK, headers=key)
        assert r.status_code == 201, r.text
        body = r.json()
        assert set(body) == {"ranking", "eventId", "rewardActionId"}
        assert body["eventId"] == RANK["eventId"]
        assert body["rewardActionId"] in ("NewsArticle", "EntertainmentArticle")  # never the excluded one
        probs = {x["id"]: x["probability"] for x in body["ranking"]}
        assert set(probs) == {"NewsArticle", "SportsArticle", "EntertainmentArticle"}
        assert probs["SportsArticle"] == 0.0 and sum(probs.values()) == pytest.approx(1.0)
        assert body["ranking"][0]["id"] == body["rewardActionId"]
        r = c.post(f"/personalizer/v1.0/events/{RANK['eventId']}/reward", json={"value": 1.0}, headers=key)
        assert r.status_code == 204 and r.content == b""
        assert app.state.engine.model_version == 1
        # the same request again (a client's retry) gets the same answer; another with that id 409
        assert c.post("/personalizer/v1.0/rank", json=RANK, headers=key).json() == body
        other = {**RANK, "excludedActions": []}
        assert c.post("/personalizer/v1.0/rank", json=other, headers=key).status_code == 409
        # the key as Bearer works too; none or a wrong one: 401
        bearer = {"Authorization": f"Bearer {key['Ocp-Apim-Subscription-Key']}"}
        assert c.post("/personalizer/v1.0/rank", json={**RANK, "eventId": "b1"}, headers=bearer).status_code == 201
        assert c.post("/personalizer/v1.0/rank", json={**RANK, "eventId": "b2"}).status_code == 401
        wrong = c.post("/personalizer/v1.0/rank", json={**RANK, "eventId": "b3"},
                       headers={"Ocp-Apim-Subscription-Key": "nf_wrong"})
        err = wrong.json()["error"]
        assert wrong.status_code == 401 and err["target"] == "Ocp-Apim-Subscription-Key"
        assert err["code"] == "Unauthorized" and err["message"].startswith("Ocp-Apim-Subscription-Key: ")
        # rewards are in [-1, 1] (graded); outside: 400 in Personalizer's body naming the field
        assert c.post("/personalizer/v1.0/events/b1/reward", json={"value": 0.5}, headers=key).status_code == 204
        r = c.post("/personalizer/v1.0/events/b1/reward", json={"value": 1.5}, headers=key)
        assert r.status_code == 400 and r.json()["error"]["target"] == "value"
        assert r.json()["error"]["code"] == "BadRequest" and set(r.json()) == {"error"}


def test_acceptance_deferred_activation(pz):
    cfg, app, key = pz()
    deferred = {**RANK, "eventId": "deferred-1", "deferActivation": True}
    never = {**RANK, "eventId": "deferred-2", "deferActivation": True}
    with TestClient(app) as c:
        assert c.post("/personalizer/v1.0/rank", json=deferred, headers=key).status_code == 201
        assert c.post("/personalizer/v1.0/rank", json=never, headers=key).status_code == 201
        # a reward before the activation is ignored (acknowledged, not logged, not learned)
        r = c.post("/personalizer/v1.0/events/deferred-2/reward", json={"value": 1}, headers=key)
        assert r.status_code == 204 and app.state.engine.model_version == 0
        assert c.post("/personalizer/v1.0/events/deferred-1/activate", headers=key).status_code == 204
        r = c.post("/personalizer/v1.0/events/deferred-1/reward", json={"value": 1}, headers=key)
        assert r.status_code == 204 and app.state.engine.model_version == 1
        assert c.post("/personalizer/v1.0/events/unknown/activate", headers=key).status_code == 404
        metrics = c.get("/metrics", headers={"Authorization": f"Bearer {key['Ocp-Apim-Subscription-Key']}"}).text
        assert "nf_deferred_not_activated 1.0" in metrics and "nf_rewards_ignored_total 1" in metrics
    con = sqlite3.connect(cfg.db)
    assert [e for (e,) in con.execute("SELECT event_id FROM rewards")] == ["deferred-1"]
    con.close()


@pytest.mark.parametrize("prefix, query", [("/personalizer/v1.0", ""), ("/personalizer/v1.1-preview.1", ""),
                                           ("/personalizer/v1.1-preview.3", ""),
                                           ("/personalizer", "?api-version=2022-09-01-preview")])
def test_acceptance_multislot_rank_reward_activate(pz, prefix, query):
    cfg, app, key = pz(n_slots=2)
    with TestClient(app) as c:
        # per-slot exclusions honoured: the main article is never the sports one
        for i in range(20):
            r = c.post(f"{prefix}/multislot/rank{query}", json={**MULTISLOT, "eventId": f"x{i}"}, headers=key)
            assert r.status_code == 201, r.text
            assert r.json()["slots"][0]["rewardActionId"] != "SportsArticle"
        body = copy.deepcopy(MULTISLOT)
        body["deferActivation"] = True
        r = c.post(f"{prefix}/multislot/rank{query}", json=body, headers=key)
        assert r.status_code == 201, r.text
        ans = r.json()
        assert set(ans) == {"slots", "eventId"} and ans["eventId"] == MULTISLOT["eventId"]
        assert [s["id"] for s in ans["slots"]] == ["Main Article", "Side Bar"]
        assert len({s["rewardActionId"] for s in ans["slots"]}) == 2
        event = ans["eventId"]
        assert c.post(f"{prefix}/multislot/events/{event}/activate{query}", headers=key).status_code == 204
        # the quickstart's reward body: one value per slot (a slot left out would get 0)
        reward = {"reward": [{"slotId": "Main Article", "value": 1}, {"slotId": "Side Bar", "value": 0}]}
        r = c.post(f"{prefix}/multislot/events/{event}/reward{query}", json=reward, headers=key)
        assert r.status_code == 204 and app.state.engine.model_version == 1
        bad = c.post(f"{prefix}/multislot/events/{event}/reward{query}",
                     json={"reward": [{"slotId": "Footer", "value": 1}]}, headers=key)
        assert bad.status_code == 400 and bad.json()["error"]["target"] == "reward[0]"
        # the same service ranks for one slot too, and learns its reward
        r = c.post(f"{prefix}/rank{query}", json={**RANK, "eventId": "single"}, headers=key)
        assert r.status_code == 201 and r.json()["rewardActionId"] != "SportsArticle"
        assert c.post(f"{prefix}/events/single/reward{query}", json={"value": 0.5}, headers=key).status_code == 204
        assert app.state.engine.model_version == 2
        # more slots than n_slots: refused naming them
        three = {**MULTISLOT, "eventId": "three",
                 "slots": [*MULTISLOT["slots"], {"id": "Footer", "baselineAction": "NewsArticle"}]}
        r = c.post(f"{prefix}/multislot/rank{query}", json=three, headers=key)
        assert r.status_code == 400 and r.json()["error"]["target"] == "slots", r.text
    con = sqlite3.connect(cfg.db)
    assert con.execute("SELECT slots, reward FROM rewards ORDER BY seq").fetchall() == [("1,0", 0.5), (None, 0.5)]
    con.close()


def test_errors_name_the_field_in_personalizers_words(pz):
    cfg, app, key = pz(n_slots=2)
    with TestClient(app) as c:
        bad = copy.deepcopy(MULTISLOT)
        bad["slots"][0]["baselineAction"] = "Nowhere"
        r = c.post("/personalizer/multislot/rank?api-version=2022-09-01-preview", json=bad, headers=key)
        err = r.json()["error"]
        assert r.status_code == 400 and err["target"] == "slots[0].baselineAction", r.text
        assert err["message"].startswith("slots[0].baselineAction: ") and "Nowhere" in err["message"]
        bad = copy.deepcopy(MULTISLOT)
        bad["slots"][1]["excludedActions"] = [7]
        r = c.post("/personalizer/v1.0/multislot/rank", json=bad, headers=key)
        assert r.status_code == 400 and r.json()["error"]["target"] == "slots[1].excludedActions[0]", r.text
        r = c.post("/personalizer/v1.0/rank", json={**RANK, "contextFeatures": "x"}, headers=key)
        assert r.json()["error"]["target"] == "contextFeatures"
        for extra in ("unknownField", ""):  # a field Personalizer does not have, even one named ""
            r = c.post("/personalizer/v1.0/rank", json={**RANK, extra: 1}, headers=key)
            err = r.json()["error"]
            assert r.status_code == 400 and err["target"] == (extra or '[""]'), r.text
            assert err["message"] == f"{err['target']}: Extra inputs are not permitted", r.text
        r = c.post("/personalizer/v1.0/rank", content=b"{", headers=key)
        assert r.status_code == 400 and "error" in r.json()
        # an unknown or missing api-version
        for q in ("?api-version=2099-01-01", ""):
            r = c.post(f"/personalizer/rank{q}", json=RANK, headers=key)
            err = r.json()["error"]
            assert r.status_code == 400 and err["target"] == "api-version" and "2022-09-01-preview" in err["message"]
        # our own routes keep their shape
        bearer = {"Authorization": f"Bearer {key['Ocp-Apim-Subscription-Key']}"}
        r = c.post("/reward", json={"event_id": "x", "reward": 2}, headers=bearer)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "reward"]


def test_graded_rewards_are_refused_where_flips_are_corrected(tmp_path):
    cfg = ServiceConfig(db=tmp_path / "f.db", learner="SquareCB", action_features=True, rho0=0.1, rho1=0.1,
                        params={"seed": 0}, synchronous="NORMAL")
    app = create_app(cfg)
    key = {"Ocp-Apim-Subscription-Key": create_key(cfg.db, "rank")}
    with TestClient(app) as c:
        assert c.post("/personalizer/v1.0/rank", json=RANK, headers=key).status_code == 201
        r = c.post(f"/personalizer/v1.0/events/{RANK['eventId']}/reward", json={"value": 0.5}, headers=key)
        err = r.json()["error"]
        assert r.status_code == 400 and err["target"] == "value" and "flipped clicks" in err["message"]
        r = c.post(f"/personalizer/v1.0/events/{RANK['eventId']}/reward", json={"value": 1}, headers=key)
        assert r.status_code == 204 and app.state.engine.model_version == 1


@pytest.mark.parametrize("method, path", [
    ("GET", "configurations/service"), ("PUT", "configurations/service"), ("GET", "configurations/policy"),
    ("POST", "configurations/applyFromEvaluation"), ("GET", "evaluations"), ("POST", "evaluations"),
    ("GET", "evaluations/abc"), ("DELETE", "evaluations/abc"), ("GET", "logs/properties"), ("DELETE", "logs"),
    ("GET", "model"), ("PUT", "model"), ("GET", "model/properties"), ("DELETE", "model"),
])
def test_unsupported_routes_answer_501_with_a_clear_message(pz, method, path):
    cfg, app, key = pz()
    with TestClient(app) as c:
        r = c.request(method, f"/personalizer/v1.0/{path}", headers=key)
        err = r.json()["error"]
        assert r.status_code == 501 and err["code"] == "NotImplemented"
        assert "not supported" in err["message"] and err["target"] == "path"
        r = c.request(method, f"/personalizer/{path}?api-version=2022-09-01-preview", headers=key)
        assert r.status_code == 501
        metrics = c.get("/metrics", headers={"Authorization": f"Bearer {key['Ocp-Apim-Subscription-Key']}"}).text
        assert f"/personalizer/v1.0/{path}\"" not in metrics  # labelled by the template, never the raw path
        assert "/personalizer/{rest:path}" in metrics


def test_the_personalizer_routes_exist_only_on_an_action_feature_service(tmp_path):
    cfg = ServiceConfig(db=tmp_path / "n.db", learner="RCNBF", n_classes=3, n_features=4)
    app = create_app(cfg)
    key = {"Authorization": f"Bearer {create_key(cfg.db, 'rank')}"}
    with TestClient(app) as c:
        assert c.post("/personalizer/v1.0/rank", json=RANK, headers=key).status_code == 404
        assert c.post("/rank/multislot", json={}, headers=key).status_code == 404
        paths = c.get("/openapi.json").json()["paths"]
        assert not any(p.startswith("/personalizer") or p.startswith("/events") for p in paths)


def test_thousands_of_actions_are_refused_before_parsing_in_personalizers_error_shape(pz, monkeypatch):
    """A 10,000-action rank on a Personalizer path is refused by the size check (the body's structure is
    never validated) and answered in Personalizer's error body, naming the field in its words."""
    import json

    from noisyfeedback.service.routers import personalizer as pz_routes

    parsed = []
    real = pz_routes.parse_body
    monkeypatch.setattr(pz_routes, "parse_body", lambda *a, **k: (parsed.append(1), real(*a, **k))[1])
    body = json.dumps({**RANK, "excludedActions": [], "eventId": "big",
                       "actions": [{"id": f"a{j}", "features": [{"x": j}]} for j in range(10_000)]})
    cfg, app, key = pz()
    with TestClient(app) as c:
        for path in ("/personalizer/v1.0/rank", "/personalizer/rank?api-version=2022-09-01-preview"):
            r = c.post(path, content=body, headers={**key, "content-type": "application/json"})
            err = r.json()["error"]
            assert r.status_code == 400 and set(err) == {"code", "message", "target"}, r.text
            assert err["target"] == "actions" and "10000 actions" in err["message"] and "at most 50" in err["message"]
        assert not parsed
        r = c.post("/personalizer/v1.0/rank", json=RANK, headers=key)  # a valid one is parsed and served
        assert r.status_code == 201 and parsed, r.text
