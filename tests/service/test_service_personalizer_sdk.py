"""Microsoft's Personalizer SDKs, unchanged, against a live ``serve --action-features`` (one server process
for the whole file): the current SDK (``azure-ai-personalizer``, ``/personalizer/...?api-version=``) and the
legacy one (``azure-cognitiveservices-personalizer``, ``/personalizer/v1.0``) complete rank → reward (1 and 0.5)
→ deferred activate, the current one multi-slot rank → multi-slot reward on the same service; a bad body
raises the SDK's exception with the field in its message. Then graded rewards learn (in-process)."""

import socket
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
pz_current = pytest.importorskip("azure.ai.personalizer")
pytest.importorskip("azure.cognitiveservices.personalizer")

from azure.cognitiveservices.personalizer import PersonalizerClient as LegacyClient  # noqa: E402
from azure.cognitiveservices.personalizer.models import ErrorResponseException, RankableAction, RankRequest  # noqa: E402
from azure.core.credentials import AzureKeyCredential  # noqa: E402
from azure.core.exceptions import HttpResponseError  # noqa: E402
from msrest.authentication import CognitiveServicesCredentials  # noqa: E402
from msrest.exceptions import HttpOperationError  # noqa: E402

from noisyfeedback.service.auth import create_key  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

ACTIONS = [{"id": "NewsArticle", "features": [{"type": "News"}]},
           {"id": "SportsArticle", "features": [{"type": "Sports"}]},
           {"id": "EntertainmentArticle", "features": [{"type": "Entertainment"}]}]
CONTEXT = [{"timeOfDay": "Morning"}, {"user": {"profileType": "AnonymousUser"}}]
SLOTS = [{"id": "Main Article", "baselineAction": "NewsArticle", "excludedActions": ["SportsArticle"]},
         {"id": "Side Bar", "baselineAction": "SportsArticle"}]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("pzsdk") / "svc.db"
    key = create_key(db, "rank")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "noisyfeedback.cli", "serve", "--db", str(db), "--port", str(port),
                             "--learner", "SquareCB", "--action-features", "--param", "seed=0", "--param",
                             "n_slots=2", "--sync", "NORMAL"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited: {proc.stderr.read().decode()}")
            try:
                if httpx.get(url + "/health", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.1)
        yield url, key, db
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def _model_version(url: str, key: str) -> int:
    return httpx.get(url + "/health", timeout=5).json()["model_version"]


