"""Replicas: several services on one PostgreSQL log, each ranking with its own model and random stream and
learning every reward of the log in reward-seq order.

After the last reward every replica's model equals the others' and an offline replay of the log, bit for
bit; each replica's random stream is its initial stream advanced by exactly the draws its own logged
events made; a replica that starts late or restarts catches up from the latest snapshot and the log.
The server is a throw-away cluster (tests/pg_cluster.py; required under NF_REQUIRE_POSTGRES=1).
The kill -9 test with real server processes is in test_service_replicas_kill.py.
"""

import time
import warnings

import numpy as np
import pytest
from pg_cluster import cluster, new_database, restart

pytest.importorskip("fastapi")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from noisyfeedback.service import ServiceConfig, create_app  # noqa: E402
from noisyfeedback.service.auth import create_key  # noqa: E402
from noisyfeedback.service.learner import make_learner  # noqa: E402
from noisyfeedback.service.replication import replica_stream  # noqa: E402
from noisyfeedback.service.stores import open_storage  # noqa: E402

K, D = 5, 4


@pytest.fixture(scope="module")
def cluster_dsn():
    with cluster() as dsn:
        yield dsn


@pytest.fixture
def dsn(cluster_dsn):
    return new_database(cluster_dsn)


def config(dsn, snapshots, replica, learner="RCNBF", **kw):
    params = {"gamma": 0.2, "seed": 3} if learner == "RCNBF" else {"seed": 3}
    return ServiceConfig(db=dsn, learner=learner, n_classes=K, n_features=D, params=params, rho0=0.1, rho1=0.05,
                         snapshot_dir=snapshots, replica=replica, poll_interval=0.01, **kw)


def learned_state(learner) -> dict:
    """Every learned attribute but the random stream (the weights, counts, ...)."""
    return {k: v for k, v in vars(learner).items() if k.endswith("_") and not k.startswith("_") and k != "rng_"}


def assert_same_model(a, b):
    sa, sb = learned_state(a), learned_state(b)
    assert sa.keys() == sb.keys()
    for k in sa:
        if isinstance(sa[k], np.ndarray):
            assert sa[k].dtype == sb[k].dtype and sa[k].shape == sb[k].shape, k
            assert sa[k].tobytes() == sb[k].tobytes(), k  # bit for bit
        else:
            assert sa[k] == sb[k], k


def offline_replay(dsn, learner="RCNBF"):
    """A fresh learner of the same configuration that learns every logged reward, in seq order, in one
    call (not through the service's code)."""
    params = {"gamma": 0.2, "seed": 3} if learner == "RCNBF" else {"seed": 3}
    fresh = make_learner(learner, K, D, params, 0.1, 0.05)
    st = open_storage(dsn, create=False)
    rows = [r for chunk in st.rewards_after(0) for r in chunk]
    st.close()
    X = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float64).reshape(len(rows), D)
    fresh.learn(X, np.array([int(r[3]) for r in rows]), np.array([int(r[1]) for r in rows]),
                np.array([r[4] for r in rows]))
    return fresh, rows


def wait_caught_up(clients, dsn, timeout=30.0):
    st = open_storage(dsn, create=False)
    last = st.max_reward_seq()
    st.close()
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        if all(c.get("/health").json()["model_version"] == last for c in clients):
            return last
        time.sleep(0.02)
    raise AssertionError(f"replicas did not reach reward seq {last}: "
                         f"{[c.get('/health').json()['model_version'] for c in clients]}")


def own_stream_draws(dsn, replica) -> int:
    st = open_storage(dsn, create=False)
    n = st.draws_after(0, replica=replica)
    st.close()
    return n


def drive(clients, key, n, seed=0, prefix="e"):
    """n rank+reward pairs: pair k ranks on replica k % 2 and sends its reward to the other one."""
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(K, D))
    for k in range(n):
        x = rng.normal(size=D)
        a, b = clients[k % len(clients)], clients[(k + 1) % len(clients)]
        r = a.post("/rank", json={"context": x.tolist(), "event_id": f"{prefix}{k}"}, headers=key)
        assert r.status_code == 200, r.text
        click = int(r.json()["action"] == int(np.argmax(W @ x)))
        r = b.post("/reward", json={"event_id": f"{prefix}{k}", "reward": click}, headers=key)
        assert r.status_code == 200 and r.json()["status"] == "accepted", r.text


