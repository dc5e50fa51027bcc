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


def test_connections_a_server_restart_closed_are_replaced_at_their_next_use(postgres_dsn):
    """After a restart of the server every connection of a store is closed; a read and a write transaction
    then succeed at once on new connections (nothing fails and nothing waits for a retry)."""
    import time

    from pg_cluster import new_database, restart

    from noisyfeedback.service.auth import hash_key
    from noisyfeedback.service.stores import open_storage

    dsn = new_database(postgres_dsn)
    key = create_key(dsn, "admin")
    reader, writer = open_storage(dsn), open_storage(dsn)
    try:
        assert reader.key_role(hash_key(key)) == "admin"
        assert writer.apply_batch([("touch", hash_key(key), 1.0)]) == [None]
        old = (reader._local.con, writer._local.con)
        restart(postgres_dsn)
        t0 = time.monotonic()
        assert reader.key_role(hash_key(key)) == "admin"  # a read, then ...
        assert writer.apply_batch([("touch", hash_key(key), 2.0)]) == [None]  # ... a BEGIN on a closed connection
        assert time.monotonic() - t0 < 1.0
        assert (reader._local.con, writer._local.con) != old and not reader.outage and not writer.outage
        assert reader.list_keys()[0][3] == 2.0
    finally:
        reader.close()
        writer.close()


def test_a_write_transaction_is_redone_unless_its_commit_was_sent_and_took(postgres_dsn):
    """A connection that fails inside a write transaction before its COMMIT: the transaction is redone on a
    new one (logged once). One that fails as the COMMIT is sent: the server is asked for the
    transaction's outcome; committed, its results stand and it is not redone; aborted, it is redone;
    no answer (the server away): `ConnectionLost` with ``maybe_committed`` and a fixed message, not the
    driver's text."""
    import psycopg
    from pg_cluster import new_database

    from noisyfeedback.service.storage import EventRow
    from noisyfeedback.service.storage_pg import UNREACHABLE, ConnectionLost
    from noisyfeedback.service.stores import open_storage

    dsn = new_database(postgres_dsn)
    st = open_storage(dsn)
    real, seen = st._x, []

    def failing_on(statement, times, after=False):
        def x(sql, params=()):
            if sql.startswith(statement) and len(seen) < times:
                seen.append(sql)
                if after:  # the statement reaches the server, the answer is lost
                    real(sql, params)
                    st._local.con.close()
                    raise ConnectionLost(UNREACHABLE, maybe_committed=sql == "COMMIT")
                st._local.con.close()  # the connection fails as this statement is sent
            return real(sql, params)
        return x

    def event(seq):
        return EventRow(seq, f"e{seq}", 0.0, np.zeros(2).tobytes(), "1", 0.5, np.full(2, 0.5).tobytes(), 1, "online",
                        None, "1", 0)
    try:
        st._x = failing_on("INSERT INTO events", 2)  # twice before the COMMIT: redone, logged once
        assert st.apply_batch([("event", event(1))]) == [1]
        assert len(seen) == 2 and st.max_event_seq() == 1
        seen.clear()
        st._x = failing_on("COMMIT", 1)  # a COMMIT never sent: the transaction aborted, redone
        assert st.apply_batch([("event", event(2))]) == [2]
        assert seen == ["COMMIT"] and st.max_event_seq() == 2 and not st.outage
        seen.clear()
        st._x = failing_on("COMMIT", 1, after=True)  # committed, its answer lost: not redone (else a
        assert st.apply_batch([("event", event(3))]) == [3]  # duplicate key), its results returned
        assert seen == ["COMMIT"] and st.max_event_seq() == 3
        seen.clear()
        outcome = st._outcome
        st._outcome = lambda xid, delays: None  # the server does not answer within the budget
        st._x = failing_on("COMMIT", 1)
        with pytest.raises(ConnectionLost) as err:
            st.apply_batch([("event", event(4))])
        assert err.value.maybe_committed and seen == ["COMMIT"] and st.outage
        assert "psycopg" not in str(err.value) and "closed" not in str(err.value)
        st._x, st._outcome = real, outcome
        assert st.max_event_seq() == 3
        # the server's word on a transaction: committed, aborted, and one whose id is unknown
        with psycopg.connect(dsn, autocommit=True) as con:
            with con.transaction():
                done = con.execute("SELECT txid_current()").fetchone()[0]
            try:
                with con.transaction():
                    undone = con.execute("SELECT txid_current()").fetchone()[0]
                    raise RuntimeError
            except RuntimeError:
                pass
        assert st._outcome(done, iter(())) == "committed" and st._outcome(undone, iter(())) == "aborted"
        assert st._outcome(None, iter(())) is None
    finally:
        st.close()


def _app_and_slowed(postgres_dsn, tmp_path, method: str):
    """A numeric service on a new database, an admin key's header, and a function that makes the log's
    ``method`` take a second longer from then on (a slow or reconnecting database)."""
    import time

    from pg_cluster import new_database

    dsn = new_database(postgres_dsn)
    key = {"Authorization": f"Bearer {create_key(dsn, 'admin')}"}
    app = create_app(ServiceConfig(db=dsn, learner="RCNBF", n_classes=5, n_features=4, params={"seed": 3},
                                   snapshot_dir=tmp_path))
    storage = app.state.engine.storage
    real = getattr(storage, method)

    def slow(*args):
        time.sleep(1.0)
        return real(*args)

    return app, key, lambda: setattr(storage, method, slow)


@pytest.mark.parametrize("method,route,body", [
    ("key_role", "/rank", {"context": [0.0] * 4}),  # a request's key lookup
    ("set_meta", "/mode", {"mode": "apprentice"}),  # the mode written to the log
])
def test_a_slow_database_call_does_not_hold_the_event_loop(postgres_dsn, tmp_path, method, route, body):
    """A request whose call to the database takes a second (a slow or reconnecting database) holds only
    itself: a /health sent meanwhile answers at once, and the request then succeeds (a mode switch is
    kept in the log)."""
    import asyncio
    import time

    httpx = pytest.importorskip("httpx")
    app, key, slow_down = _app_and_slowed(postgres_dsn, tmp_path, method)

    async def main():
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://nf") as c:
                assert (await c.get("/health")).status_code == 200
                slow_down()
                t0 = time.monotonic()
                sent = asyncio.ensure_future(c.post(route, json=body, headers=key))
                await asyncio.sleep(0.1)  # (the request is waiting for the database by now)
                health = await c.get("/health")
                waited = time.monotonic() - t0
                return health.status_code, waited, await sent

    status, waited, answer = asyncio.run(main())
    assert status == 200 and waited < 0.6, waited
    assert answer.status_code == 200, answer.text
    if route == "/mode":
        assert answer.json()["mode"] == "apprentice" and app.state.engine.storage.get_meta("mode") == "apprentice"