def test_both_sdks_rank_reward_activate_and_multislot(server):
    url, key, db = server
    current = pz_current.PersonalizerClient(url, AzureKeyCredential(key))
    legacy = LegacyClient(url, CognitiveServicesCredentials(key))
    v0 = _model_version(url, key)

    # the current SDK: rank -> reward 1; rank -> reward 0.5; deferred -> activate -> reward
    r = current.rank({"contextFeatures": CONTEXT, "actions": ACTIONS, "eventId": "cur-1"})
    assert r["eventId"] == "cur-1" and r["rewardActionId"] in {a["id"] for a in ACTIONS}
    assert abs(sum(x["probability"] for x in r["ranking"]) - 1) < 1e-9
    current.reward("cur-1", {"value": 1.0})
    r = current.rank({"contextFeatures": CONTEXT, "actions": ACTIONS, "excludedActions": ["SportsArticle"]})
    assert r["rewardActionId"] != "SportsArticle"
    current.reward(r["eventId"], {"value": 0.5})
    current.rank({"contextFeatures": CONTEXT, "actions": ACTIONS, "eventId": "cur-d", "deferActivation": True})
    current.activate("cur-d")
    current.reward("cur-d", {"value": 0.5})
    # multi-slot on the same service: per-slot exclusions honoured, rewards per slot (graded)
    m = current.rank_multi_slot({"contextFeatures": CONTEXT, "actions": ACTIONS, "slots": SLOTS, "eventId": "cur-m"})
    assert [s["id"] for s in m["slots"]] == ["Main Article", "Side Bar"]
    assert m["slots"][0]["rewardActionId"] != "SportsArticle"
    current.reward_multi_slot("cur-m", {"reward": [{"slotId": "Main Article", "value": 1.0},
                                                   {"slotId": "Side Bar", "value": 0.5}]})
    current.rank_multi_slot({"contextFeatures": CONTEXT, "actions": ACTIONS, "slots": SLOTS, "eventId": "cur-md",
                             "deferActivation": True})
    current.activate_multi_slot("cur-md")
    current.reward_multi_slot("cur-md", {"reward": [{"slotId": "Side Bar", "value": 1.0}]})

    # the legacy SDK (v1.0, one slot): rank -> reward 1 and 0.5; deferred -> activate -> reward
    actions = [RankableAction(id=a["id"], features=a["features"]) for a in ACTIONS]
    lr = legacy.rank(RankRequest(actions=actions, context_features=CONTEXT, event_id="leg-1"))
    assert lr.event_id == "leg-1" and lr.reward_action_id in {a["id"] for a in ACTIONS}
    legacy.events.reward("leg-1", 1.0)
    lr = legacy.rank(RankRequest(actions=actions, context_features=CONTEXT, event_id="leg-2"))
    legacy.events.reward("leg-2", 0.5)
    legacy.rank(RankRequest(actions=actions, context_features=CONTEXT, event_id="leg-d", defer_activation=True))
    legacy.events.activate("leg-d")
    legacy.events.reward("leg-d", 1.0)

    # every reward learned (a model version each), graded ones as they are
    deadline = time.monotonic() + 10
    while _model_version(url, key) < v0 + 8 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _model_version(url, key) == v0 + 8
    con = sqlite3.connect(db)
    got = dict(con.execute("SELECT event_id, COALESCE(slots, reward) FROM rewards"))
    con.close()
    assert got["cur-1"] == 1.0 and got["cur-d"] == 0.5 and got["leg-2"] == 0.5
    assert got["cur-m"] == "1,0.5" and got["cur-md"] == "0,1"

    # a bad body: each SDK's exception names the field (Personalizer's error body)
    bad_slots = [{"id": "Main Article", "baselineAction": "Nowhere"}]
    with pytest.raises(HttpResponseError) as err:
        current.rank_multi_slot({"contextFeatures": CONTEXT, "actions": ACTIONS, "slots": bad_slots})
    assert err.value.status_code == 400 and "slots[0].baselineAction" in str(err.value)
    assert "Nowhere" in str(err.value)
    with pytest.raises(HttpResponseError) as err:
        current.reward("cur-1", {"value": 2.0})
    assert "value" in err.value.message and "BadRequest" in str(err.value)
    with pytest.raises(ErrorResponseException) as lerr:  # the legacy SDK parses the error body of rank
        legacy.rank(RankRequest(actions=actions, context_features=CONTEXT, event_id="bad id"))
    assert "eventId:" in str(lerr.value) and lerr.value.error.error.target == "eventId"
    with pytest.raises(HttpOperationError) as herr:  # ... and not of reward: the body is there all the same
        legacy.events.reward("leg-1", 7.0)
    assert herr.value.response.json()["error"]["target"] == "value"
    current.close()


@pytest.mark.slow
def test_graded_rewards_learn_the_good_kind_on_new_action_ids(tmp_path):
    """Rewards 0.8 for the good kind and 0.3 for the others (never 0 or 1), 2,000 events through the
    Personalizer routes; then on actions with ids never seen, the top-ranked one is of the good kind in at
    least 80 % of requests."""
    import asyncio

    from noisyfeedback.service import ServiceConfig, create_app

    cfg = ServiceConfig(db=tmp_path / "g.db", learner="SquareCB", action_features=True, params={"seed": 3},
                        synchronous="NORMAL")
    app = create_app(cfg)
    key = {"Ocp-Apim-Subscription-Key": create_key(cfg.db, "rank")}
    rng = np.random.default_rng(0)
    kinds = ("good", "plain", "other", "more")

    def actions(prefix, n=4):
        ks = rng.permutation(kinds)[:n]
        return [{"id": f"{prefix}-{j}", "features": [{"kind": str(k)}, {"price": float(rng.uniform())}]}
                for j, k in enumerate(ks)], ks

    q = "?api-version=2022-09-01-preview"

    async def drive():  # in process, on one event loop (the app's lifespan, no client threads)
        hits = 0
        async with app.router.lifespan_context(app):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
                for t in range(2000):
                    acts, ks = actions(f"a{t}")
                    r = (await c.post(f"/personalizer/rank{q}", json={
                        "contextFeatures": [{"u": {"x": float(rng.normal())}}], "actions": acts}, headers=key)).json()
                    kind = ks[int(r["rewardActionId"].rsplit("-", 1)[1])]
                    resp = await c.post(f"/personalizer/events/{r['eventId']}/reward{q}",
                                        json={"value": 0.8 if kind == "good" else 0.3}, headers=key)
                    assert resp.status_code == 204
                assert app.state.engine.model_version == 2000
                for t in range(200):
                    acts, ks = actions(f"new{t}")
                    r = (await c.post(f"/personalizer/rank{q}", json={
                        "contextFeatures": [{"u": {"x": float(rng.normal())}}], "actions": acts}, headers=key)).json()
                    best = max(r["ranking"], key=lambda x: x["probability"])["id"]  # the top-ranked (most probable)
                    hits += ks[int(best.rsplit("-", 1)[1])] == "good"
        return hits

    hits = asyncio.run(drive())
    assert hits >= 160, hits
