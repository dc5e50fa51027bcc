"""The decision service in-process (FastAPI TestClient): keys and roles, the table of bad requests
(each 422 naming its field, nothing written), rewards (late, duplicate, conflicting, unknown), apprentice
mode, metrics, export, off-policy evaluation."""

import sqlite3
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from noisyfeedback.service import ServiceConfig, create_app  # noqa: E402
from noisyfeedback.service.auth import create_key  # noqa: E402

D, K = 6, 4


@pytest.fixture
def svc(tmp_path):
    """(client, rank headers, admin headers, app) of a fresh RCNBF service."""
    cfg = ServiceConfig(db=tmp_path / "s.db", learner="RCNBF", n_classes=K, n_features=D,
                        params={"gamma": 0.2, "seed": 0}, rho0=0.1, rho1=0.1, max_body=4096,
                        synchronous="NORMAL")
    app = create_app(cfg)
    rank = {"Authorization": f"Bearer {create_key(cfg.db, 'rank')}"}
    admin = {"Authorization": f"Bearer {create_key(cfg.db, 'admin')}"}
    with TestClient(app) as client:
        yield client, rank, admin, app


def counts(app):
    con = sqlite3.connect(app.state.engine.cfg.db)
    out = tuple(con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("events", "rewards"))
    con.close()
    return out


def test_acceptance_keys_and_roles(svc):
    client, rank, admin, app = svc
    ctx = {"context": [1.0] * D}
    assert client.post("/rank", json=ctx).status_code == 401
    assert client.post("/rank", json=ctx, headers={"Authorization": "Bearer nf_wrong"}).status_code == 401
    assert client.post("/rank", json=ctx, headers={"Authorization": "Basic abc"}).status_code == 401
    assert client.get("/metrics").status_code == 401
    assert client.post("/snapshot", headers=rank).status_code == 403
    assert client.get("/policy/evaluate", params={"candidate": "deployed"}, headers=rank).status_code == 403
    assert client.post("/mode", json={"mode": "apprentice"}, headers=rank).status_code == 403
    assert client.post("/rank", json=ctx, headers=rank).status_code == 200
    assert client.post("/snapshot", headers=admin).status_code == 200
    assert client.get("/health").status_code == 200
    con = sqlite3.connect(app.state.engine.cfg.db)
    stored = [r[0] for r in con.execute("SELECT hash FROM api_keys")]
    assert all(len(h) == 64 and not h.startswith("nf_") for h in stored) and len(stored) == 2
    assert rank["Authorization"].split()[1] not in open(app.state.engine.cfg.db, "rb").read().decode("latin-1")


def test_keys_create_cli_prints_the_key_last(tmp_path):
    from typer.testing import CliRunner

    from noisyfeedback.cli import app
    from noisyfeedback.service.auth import hash_key
    from noisyfeedback.service.storage import SQLiteStorage

    db = tmp_path / "k.db"
    res = CliRunner().invoke(app, ["keys", "create", "--db", str(db), "--role", "admin"])
    assert res.exit_code == 0, res.output
    key = res.output.strip().splitlines()[-1]
    assert SQLiteStorage(db).key_role(hash_key(key)) == "admin"
    bad = CliRunner().invoke(app, ["keys", "create", "--db", str(db), "--role", "root"])
    assert bad.exit_code != 0