@pytest.mark.parametrize("learner", ["RCNBF", "SquareCB"])
def test_two_replicas_learn_every_reward_and_equal_an_offline_replay(dsn, tmp_path, learner):
    key = {"Authorization": f"Bearer {create_key(dsn, 'admin')}"}
    app_a = create_app(config(dsn, tmp_path, "a", learner))
    app_b = create_app(config(dsn, tmp_path, "b", learner))
    with TestClient(app_a) as a, TestClient(app_b) as b:
        assert a.get("/health").json()["replica"] == "a"
        drive([a, b], key, 300)
        last = wait_caught_up([a, b], dsn)
        ea, eb = app_a.state.engine, app_b.state.engine
        replay, rows = offline_replay(dsn, learner)
        assert len(rows) == 300 and last == rows[-1][0]
        assert_same_model(ea.learner, eb.learner)
        assert_same_model(ea.learner, replay)
        # each replica's stream: its initial stream advanced by its own logged draws (150 events each)
        for e in (ea, eb):
            again = replica_stream(e.storage, e.learner, e.replica)
            again.random(own_stream_draws(dsn, e.replica))
            assert again.bit_generator.state == e.learner.rng_.bit_generator.state
        assert ea.learner.rng_.bit_generator.state != eb.learner.rng_.bit_generator.state
        state_b = eb.learner.rng_.bit_generator.state
        learned = {k: np.copy(v) for k, v in learned_state(eb.learner).items()}
    # b restarts (after a snapshot of a's): the same model and the same stream
    with TestClient(create_app(config(dsn, tmp_path, "a", learner))) as a:
        a.post("/snapshot", headers=key)
    app_b2 = create_app(config(dsn, tmp_path, "b", learner))
    with TestClient(app_b2):
        e = app_b2.state.engine
        assert e.learner.rng_.bit_generator.state == state_b and e.model_version == last
        for k, v in learned.items():
            assert np.asarray(learned_state(e.learner)[k]).tobytes() == np.asarray(v).tobytes()


def test_a_late_replica_catches_up_and_snapshots_carry_each_stream(dsn, tmp_path):
    key = {"Authorization": f"Bearer {create_key(dsn, 'admin')}"}
    app_a = create_app(config(dsn, tmp_path, "a", snapshot_every=40))
    app_b = create_app(config(dsn, tmp_path, "b", snapshot_every=40))
    with TestClient(app_a) as a, TestClient(app_b) as b:
        drive([a, b], key, 120)
        wait_caught_up([a, b], dsn)
        app_c = create_app(config(dsn, tmp_path, "c"))  # starts late: latest snapshot + the log
        with TestClient(app_c) as c:
            assert app_c.state.engine.model_version == app_a.state.engine.model_version
            drive([c, a, b], key, 60, seed=1, prefix="f")  # and serves next to them
            wait_caught_up([a, b, c], dsn)
            replay, _ = offline_replay(dsn)
            for app in (app_a, app_b, app_c):
                assert_same_model(app.state.engine.learner, replay)
            states = {n: app.state.engine.learner.rng_.bit_generator.state
                      for n, app in (("a", app_a), ("b", app_b), ("c", app_c))}
            versions = app_a.state.engine.model_version
    st = open_storage(dsn, create=False)
    assert {r[4] for r in st.replica_snapshots()} >= {"a", "b", None}  # periodic snapshots of a and b
    st.close()
    for name in "abc":  # each restarts to its own stream, whatever snapshot holds the newest weights
        app = create_app(config(dsn, tmp_path, name))
        with TestClient(app):
            assert app.state.engine.learner.rng_.bit_generator.state == states[name]
            assert app.state.engine.model_version == versions
            assert_same_model(app.state.engine.learner, replay)


