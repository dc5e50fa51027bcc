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