GOOD = [0.5] * D
BAD_REQUESTS = [  # (route, body (dict, or raw bytes), the field that must be named)
    ("/rank", {"context": [0.5] * (D - 1)}, "context"),
    ("/rank", b'{"context": [0.5, NaN, 0.5, 0.5, 0.5, 0.5]}', "context"),
    ("/rank", b'{"context": [0.5, Infinity, 0.5, 0.5, 0.5, 0.5]}', "context"),
    ("/rank", {"context": [0.5, "a", 0.5, 0.5, 0.5, 0.5]}, "context"),
    ("/rank", {"context": GOOD, "colour": "red"}, "colour"),
    ("/rank", {}, "context"),
    ("/rank", {"context": []}, "context"),
    ("/rank", {"context": {"6": 1.0}}, "context"),
    ("/rank", {"context": {"x": 1.0}}, "context"),
    ("/rank", {"context": GOOD, "allowed_actions": [K]}, "allowed_actions"),
    ("/rank", {"context": GOOD, "allowed_actions": []}, "allowed_actions"),
    ("/rank", {"context": GOOD, "event_id": "a b"}, "event_id"),
    ("/rank", {"context": GOOD, "default_action": K + 1}, "default_action"),
    ("/rank", b'{"context": [0.5, ', "body"),
    ("/rank", b'[0.5, 0.5]', "body"),
    ("/rank", {"context": GOOD, "pad": "x" * 5000}, "body"),
    ("/reward", {"event_id": "EV", "reward": 1.5}, "reward"),
    ("/reward", {"event_id": "EV", "reward": -0.1}, "reward"),
    ("/reward", {"event_id": "EV", "reward": 0.5}, "reward"),
    ("/reward", b'{"event_id": "EV", "reward": NaN}', "reward"),
    ("/reward", {"reward": 1}, "event_id"),
    ("/reward", {"event_id": "EV", "reward": "1"}, "reward"),
    ("/reward", {"event_id": "EV", "reward": 1, "user": "x"}, "user"),
    ("/reward", {"event_id": "EV", "reward": 1, "timestamp": "noon"}, "timestamp"),
    ("/reward", {"event_id": "", "reward": 1}, "event_id"),
]


def test_acceptance_bad_requests_get_422_naming_the_field_and_change_nothing(svc):
    client, rank, admin, app = svc
    assert len(BAD_REQUESTS) >= 15
    ev = client.post("/rank", json={"context": GOOD, "event_id": "EV"}, headers=rank).json()
    other = client.post("/rank", json={"context": [1.0, 0, 0, 2.0, 0, 0]}, headers=rank).json()
    client.post("/reward", json={"event_id": other["event_id"], "reward": 1}, headers=rank)
    engine = app.state.engine
    before = (counts(app), engine.learner.W_.copy(), engine.learner.rng_.bit_generator.state, engine.model_version)
    assert before[1].any()  # the model has learned something: a change would show
    for route, body, field in BAD_REQUESTS:
        if isinstance(body, bytes):
            r = client.post(route, content=body, headers={**rank, "Content-Type": "application/json"})
        else:
            r = client.post(route, json=body, headers=rank)
        assert r.status_code == 422, (route, body, r.text)
        locs = [str(p) for e in r.json()["detail"] for p in e["loc"]]
        assert field in locs, (route, body, r.json())
        assert counts(app) == before[0]
        np.testing.assert_array_equal(engine.learner.W_, before[1])
        assert engine.learner.rng_.bit_generator.state == before[2]
        assert engine.model_version == before[3]
    assert ev["event_id"] == "EV"
    # and the valid reward for EV is still accepted afterwards
    assert client.post("/reward", json={"event_id": "EV", "reward": 0}, headers=rank).json()["status"] == "accepted"


def test_rewards_late_out_of_order_duplicate_conflict_unknown(svc):
    client, rank, admin, app = svc
    rng = np.random.default_rng(0)
    ids = [client.post("/rank", json={"context": rng.normal(size=D).tolist()}, headers=rank).json()["event_id"]
           for _ in range(6)]
    for e in reversed(ids):  # late and out of order
        r = client.post("/reward", json={"event_id": e, "reward": 1, "timestamp": 1.5e9}, headers=rank)
        assert r.status_code == 200 and r.json()["status"] == "accepted"
    W = app.state.engine.learner.W_.copy()
    r = client.post("/reward", json={"event_id": ids[0], "reward": 1}, headers=rank)
    assert r.status_code == 200 and r.json()["status"] == "duplicate"
    r = client.post("/reward", json={"event_id": ids[0], "reward": 0}, headers=rank)
    assert r.status_code == 409 and r.json()["field"] == "reward"
    assert client.post("/reward", json={"event_id": "nope", "reward": 1}, headers=rank).status_code == 404
    assert client.post("/rank", json={"context": GOOD, "event_id": "mine"}, headers=rank).status_code == 200
    r = client.post("/rank", json={"context": GOOD, "event_id": "mine"}, headers=rank)
    assert r.status_code == 409 and r.json()["field"] == "event_id"
    assert ids[0] == "ev~1"  # generated ids hold '~', which chosen ids may not: they never collide
    np.testing.assert_array_equal(app.state.engine.learner.W_, W)
    assert counts(app) == (7, 6) and app.state.engine.model_version == 6
    con = sqlite3.connect(app.state.engine.cfg.db)
    assert [r[0] for r in con.execute("SELECT event_id FROM rewards ORDER BY seq")] == ids[::-1]