def test_an_event_id_two_replicas_rank_is_logged_once(dsn, tmp_path):
    key = {"Authorization": f"Bearer {create_key(dsn, 'admin')}"}
    app_a, app_b = create_app(config(dsn, tmp_path, "a")), create_app(config(dsn, tmp_path, "b"))
    with TestClient(app_a) as a, TestClient(app_b) as b:
        ctx = {"context": [0.1, 0.2, 0.3, 0.4], "event_id": "same"}
        assert a.post("/rank", json=ctx, headers=key).status_code == 200
        assert b.post("/rank", json=ctx, headers=key).status_code == 409  # seen in the log
        # the race the lookup cannot see: the id arrives at b's writer after a logged it
        eb = app_b.state.engine
        eb.storage.event_exists = lambda event_id: False
        ctx2 = {"context": [0.5, 0.2, 0.3, 0.4], "event_id": "other"}
        assert a.post("/rank", json=ctx2, headers=key).status_code == 200
        r = b.post("/rank", json=ctx2, headers=key)
        assert r.status_code == 409 and "already in the log" in r.json()["detail"]
        state_b = eb.learner.rng_.bit_generator.state
        assert b.post("/reward", json={"event_id": "other", "reward": 1}, headers=key).json()["status"] == "accepted"
        wait_caught_up([a, b], dsn)
    st = open_storage(dsn, create=False)
    ids = [r[1] for r in st.log()]
    assert ids.count("other") == 1 and any(i.startswith("other~void~b~") for i in ids)
    st.close()
    app = create_app(config(dsn, tmp_path, "b"))  # the refused draw is in b's log: exact recovery
    with TestClient(app):
        assert app.state.engine.learner.rng_.bit_generator.state == state_b


def test_replica_refusals(dsn, tmp_path):
    with pytest.raises(ValueError, match="replica needs a PostgreSQL log"):
        ServiceConfig(db=tmp_path / "svc.db", learner="RCNBF", n_classes=3, n_features=2, replica="a").check()
    with pytest.raises(ValueError, match="replica must be"):
        config(dsn, tmp_path, "a b").check()
    ServiceConfig(db=dsn, learner="SquareCB", action_features=True, snapshot_dir=tmp_path, replica="a").check()
    for bad in (-1.0, 601, "2"):
        with pytest.raises(ValueError, match=r"db_retry must be in \[0, 600\] seconds"):
            config(dsn, tmp_path, "a", db_retry=bad).check()
    from noisyfeedback.service.cli import _message

    with pytest.raises(ValueError) as err:
        config(dsn, tmp_path, "a", db_retry=-1).check()
    assert _message(err.value).startswith("--db-retry must be in [0, 600] seconds")
    app = create_app(config(dsn, tmp_path, "a"))
    key = {"Authorization": f"Bearer {create_key(dsn, 'admin')}"}
    with TestClient(app) as a, TestClient(create_app(config(dsn, tmp_path, "b"))) as b:
        assert a.post("/rank", json={"context": [0.0] * D}, headers=key).json()["event_id"] == "ev~a~1"
        assert b.post("/rank", json={"context": [0.0] * D}, headers=key).json()["event_id"] == "ev~b~1"
        # POST /mode switches the replica it is sent to
        assert a.post("/mode", json={"mode": "apprentice"}, headers=key).json()["mode"] == "apprentice"
        assert b.get("/health").json()["mode"] == "online"
        a.post("/mode", json={"mode": "online"}, headers=key)
    cfg = config(dsn, tmp_path, None)
    with pytest.raises(ValueError, match="served by replicas"):
        create_app(cfg)


def catalogue_config(dsn, snapshots, replica, n_slots=1):
    return ServiceConfig(db=dsn, learner="SquareCB", params={"seed": 3, "n_slots": n_slots}, action_features=True,
                         snapshot_dir=snapshots, replica=replica, poll_interval=0.01)


