"""The service's log on PostgreSQL: the same behaviour and the same model as on SQLite, rebuilt on restart.

The server is a throw-away cluster (tests/pg_cluster.py): skipped where the PostgreSQL server binaries or
the psycopg driver are absent, except under NF_REQUIRE_POSTGRES=1 (CI), where that fails.
"""

import warnings

import numpy as np
import pytest
from pg_cluster import cluster

pytest.importorskip("fastapi")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from noisyfeedback.service import ServiceConfig, create_app  # noqa: E402
from noisyfeedback.service.auth import create_key  # noqa: E402


@pytest.fixture(scope="module")
def postgres_dsn():
    with cluster() as dsn:
        yield dsn


def drive(db, tmp, n=60, **kw):
    cfg = ServiceConfig(db=db, learner="RCNBF", n_classes=5, n_features=4, params={"gamma": 0.2, "seed": 3},
                        rho0=0.1, rho1=0.05, snapshot_dir=tmp, **kw)
    key = {"Authorization": f"Bearer {create_key(db, 'admin')}"}
    rng = np.random.default_rng(0)
    W = rng.normal(size=(5, 4))
    app = create_app(cfg)
    given = {}
    with TestClient(app) as c:
        for k in range(n):
            x = rng.normal(size=4)
            b = c.post("/rank", json={"context": x.tolist(), "event_id": f"e{k}"}, headers=key).json()
            given[k] = int(b["action"] == np.argmax(W @ x))
            r = c.post("/reward", json={"event_id": b["event_id"], "reward": given[k]}, headers=key)
            assert r.status_code == 200
        r = c.post("/reward", json={"event_id": "e0", "reward": given[0]}, headers=key)
        assert r.json()["status"] == "duplicate"
        assert c.post("/reward", json={"event_id": "e0", "reward": 1 - given[0]}, headers=key).status_code == 409
        assert c.post("/reward", json={"event_id": "nope", "reward": 1}, headers=key).status_code == 404
        assert c.post("/rank", json={"context": [0.0] * 4, "event_id": "e1"}, headers=key).status_code == 409
        engine = app.state.engine
        state = engine.learner.W_.copy(), engine.learner.rng_.bit_generator.state, engine.model_version
    return cfg, state


def test_postgres_log_gives_the_sqlite_model_and_rebuilds_it(postgres_dsn, tmp_path):
    cfg, (W_pg, rng_pg, version) = drive(postgres_dsn, tmp_path / "pg")
    _, (W_lite, rng_lite, _) = drive(tmp_path / "lite.db", tmp_path / "lite", synchronous="NORMAL")
    np.testing.assert_array_equal(W_pg, W_lite)
    assert rng_pg == rng_lite and version == 60
    app = create_app(cfg)  # a restart on the same database: snapshot 0 + replay of the log
    with TestClient(app):
        engine = app.state.engine
        np.testing.assert_array_equal(engine.learner.W_, W_pg)
        assert engine.learner.rng_.bit_generator.state == rng_pg
        assert engine.stats["events"] == 60 and engine.stats["rewards"] == 60


def test_postgres_action_feature_service_gives_the_sqlite_model(postgres_dsn, tmp_path):
    """An action-feature service (deferred activation, per-slot rewards) on PostgreSQL: the SQLite model,
    and the same model after a restart."""
    import psycopg

    with psycopg.connect(postgres_dsn, autocommit=True) as con:
        con.execute("CREATE DATABASE nf_features")
    dsn = postgres_dsn.replace("/postgres?", "/nf_features?")

    def run(db, snapshots, **kw):
        cfg = ServiceConfig(db=db, learner="SquareCB", action_features=True, bits=10, snapshot_dir=snapshots,
                            params={"seed": 2, "n_slots": 2}, **kw)
        app = create_app(cfg)
        key = {"Authorization": f"Bearer {create_key(db, 'rank')}"}
        rng = np.random.default_rng(1)
        with TestClient(app) as c:
            for k in range(30):
                actions = [{"id": f"i{j}", "features": [{"a": {"x": float(rng.normal())}}]} for j in range(4)]
                body = {"context_features": [{"u": {"y": float(rng.normal())}}], "actions": actions,
                        "slots": [{"id": "top"}, {"id": "side"}], "event_id": f"m{k}", "defer_activation": k % 3 == 0}
                assert c.post("/rank/multislot", json=body, headers=key).status_code == 200
                if k % 3 == 0 and k % 2 == 0:
                    assert c.post(f"/events/m{k}/activate", headers=key).json()["status"] == "activated"
                r = c.post("/reward/multislot", json={"event_id": f"m{k}", "rewards": [
                    {"slot_id": "top", "reward": int(rng.random() < 0.5)}]}, headers=key)
                assert r.status_code == (409 if k % 3 == 0 and k % 2 else 200), r.text
            e = app.state.engine
            return cfg, e.learner.weights_.copy(), e.learner.rng_.bit_generator.state, dict(e.stats)

    cfg, w_pg, rng_pg, stats = run(dsn, tmp_path / "pg")
    _, w_lite, rng_lite, _ = run(tmp_path / "f.db", tmp_path / "lite", synchronous="NORMAL")
    np.testing.assert_array_equal(w_pg, w_lite)
    assert rng_pg == rng_lite and stats["deferred_pending"] == 5
    app = create_app(ServiceConfig(db=dsn, snapshot_dir=tmp_path / "pg"))
    with TestClient(app):
        np.testing.assert_array_equal(app.state.engine.learner.weights_, w_pg)
        assert app.state.engine.learner.rng_.bit_generator.state == rng_pg


def test_postgres_reads_a_key_role_on_every_request(postgres_dsn):
    """Replicas on other machines share no file that would tell them of a revoked key: on PostgreSQL the role
    is read from the database on every call, and a key revoked by another connection is refused at once."""
    from noisyfeedback.service.auth import hash_key
    from noisyfeedback.service.storage_pg import PostgresStorage

    served, other = PostgresStorage(postgres_dsn), PostgresStorage(postgres_dsn)
    h = hash_key("nf_pg_role_test")
    other.add_key(h, "rank")
    assert served.key_role(h) == "rank" and served.key_role(h) == "rank"
    assert other.revoke_key(h) == 1
    assert served.key_role(h) is None
    served.close(), other.close()