def test_rank_answers_the_distribution_and_respects_allowed_actions(svc):
    client, rank, admin, app = svc
    x = np.array([[1.0, 0, 0, 2.0, 0, 0]])
    body = client.post("/rank", json={"context": {"0": 1.0, "3": 2.0}}, headers=rank).json()
    dist = np.array(body["distribution"])
    np.testing.assert_allclose(dist, app.state.engine.learner.action_probabilities(x)[0])
    assert dist.sum() == pytest.approx(1) and body["probability"] == dist[body["action"]]
    seen = set()
    for _ in range(40):
        b = client.post("/rank", json={"context": x[0].tolist(), "allowed_actions": [1, 3]}, headers=rank).json()
        seen.add(b["action"])
        assert b["distribution"][0] == 0 and b["distribution"][2] == 0
        assert sum(b["distribution"]) == pytest.approx(1)
    assert seen == {1, 3}


def test_concurrent_writes_share_a_commit_and_a_lone_client_never_waits(tmp_path, monkeypatch):
    """Group commit: the writer waits ``commit_delay`` only when other writes are in flight as it takes a
    batch, and those join its transaction; a client that waits for each answer is never delayed."""
    import asyncio
    import time

    import httpx

    import noisyfeedback.service.writer as writer_module

    cfg = ServiceConfig(db=tmp_path / "g.db", learner="RCNBF", n_classes=K, n_features=D, params={"seed": 0},
                        synchronous="NORMAL", commit_delay=0.05)
    app = create_app(cfg)
    key = {"Authorization": f"Bearer {create_key(cfg.db, 'rank')}"}
    batches, waits = [], []
    storage = app.state.engine.storage
    apply_batch = storage.apply_batch

    def slow_apply(ops):  # a slow commit, so that the next requests' writes are in flight meanwhile
        batches.append(sum(op[0] == "event" for op in ops))  # (the key's "touch" may come with the first)
        time.sleep(0.02)
        return apply_batch(ops)

    monkeypatch.setattr(storage, "apply_batch", slow_apply)
    real_sleep = time.sleep
    monkeypatch.setattr(writer_module, "time", type("T", (), {"sleep": staticmethod(
        lambda s: (waits.append(s), real_sleep(s)))}))
    body = {"context": [0.5] * D}

    async def main():
        async with app.router.lifespan_context(app):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
                for _ in range(4):  # one at a time
                    assert (await c.post("/rank", json=body, headers=key)).status_code == 200
                lone = (list(batches), list(waits))

                async def later(k):  # arriving 2 ms apart, each in a loop iteration (and a hand-over) of its own
                    await asyncio.sleep(0.002 * k)
                    return (await c.post("/rank", json=body, headers=key)).status_code

                statuses = await asyncio.gather(*(later(k) for k in range(8)))
                return lone, statuses

    (lone_batches, lone_waits), statuses = asyncio.run(main())
    assert lone_batches == [1, 1, 1, 1] and lone_waits == []
    assert statuses == [200] * 8
    together = batches[4:]
    assert sum(together) == 8 and len(together) < 8 and max(together) > 1  # fewer transactions than writes
    assert waits and all(w == 0.05 for w in waits)
    assert counts(app) == (12, 0)
    for bad in (-0.001, 0.5, "1ms"):
        with pytest.raises(ValueError, match=r"commit_delay must be in \[0, 0.1\] seconds"):
            ServiceConfig(db=tmp_path / "h.db", learner="RCNBF", n_classes=K, n_features=D, commit_delay=bad).check()