def catalogue_replay(dsn, n_slots=1):
    """A fresh catalogue learner that learns every logged reward in seq order in one call, from the hashed
    rounds the log keeps (decoded here, not through the service's learning code)."""
    from noisyfeedback.service.catalogue import decode_round, make_catalogue_learner, rounds_of

    fresh = make_catalogue_learner(catalogue_config(dsn, None, None, n_slots))
    st = open_storage(dsn, create=False)
    rows = [r for chunk in st.rewards_after(0) for r in chunk]
    st.close()
    records = [decode_round(r[2]) for r in rows]
    actions = np.array([[int(a) for a in r[3].split(",")] for r in rows], dtype=np.int64)
    if n_slots == 1:
        clicks = np.array([int(round(r[1])) for r in rows])
        fresh.learn(rounds_of(records), actions[:, 0], clicks, np.array([rec["probs"][0] for rec in records]))
    else:
        clicks = np.array([[int(v) for v in r[5].split(",")] for r in rows])
        fresh.learn(rounds_of(records), actions, clicks, np.stack([rec["probs"] for rec in records]))
    return fresh, rows


@pytest.mark.parametrize("n_slots", [1, 2])
def test_two_action_feature_replicas_learn_every_reward_and_equal_an_offline_replay(dsn, tmp_path, n_slots):
    """Replicas of an action-feature service (one slot, and two slots with rewards per slot): ranks with
    features alternated between them, each reward sent to the other replica; both models equal each other
    and a replay of the log, bit for bit; a deferred event activated on one replica and rewarded on the
    other is learned, one never activated is not."""
    key = {"Authorization": f"Bearer {create_key(dsn, 'admin')}"}
    app_a = create_app(catalogue_config(dsn, tmp_path, "a", n_slots))
    app_b = create_app(catalogue_config(dsn, tmp_path, "b", n_slots))
    topics = ["news", "sport", "music", "film", "food", "travel"]
    rng = np.random.default_rng(0)
    route, reward_route = ("/rank", "/reward") if n_slots == 1 else ("/rank/multislot", "/reward/multislot")
    sent = {}
    with TestClient(app_a) as a, TestClient(app_b) as b:
        clients = [a, b]
        for k in range(120):
            user = topics[k % 3]
            body = {"context_features": [{"user": {"likes": user, "age": float(20 + k % 40)}}],
                    "actions": [{"id": t, "features": [{"item": {"topic": t, "price": float(rng.uniform(1, 9))}}]}
                                for t in topics], "event_id": f"c{k}", "defer_activation": k % 10 == 9}
            if n_slots > 1:
                body["slots"] = [{"id": "hero"}, {"id": "side"}]
            r = clients[k % 2].post(route, json=body, headers=key)
            assert r.status_code == 200, r.text
            sent[k] = (body, r.json())
            other = clients[(k + 1) % 2]
            if k % 10 == 9 and k % 20 == 9:  # activated on the other replica, then rewarded: learned
                assert other.post(f"/events/c{k}/activate", headers=key).status_code == 200
            ans = r.json()
            if n_slots == 1:
                rb = {"event_id": f"c{k}", "reward": int(ans["action"] == user)}
            else:
                rb = {"event_id": f"c{k}", "rewards": [{"slot_id": s["id"], "reward": int(s["action"] == user)}
                                                       for s in ans["slots"]]}
            res = other.post(reward_route, json=rb, headers=key)
            never = k % 10 == 9 and k % 20 == 19  # deferred and never activated: refused, not learned
            assert res.status_code == (409 if never else 200), res.text
        # a rank retried on the other replica: the answer logged with it (no new event, no draw); another
        # request under the same id: 409
        again = b.post(route, json=sent[0][0], headers=key)
        assert again.status_code == 200 and again.json() == sent[0][1]
        changed = {**sent[0][0], "actions": sent[0][0]["actions"][:-1]}
        assert b.post(route, json=changed, headers=key).status_code == 409
        wait_caught_up([a, b], dsn)
        ea, eb = app_a.state.engine, app_b.state.engine
        replay, rows = catalogue_replay(dsn, n_slots)
        assert len(rows) == 120 - 6
        assert_same_model(ea.learner, eb.learner)
        assert_same_model(ea.learner, replay)
        assert ea.learner.rng_.bit_generator.state != eb.learner.rng_.bit_generator.state
        for e in (ea, eb):  # each stream: its initial stream advanced by its own logged draws
            again = replica_stream(e.storage, e.learner, e.replica)
            again.random(own_stream_draws(dsn, e.replica))
            assert again.bit_generator.state == e.learner.rng_.bit_generator.state
        state_b = eb.learner.rng_.bit_generator.state
    app_b2 = create_app(catalogue_config(dsn, tmp_path, "b", n_slots))  # a restart: the same model and stream
    with TestClient(app_b2):
        assert app_b2.state.engine.learner.rng_.bit_generator.state == state_b
        assert_same_model(app_b2.state.engine.learner, replay)