@pytest.mark.parametrize("telemetry", [False, True])
def test_hot_routes_skip_the_apps_middleware_unless_telemetry_traces_them(tmp_path, monkeypatch, telemetry):
    """/rank and /reward are answered by the request limits' direct routes, past Starlette's and FastAPI's own
    middleware; the other routes go through the whole app, and so does every request while FastAPI's
    telemetry is on (so that it traces them). Answers and metrics are the same either way."""
    import noisyfeedback.service.app as app_module

    if telemetry:  # as with providers configured when the app is built
        monkeypatch.setattr(app_module, "_telemetry", lambda: None)
    cfg = ServiceConfig(db=tmp_path / "t.db", learner="RCNBF", n_classes=K, n_features=D, params={"seed": 0},
                        synchronous="NORMAL")
    app = create_app(cfg)
    through = []
    real = app.limits.app  # (the app's own stack: what the limits hand on)

    async def spy(scope, receive, send):
        through.append(scope["path"])
        await real(scope, receive, send)

    monkeypatch.setattr(app.limits, "app", spy)
    key = {"Authorization": f"Bearer {create_key(cfg.db, 'rank')}"}
    with TestClient(app) as client:
        ranked = client.post("/rank", json={"context": [0.5] * D}, headers=key)
        rewarded = client.post("/reward", json={"event_id": ranked.json()["event_id"], "reward": 1}, headers=key)
        bad = client.post("/rank", json={"context": [0.5]}, headers=key)
        health = client.get("/health")
        metrics = client.get("/metrics", headers=key).text
    assert (ranked.status_code, rewarded.status_code, bad.status_code, health.status_code) == (200, 200, 422, 200)
    assert through == (["/rank", "/reward", "/rank", "/health", "/metrics"] if telemetry else ["/health", "/metrics"])
    assert 'route="/rank",status="200"} 1' in metrics and 'route="/rank",status="422"} 1' in metrics


def test_apprentice_mode_returns_the_default_and_reports_agreement(svc):
    client, rank, admin, app = svc
    assert client.post("/mode", json={"mode": "apprentice"}, headers=admin).json() == {"mode": "apprentice"}
    r = client.post("/rank", json={"context": GOOD}, headers=rank)
    assert r.status_code == 422 and "default_action" in str(r.json())
    rng = np.random.default_rng(3)
    W = rng.normal(size=(K, D))
    for _ in range(200):
        x = rng.normal(size=D)
        label = int(np.argmax(W @ x))
        b = client.post("/rank", json={"context": x.tolist(), "default_action": label}, headers=rank).json()
        assert b["action"] == label and b["probability"] == 1.0 and b["mode"] == "apprentice"
        client.post("/reward", json={"event_id": b["event_id"], "reward": 1}, headers=rank)
    rep = client.get("/apprentice", headers=rank).json()
    assert rep["events"] == 200 and rep["rewards"] == 200 and rep["reward_default"] == 1.0
    assert 0.5 < rep["agreement"] <= 1.0  # the learner imitates the application's policy
    assert 0 < rep["reward_learned_lower"] <= rep["reward_agreeing"] == 1.0
    metrics = client.get("/metrics", headers=rank).text
    assert "nf_apprentice_agreement " in metrics and "nf_apprentice_mode 1" in metrics
    client.post("/mode", json={"mode": "online"}, headers=admin)
    b = client.post("/rank", json={"context": GOOD}, headers=rank).json()
    assert b["mode"] == "online" and b["probability"] < 1


def test_metrics_prometheus_text(svc):
    client, rank, admin, app = svc
    for k in range(10):
        e = client.post("/rank", json={"context": GOOD}, headers=rank).json()["event_id"]
        client.post("/reward", json={"event_id": e, "reward": int(k < 3)}, headers=rank)
    text = client.get("/metrics", headers=rank).text
    lines = dict(line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#")
                 and "{" not in line)
    assert float(lines["nf_events_total"]) == 10 and float(lines["nf_rewards_total"]) == 10
    assert float(lines["nf_model_updates_total"]) == 10
    assert float(lines["nf_click_rate"]) == pytest.approx((0.3 - 0.1) / 0.8)
    assert float(lines["nf_click_rate_lower"]) < float(lines["nf_click_rate"]) < float(lines["nf_click_rate_upper"])
    assert 'nf_requests_total{route="/rank",status="200"} 10' in text
    assert 'nf_request_duration_seconds_count{route="/reward"} 10' in text


def test_export_parquet_and_vw(svc, tmp_path):
    import pandas as pd

    from noisyfeedback.service.export import export_parquet, export_vw

    client, rank, admin, app = svc
    ids = [client.post("/rank", json={"context": [0.0, 1.5, 0, 0, 0, 2.0]}, headers=rank).json() for _ in range(5)]
    for b in ids[:3]:
        client.post("/reward", json={"event_id": b["event_id"], "reward": 1}, headers=rank)
    db = app.state.engine.cfg.db
    df = pd.read_parquet(export_parquet(db, tmp_path / "log.parquet"))
    assert len(df) == 5 and df["reward"].notna().sum() == 3
    assert list(df["context"].iloc[0]) == [0.0, 1.5, 0, 0, 0, 2.0]
    lines = export_vw(db, tmp_path / "log.vw").read_text().splitlines()
    assert len(lines) == 3
    b = ids[0]
    assert lines[0] == f"{b['action'] + 1}:-1.0:{b['probability']!r} | 1:1.5 5:2.0"
    from typer.testing import CliRunner

    from noisyfeedback.cli import app as cli

    res = CliRunner().invoke(cli, ["export-log", "--db", str(db), "-o", str(tmp_path / "cli.vw")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "cli.vw").read_text().splitlines() == lines


def test_set_learner_service_ranks_sets(tmp_path):
    cfg = ServiceConfig(db=tmp_path / "m.db", learner="MCDBF", n_classes=6, n_features=D,
                        params={"m": 2, "gamma": 0.3, "seed": 1})
    app = create_app(cfg)
    h = {"Authorization": f"Bearer {create_key(cfg.db, 'rank')}"}
    with TestClient(app) as client:
        b = client.post("/rank", json={"context": GOOD}, headers=h).json()
        assert len(b["action"]) == 2 and sum(b["distribution"]) == pytest.approx(2)
        assert client.post("/reward", json={"event_id": b["event_id"], "reward": 1}, headers=h).status_code == 200
        assert app.state.engine.model_version == 1


def test_policy_evaluate_needs_the_ope_module(svc, monkeypatch):
    client, rank, admin, app = svc
    e = client.post("/rank", json={"context": GOOD}, headers=rank).json()["event_id"]
    client.post("/reward", json={"event_id": e, "reward": 1}, headers=rank)
    monkeypatch.setitem(sys.modules, "noisyfeedback.ope", None)  # as if the module were absent
    r = client.get("/policy/evaluate", params={"candidate": "deployed"}, headers=admin)
    assert r.status_code == 501 and "noisyfeedback.ope" in r.json()["detail"]


def test_policy_evaluate_calls_ope_per_the_contract(svc, monkeypatch):
    """The call into nf.ope.evaluate, checked against a stand-in with the contract's exact signature."""
    import dataclasses
    import types

    client, rank, admin, app = svc
    for k in range(20):
        b = client.post("/rank", json={"context": [float(k % 3)] * D}, headers=rank).json()
        client.post("/reward", json={"event_id": b["event_id"], "reward": k % 2}, headers=rank)
    calls = []

    @dataclasses.dataclass(frozen=True)
    class Estimate:
        value: float
        lower: float
        upper: float
        estimator: str
        n: int
        interval: str

    def evaluate(policy, X, actions, rewards, propensities, estimator="ips", rho0=0.0, rho1=0.0, alpha=0.05,
                 seed=None):
        calls.append(dict(policy=policy, X=X, actions=actions, rewards=rewards, propensities=propensities,
                          estimator=estimator, rho0=rho0, rho1=rho1, alpha=alpha))
        return Estimate(0.5, 0.4, 0.6, estimator, len(actions), "normal")

    try:
        import noisyfeedback.ope as ope
        monkeypatch.setattr(ope, "evaluate", evaluate)
    except ImportError:
        monkeypatch.setitem(sys.modules, "noisyfeedback.ope", types.SimpleNamespace(evaluate=evaluate))
    r = client.get("/policy/evaluate", params={"candidate": "Banditron", "param": "gamma=0.3", "estimator": "dr",
                                               "alpha": 0.1}, headers=admin)
    assert r.status_code == 200, r.text
    assert r.json() == {"value": 0.5, "lower": 0.4, "upper": 0.6, "estimator": "dr", "n": 20, "interval": "normal",
                        "candidate": "Banditron"}
    c = calls[0]
    assert c["policy"].shape == (20, K) and np.allclose(c["policy"].sum(axis=1), 1)
    assert c["X"].shape == (20, D) and c["actions"].dtype == np.int64 and c["rewards"].tolist() == [0, 1] * 10
    assert ((c["propensities"] > 0) & (c["propensities"] <= 1)).all()
    assert (c["estimator"], c["rho0"], c["rho1"], c["alpha"]) == ("dr", 0.1, 0.1, 0.1)


def test_policy_evaluate_on_the_log(svc):
    try:
        import noisyfeedback.ope  # noqa: F401
    except ImportError:
        pytest.skip("noisyfeedback.ope is not in this branch yet")
    client, rank, admin, app = svc
    rng = np.random.default_rng(0)
    W = rng.normal(size=(K, D))
    for _ in range(300):
        x = rng.normal(size=D)
        b = client.post("/rank", json={"context": x.tolist()}, headers=rank).json()
        client.post("/reward", json={"event_id": b["event_id"], "reward": int(b["action"] == np.argmax(W @ x))},
                    headers=rank)
    for params in ({"candidate": "deployed"}, {"candidate": "RCNBF", "param": ["gamma=0.3"], "estimator": "ips"}):
        r = client.get("/policy/evaluate", params=params, headers=admin)
        assert r.status_code == 200, r.text
        est = r.json()
        assert est["n"] == 300 and est["lower"] <= est["value"] <= est["upper"]
    r = client.get("/policy/evaluate", params={"candidate": "NoSuchLearner"}, headers=admin)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "candidate"]