def test_a_duplicate_replica_name_is_refused_at_start(dsn, tmp_path):
    """A name another process serves under (its session holds the name's advisory lock) is refused."""
    import psycopg

    from noisyfeedback.service.storage_pg import REPLICA_LOCK

    create_app(config(dsn, tmp_path, "a")).state.engine.storage.close()  # the log exists
    other = psycopg.connect(dsn, autocommit=True, application_name="another serve")
    try:
        assert other.execute("SELECT pg_try_advisory_lock(%s, hashtext('a'))", (REPLICA_LOCK,)).fetchone()[0]
        with pytest.raises(ValueError, match="another process serves as replica 'a' of this log"):
            create_app(config(dsn, tmp_path, "a"))
        with TestClient(create_app(config(dsn, tmp_path, "b"))) as b:  # another name starts
            assert b.get("/health").status_code == 200
    finally:
        other.close()  # the other process ends: the name is free
    with TestClient(create_app(config(dsn, tmp_path, "a"))) as again:
        assert again.get("/health").json()["replica"] == "a"


def test_a_short_postgresql_restart_fails_no_request(cluster_dsn, tmp_path):
    """A restart of the server shorter than the service's retries (a fast stop and a start at once) under
    requests alternated between two replicas: no request fails (each waits for the database instead), the
    driver's text is never shown, and both models equal a replay afterwards. The restart under load with
    server processes, longer than the retries: test_service_replicas_kill.py."""
    import threading

    dsn = new_database(cluster_dsn)
    key = {"Authorization": f"Bearer {create_key(dsn, 'admin')}"}
    retry = 10.0  # (a restart takes 0.3-1 s on a quiet machine, more on a loaded one)
    app_a, app_b = (create_app(config(dsn, tmp_path, name, db_retry=retry)) for name in "ab")
    assert app_a.state.engine.storage.retry_budget == retry
    with TestClient(app_a) as a, TestClient(app_b) as b:
        drive([a, b], key, 10)
        times = {}
        restarter = threading.Thread(target=restart, args=(cluster_dsn, 0.0, times))
        restarter.start()
        rng = np.random.default_rng(5)
        statuses, k = [], 0
        while restarter.is_alive() or k < 10:
            ranked = (a, b)[k % 2].post("/rank", json={"context": rng.normal(size=D).tolist(), "event_id": f"s{k}"},
                                        headers=key)
            statuses.append(ranked.status_code)
            assert ranked.status_code == 200, ranked.text
            rewarded = (b, a)[k % 2].post("/reward", json={"event_id": f"s{k}", "reward": 1}, headers=key)
            assert rewarded.status_code == 200, rewarded.text
            k += 1
            time.sleep(0.01)
        restarter.join()
        assert times["up"] - times["stop"] < retry - 1.0, times  # (shorter than the retries: else this test says
        # nothing)
        import psycopg

        from noisyfeedback.service.storage_pg import REPLICA_LOCK

        with psycopg.connect(dsn, autocommit=True) as other:  # both names are claimed again: refused to others
            for name in "ab":
                assert not other.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))",
                                         (REPLICA_LOCK, name)).fetchone()[0], name
        assert {a.get("/health").status_code, b.get("/health").status_code} == {200}
        wait_caught_up([a, b], dsn)
        replay, rows = offline_replay(dsn)
        assert len(rows) == 10 + k
        assert_same_model(app_a.state.engine.learner, replay)
        assert_same_model(app_b.state.engine.learner, replay)