@pytest.mark.parametrize("name,params", [("RCINE", {"n_s": 20}), ("SOBA", {}), ("MCDBF", {"m": 2})])
def test_restart_rebuilds_every_kind_of_learner_state(tmp_path, name, params):
    """Snapshots every 7 rewards plus replay of the log rebuild the model bit for bit (W, second-order
    state, estimator counters, random stream) for the learners with more state than Banditron."""
    import asyncio

    from noisyfeedback.service import Engine

    cfg = ServiceConfig(db=tmp_path / "r.db", learner=name, n_classes=5, n_features=4,
                        params={"gamma": 0.2, "seed": 1, **params}, synchronous="NORMAL", snapshot_every=7)
    engine = Engine(cfg)
    rng = np.random.default_rng(0)

    async def drive():
        engine.start(asyncio.get_running_loop())
        for _ in range(30):
            r = await engine.rank(rng.normal(size=4).tolist())
            await engine.reward(r["event_id"], int(rng.random() < 0.5))
        engine.stop()

    asyncio.run(drive())
    rebuilt = Engine(cfg)
    assert rebuilt.model_version == 30 and rebuilt.storage.latest_snapshot()[1] > 0  # a later snapshot was used
    a, b = engine.learner, rebuilt.learner
    assert a._learned_attributes() == b._learned_attributes()
    for attr in a._learned_attributes():
        va, vb = getattr(a, attr), getattr(b, attr)
        if attr == "rng_":
            assert va.bit_generator.state == vb.bit_generator.state
        elif isinstance(va, np.ndarray):
            np.testing.assert_array_equal(va, vb)
        else:
            assert va == vb, attr
