"""The decision service against hostile and careless input: extreme contexts and model poisoning, writing
into /metrics, key revocation, request limits, sparse keys, snapshots gone wrong, a locked database,
restarts with another configuration, bad command-line values and export targets."""

import asyncio
import json
import os
import sqlite3
import stat
import threading
import time
import warnings

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from typer.testing import CliRunner  # noqa: E402

from noisyfeedback.cli import app as cli  # noqa: E402
from noisyfeedback.service import Engine, ServiceConfig, create_app  # noqa: E402
from noisyfeedback.service.auth import create_key  # noqa: E402

D, K = 6, 4
HUGE = [1.7e308] * D


def config(tmp_path, name="s.db", **kw):
    base = dict(db=tmp_path / name, learner="RCNBF", n_classes=K, n_features=D, params={"gamma": 0.2, "seed": 0},
                rho0=0.1, rho1=0.1, synchronous="NORMAL")
    base.update(kw)
    return ServiceConfig(**base)


@pytest.fixture
def svc(tmp_path):
    cfg = config(tmp_path)
    app = create_app(cfg)
    rank = {"Authorization": f"Bearer {create_key(cfg.db, 'rank')}"}
    admin = {"Authorization": f"Bearer {create_key(cfg.db, 'admin')}"}
    with TestClient(app) as client:
        yield client, rank, admin, app


def counts(db):
    con = sqlite3.connect(db)
    out = tuple(con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("events", "rewards"))
    con.close()
    return out


def finite_state(learner):
    return all(np.isfinite(v).all() for k, v in vars(learner).items()
               if k.endswith("_") and isinstance(v, np.ndarray) and v.dtype.kind == "f")


def assert_serving(client, rank, app, n=5):
    """Ordinary contexts get 200 with a finite distribution (no null), /health 200, the model finite."""
    rng = np.random.default_rng(5)
    for _ in range(n):
        r = client.post("/rank", json={"context": rng.normal(size=D).tolist()}, headers=rank)
        assert r.status_code == 200, r.text
        assert "null" not in r.text and "NaN" not in r.text
        dist = np.array(r.json()["distribution"], dtype=float)
        assert np.isfinite(dist).all() and dist.sum() == pytest.approx(1)
        assert client.post("/reward", json={"event_id": r.json()["event_id"], "reward": 1},
                           headers=rank).status_code == 200
    assert client.get("/health").status_code == 200
    assert finite_state(app.state.engine.learner)


def replayed(db):
    """A second engine on the same log: the model rebuilt from snapshot + log."""
    return Engine(ServiceConfig(db=db, synchronous="NORMAL"))


# ------------------------------------------------------------------ serious 1 and 2: extreme contexts
def test_huge_finite_context_does_not_take_the_service_down(svc):
    client, rank, admin, app = svc
    r = client.post("/rank", json={"context": HUGE}, headers=rank)
    assert r.status_code in (200, 422), r.text
    if r.status_code == 200:
        assert np.isfinite(r.json()["distribution"]).all() and "null" not in r.text
        rr = client.post("/reward", json={"event_id": r.json()["event_id"], "reward": 1}, headers=rank)
        assert rr.status_code in (200, 422), rr.text
    for k in range(K):  # the allowed action's probability must be finite, or the request refused
        r = client.post("/rank", json={"context": HUGE, "allowed_actions": [k]}, headers=rank)
        assert r.status_code in (200, 422) and "null" not in r.text, r.text
    assert_serving(client, rank, app)


@pytest.mark.parametrize("mode", ["online", "apprentice"])
def test_poisoning_sequence_is_refused_and_nothing_of_it_is_logged(tmp_path, mode):
    cfg = config(tmp_path, mode=mode)
    app = create_app(cfg)
    rank = {"Authorization": f"Bearer {create_key(cfg.db, 'rank')}"}
    admin = {"Authorization": f"Bearer {create_key(cfg.db, 'admin')}"}
    extra = {"default_action": 1} if mode == "apprentice" else {}
    with TestClient(app) as client:
        huge = client.post("/rank", json={"context": HUGE, **extra}, headers=rank)
        assert huge.status_code == 200, huge.text
        rng = np.random.default_rng(0)
        for _ in range(90 if mode == "online" else 1):  # ordinary pairs that reward the same action
            b = client.post("/rank", json={"context": rng.normal(size=D).tolist(), **extra}, headers=rank).json()
            client.post("/reward", json={"event_id": b["event_id"], "reward": int(b["action"] == 1)},
                        headers=rank)
        before = counts(cfg.db)
        r = client.post("/reward", json={"event_id": huge.json()["event_id"], "reward": 1}, headers=rank)
        if r.status_code == 422:  # refused: not in the log
            assert r.json()["detail"][0]["loc"] == ["body", "event_id"]
            assert counts(cfg.db) == before
        else:  # learned without leaving the finite range
            assert r.status_code == 200, r.text
        client.post("/mode", json={"mode": "online"}, headers=admin)
        assert_serving(client, rank, app)
        ev = client.get("/policy/evaluate", params={"candidate": "deployed"}, headers=admin)
        assert ev.status_code == 200, ev.text
        W = app.state.engine.learner.W_.copy()
    rebuilt = replayed(cfg.db)  # recovery rebuilds the same, finite model
    assert finite_state(rebuilt.learner)
    np.testing.assert_array_equal(rebuilt.learner.W_, W)


def test_a_model_that_gives_nan_probabilities_answers_422_and_logs_nothing(svc, monkeypatch):
    client, rank, admin, app = svc
    engine = app.state.engine
    before = counts(engine.cfg.db), engine.learner.rng_.bit_generator.state
    monkeypatch.setattr(engine.learner, "action_probabilities", lambda X, **kw: np.full((len(X), K), np.nan))
    for body in ({"context": [0.5] * D}, {"context": [0.5] * D, "allowed_actions": [2]}):
        r = client.post("/rank", json=body, headers=rank)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "context"], r.text
    assert (counts(engine.cfg.db), engine.learner.rng_.bit_generator.state) == before
    monkeypatch.undo()
    assert_serving(client, rank, app)


def test_a_failed_write_does_not_wedge_the_service(svc, monkeypatch):
    """A write that fails (e.g. a constraint) answers 503 and logs nothing; the service repairs itself
    (rebuilds the model from the log) and serves again, never a permanent 503."""
    client, rank, admin, app = svc
    engine = app.state.engine
    for _ in range(3):
        b = client.post("/rank", json={"context": [0.3] * D}, headers=rank).json()
        client.post("/reward", json={"event_id": b["event_id"], "reward": 1}, headers=rank)
    real = engine.storage.apply_batch
    calls = {"n": 0}

    def failing(ops):
        calls["n"] += 1
        if calls["n"] == 1:
            raise sqlite3.IntegrityError("NOT NULL constraint failed: events.probability")
        return real(ops)

    monkeypatch.setattr(engine.storage, "apply_batch", failing)
    assert client.post("/rank", json={"context": [0.3] * D}, headers=rank).status_code == 503
    deadline = time.monotonic() + 10
    while client.get("/health").status_code != 200:
        assert time.monotonic() < deadline, "the service did not recover"
        time.sleep(0.05)
    assert_serving(client, rank, app)
    state = engine.learner.rng_.bit_generator.state
    W = engine.learner.W_.copy()
    rebuilt = replayed(engine.cfg.db)
    np.testing.assert_array_equal(rebuilt.learner.W_, W)
    assert rebuilt.learner.rng_.bit_generator.state == state


def test_an_external_lock_longer_than_the_timeout_gives_503_then_recovers(tmp_path):
    cfg = config(tmp_path, busy_timeout=0.2)
    app = create_app(cfg)
    rank = {"Authorization": f"Bearer {create_key(cfg.db, 'rank')}"}
    with TestClient(app) as client:
        assert client.post("/rank", json={"context": [0.1] * D}, headers=rank).status_code == 200
        locker = sqlite3.connect(cfg.db, isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")
        r = client.post("/rank", json={"context": [0.1] * D}, headers=rank)
        assert r.status_code == 503, r.text
        time.sleep(0.5)  # held well past the timeout
        assert client.get("/health").status_code == 503
        locker.execute("ROLLBACK")
        locker.close()
        deadline = time.monotonic() + 10
        while client.get("/health").status_code != 200:
            assert time.monotonic() < deadline, "the service did not recover after the lock was released"
            time.sleep(0.05)
        assert_serving(client, rank, app)
        state = app.state.engine.learner.rng_.bit_generator.state
    assert replayed(cfg.db).learner.rng_.bit_generator.state == state


# ------------------------------------------------------------------ serious 3: /metrics
def test_metrics_never_carry_a_request_path_and_stay_small(svc):
    client, rank, admin, app = svc
    client.get("/x%22%7D%201%0Anf_click_rate%200.99%0A%23")
    client.get('/a"b\\c', headers=rank)
    for i in range(3000):
        client.get(f"/unknown/{i}")
    text = client.get("/metrics", headers=rank).text
    assert len(text.encode()) < 200_000
    assert "0.99" not in text and "unknown/" not in text and 'a"b' not in text
    routes = {line.split('route="')[1].split('"')[0] for line in text.splitlines() if 'route="' in line}
    assert routes <= {"/metrics", "/rank", "/reward", "/health", "unmatched"}, routes
    assert 'nf_requests_total{route="unmatched",status="404"} 3002' in text
    for line in text.splitlines():  # every line is a comment or name{labels} value
        assert line.startswith("#") or line.count(" ") == 1, line


def test_metric_labels_are_escaped():
    from noisyfeedback.service.metrics import Metrics, escape_label

    assert escape_label('a"b\\c\nd') == 'a\\"b\\\\c\\nd'
    m = Metrics()
    m.observe('x"}\n', 200, 0.001)

    class E:
        stats = {k: 0 for k in ("events", "rewards", "reward_sum", "reward_sq", "app_events", "app_agree",
                                "app_rewards", "app_reward_sum", "app_agree_rewards", "app_agree_reward_sum")}
        rho0 = rho1 = 0.0
        model_version, mode = 0, "online"

        def apprentice_report(self):
            return {k: float("nan") for k in ("agreement", "reward_default", "reward_agreeing",
                                              "reward_learned_lower", "reward_learned_upper")}

    text = m.render(E())
    assert 'route="x\\"}\\n"' in text and all("\n" not in line for line in text.splitlines())


# ------------------------------------------------------------------ serious 4: keys
def test_keys_list_and_revoke_take_effect_on_the_next_request(svc):
    client, rank, admin, app = svc
    db = str(app.state.engine.cfg.db)
    other = {"Authorization": f"Bearer {create_key(db, 'rank')}"}
    assert client.post("/rank", json={"context": [0.1] * D}, headers=rank).status_code == 200
    assert client.get("/metrics", headers=other).status_code == 200
    res = CliRunner().invoke(cli, ["keys", "list", "--db", db])
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    assert lines[0].split()[:3] == ["id", "role", "created"] and len(lines) == 4
    for key in (rank, admin, other):
        assert key["Authorization"].split()[1] not in res.output
    used = [ln for ln in lines[1:] if "never" not in ln]
    assert len(used) == 2  # the rank key and the other key were used; admin not yet
    # revoke by key: the very next request is refused, without a restart
    res = CliRunner().invoke(cli, ["keys", "revoke", rank["Authorization"].split()[1], "--db", db])
    assert res.exit_code == 0, res.output
    r = client.post("/rank", json={"context": [0.1] * D}, headers=rank)
    assert r.status_code == 401 and "revoked" in r.json()["detail"]
    # revoke by id (from keys list)
    from noisyfeedback.service.auth import hash_key

    key_id = hash_key(other["Authorization"].split()[1])[:12]
    assert key_id in CliRunner().invoke(cli, ["keys", "list", "--db", db]).output
    res = CliRunner().invoke(cli, ["keys", "revoke", key_id, "--db", db])
    assert res.exit_code == 0, res.output
    assert client.get("/metrics", headers=other).status_code == 401
    assert client.post("/snapshot", headers=admin).status_code == 200
    bad = CliRunner().invoke(cli, ["keys", "revoke", key_id, "--db", db])
    assert bad.exit_code == 2 and "no key" in bad.output and "Traceback" not in bad.output


def test_fastapi_telemetry_is_off_unless_a_provider_is_configured(svc, monkeypatch):
    """FastAPI asks OpenTelemetry for its providers on every request unless told not to; the service tells
    it not to when none is configured (and leaves it on where one is, or will be at start-up)."""
    from noisyfeedback.service.app import _telemetry

    app = svc[3]
    if not hasattr(app, "_native_telemetry"):
        pytest.skip("this FastAPI has no native telemetry")
    assert not app._native_telemetry.enabled() and app._telemetry["tracing"] is False
    monkeypatch.setenv("FASTAPI_OTEL_AUTO_CONFIGURE", "true")
    assert _telemetry() is None


def test_key_roles_are_kept_until_a_key_changes_in_any_process(tmp_path, monkeypatch):
    """The role of a key seen once is not read again from the log, until another storage of the same log
    (another process: the CLI) adds or revokes a key; an unknown key is never kept."""
    from noisyfeedback.service.auth import hash_key
    from noisyfeedback.service.storage import SQLiteStorage

    db = tmp_path / "k.db"
    served, cli_side = SQLiteStorage(db), SQLiteStorage(db)
    h = hash_key("nf_one")
    cli_side.add_key(h, "rank")
    reads = []
    real = served._read_key_role
    monkeypatch.setattr(served, "_read_key_role", lambda k: reads.append(k) or real(k))
    assert [served.key_role(h) for _ in range(3)] == ["rank"] * 3 and len(reads) == 1
    assert served.key_role(hash_key("nf_unknown")) is None and served.key_role(hash_key("nf_unknown")) is None
    assert len(reads) == 3  # unknown keys are read every time (a key created later must work at once)
    cli_side.add_key(hash_key("nf_two"), "admin")  # any change drops what was kept
    assert served.key_role(h) == "rank" and len(reads) == 4
    assert cli_side.revoke_key(h) == 1
    assert served.key_role(h) is None
    served.close(), cli_side.close()


# ------------------------------------------------------------------ limits and parsing
def test_header_size_and_json_nesting_are_limited_before_parsing(svc):
    client, rank, admin, app = svc
    r = client.get("/health", headers={"X-Big": "a" * 20_000})
    assert r.status_code == 431
    r = client.post("/rank", content=b"[" * 1000 + b"]" * 1000, headers={**rank, "Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body"]
    deep = {"context": [0.1] * D, "event_id": None}
    body = json.dumps(deep)[:-1] + ', "x": ' + "[" * 200 + "]" * 200 + "}"
    r = client.post("/rank", content=body.encode(), headers={**rank, "Content-Type": "application/json"})
    assert r.status_code == 422
    r = client.post("/rank", content=b'{"context": "' + b"[" * 100 + b'"}', headers={**rank,
                    "Content-Type": "application/json"})  # brackets inside a string are no nesting
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][:2] == ["body", "context"]
    assert client.get("/health").status_code == 200


@pytest.mark.parametrize("key", [" 3", "+3", "\u0663", "3 ", "0x3", "-1", "3.0", "1" * 30])
def test_sparse_context_keys_are_plain_ascii_decimal(svc, key):
    client, rank, admin, app = svc
    r = client.post("/rank", json={"context": {key: 1.0}}, headers=rank)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][:2] == ["body", "context"], r.text
    assert counts(app.state.engine.cfg.db) == (0, 0)


def test_sparse_context_duplicate_keys_are_refused(svc):
    client, rank, admin, app = svc
    for raw in (b'{"context": {"3": 1.0, "3": 2.0}}', b'{"context": {"3": 1.0, "03": 2.0}}'):
        r = client.post("/rank", content=raw, headers={**rank, "Content-Type": "application/json"})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"][:2] == ["body", "context"], r.text
    assert counts(app.state.engine.cfg.db) == (0, 0)
    assert client.post("/rank", json={"context": {"3": 1.0, "0": 2.0}}, headers=rank).status_code == 200


# ------------------------------------------------------------------ /policy/evaluate
def test_policy_evaluate_runs_off_the_event_loop_and_refuses_divergent_candidates(svc, monkeypatch):
    pytest.importorskip("noisyfeedback.ope")
    import noisyfeedback.service.evaluate as evaluate

    client, rank, admin, app = svc
    rng = np.random.default_rng(1)
    for _ in range(40):
        b = client.post("/rank", json={"context": (1e3 * rng.normal(size=D)).tolist()}, headers=rank).json()
        client.post("/reward", json={"event_id": b["event_id"], "reward": int(b["action"] == 0)}, headers=rank)
    threads = []
    real = evaluate.evaluate_candidate

    def spy(*a, **kw):
        threads.append(threading.current_thread())
        return real(*a, **kw)

    monkeypatch.setattr(evaluate, "evaluate_candidate", spy)
    assert client.get("/policy/evaluate", params={"candidate": "deployed"}, headers=admin).status_code == 200
    assert threads and threads[0] is not threading.main_thread()
    assert threads[0].name != "nf-log-writer"
    for params in (["learning_rate=1e300"], ["gamma_scale=1e308"], ["lam=1e-300"], ["gamma=abc"],
                   ["__class__=1"]):
        r = client.get("/policy/evaluate", params={"candidate": "SquareCB", "param": params}, headers=admin)
        assert r.status_code in (200, 422), (params, r.text)
        if r.status_code == 422:
            assert r.json()["detail"][0]["loc"] == ["body", "param"], r.text
        else:
            assert all(np.isfinite([r.json()["value"], r.json()["lower"], r.json()["upper"]]))
    r = client.get("/policy/evaluate", params={"candidate": "CorrectedLogisticRegression"}, headers=admin)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "candidate"]
    assert client.get("/health").status_code == 200


# ------------------------------------------------------------------ snapshots
def drive(cfg, n=30, seed=0, snapshot_every=None):
    """Rank and reward n events through an engine (no HTTP); returns the engine, stopped."""
    engine = Engine(cfg)
    rng = np.random.default_rng(seed)

    async def go():
        engine.start(asyncio.get_running_loop())
        for _ in range(n):
            r = await engine.rank(rng.normal(size=D).tolist())
            await engine.reward(r["event_id"], int(rng.random() < 0.5))
        engine.stop()

    asyncio.run(go())
    engine.storage.close()
    return engine


def same_model(a, b):
    np.testing.assert_array_equal(a.learner.W_, b.learner.W_)
    assert a.learner.rng_.bit_generator.state == b.learner.rng_.bit_generator.state
    assert a.model_version == b.model_version


def test_restart_with_an_absolute_db_path_from_another_folder(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    served = drive(config(tmp_path, name="x", db="svc.db", snapshot_every=7))
    monkeypatch.chdir(tmp_path / "b")
    again = replayed(str(tmp_path / "a" / "svc.db"))
    assert again.storage.latest_snapshot()[1] > 0
    same_model(served, again)
    assert not (tmp_path / "b" / "svc.db").exists()


@pytest.mark.parametrize("damage", ["replaced by an older one", "truncated", "deleted"])
def test_a_damaged_snapshot_falls_back_to_the_one_before_and_replays_the_log(tmp_path, damage):
    cfg = config(tmp_path, snapshot_every=7)
    served = drive(cfg)
    con = sqlite3.connect(cfg.db)
    rows = con.execute("SELECT path FROM snapshots ORDER BY id").fetchall()
    con.close()
    assert len(rows) >= 3
    files = [tmp_path / p for (p,) in rows]
    latest = files[-1]
    if damage == "replaced by an older one":
        latest.write_bytes(files[-2].read_bytes())
    elif damage == "truncated":
        latest.write_bytes(latest.read_bytes()[:200])
    else:
        latest.unlink()
    same_model(served, replayed(cfg.db))


def test_database_and_snapshots_are_private(tmp_path):
    cfg = config(tmp_path, snapshot_every=5)
    engine = drive(cfg, n=10)
    engine.storage._con()  # a connection open: SQLite keeps its -wal and -shm files
    for suffix in ("", "-wal", "-shm"):
        assert stat.S_IMODE(os.stat(f"{cfg.db}{suffix}").st_mode) == 0o600, suffix
    snaps = list((tmp_path / "s.db.snapshots").iterdir())
    assert len(snaps) >= 2 and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in snaps)
    assert stat.S_IMODE((tmp_path / "s.db.snapshots").stat().st_mode) == 0o700


def test_snapshot_files_are_fsynced_with_their_folder(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), real(fd)))
    Engine(config(tmp_path))
    assert any(p.endswith(".npz") for p in synced)
    assert str(tmp_path / "s.db.snapshots") in synced


# ------------------------------------------------------------------ restarts and the command line
@pytest.mark.parametrize("change,named", [({"learner": "Banditron"}, "Banditron"), ({"n_classes": 5}, "5"),
                                          ({"n_features": 7}, "7"), ({"rho0": 0.2}, "0.2"),
                                          ({"rho1": 0.0}, "0.0")])
def test_restart_with_another_configuration_is_refused_naming_both(tmp_path, change, named):
    Engine(config(tmp_path)).storage.close()
    with pytest.raises(ValueError) as err:
        Engine(config(tmp_path, **change))
    msg = str(err.value)
    stored = {"learner": "RCNBF", "n_classes": "4", "n_features": "6", "rho0": "0.1", "rho1": "0.1"}
    assert named in msg and stored[next(iter(change))] in msg
    Engine(ServiceConfig(db=tmp_path / "s.db")).storage.close()  # the database's configuration still starts


def serve_args(db, *extra):
    return ["serve", "--db", str(db), "--learner", "RCNBF", "--n-classes", "4", "--n-features", "6", *extra]


@pytest.mark.parametrize("extra,words", [
    (["--n-features", "0"], "--n-features"), (["--max-body", "-1"], "--max-body"),
    (["--snapshot-every", "-1"], "--snapshot-every"), (["--param", "gamma=abc"], "gamma"),
    (["--param", "__class__=1"], "__class__"), (["--param", "colour=3"], "colour"),
    (["--rho0", "1.5"], "--rho0"), (["--mode", "lazy"], "--mode")])
def test_serve_refuses_bad_values_clearly_and_leaves_no_database(tmp_path, extra, words):
    db = tmp_path / "new.db"
    args = serve_args(db, *extra)
    if extra[0] == "--n-features":
        args = ["serve", "--db", str(db), "--learner", "RCNBF", "--n-classes", "4", *extra]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and words in res.output and "Traceback" not in res.output, res.output
    assert not isinstance(res.exception, Exception) or isinstance(res.exception, SystemExit)
    assert list(tmp_path.iterdir()) == []


def test_serve_refuses_bad_models_and_learners(tmp_path):
    (tmp_path / "folder").mkdir()
    runner = CliRunner()
    for args, words in (
            (["--model", str(tmp_path / "folder")], "folder"),
            (["--model", str(tmp_path / "missing.npz")], "no such file"),
            (["--learner", "CorrectedLogisticRegression", "--n-classes", "4", "--n-features", "6"], "RCNBF"),
            (["--learner", "NoSuch", "--n-classes", "4", "--n-features", "6"], "Banditron"),
            ([], "--learner")):
        res = runner.invoke(cli, ["serve", "--db", str(tmp_path / "new.db"), *args])
        assert res.exit_code == 2 and words in res.output and "Traceback" not in res.output, (args, res.output)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"]
    res = runner.invoke(cli, ["serve", "--db", str(tmp_path / "nope" / "svc.db"), "--learner", "RCNBF"])
    assert res.exit_code == 2 and "does not exist" in res.output
    res = runner.invoke(cli, ["keys", "create", "--db", str(tmp_path / "nope" / "svc.db")])
    assert res.exit_code == 2 and "does not exist" in res.output and not (tmp_path / "nope").exists()
    for cmd in (["keys", "list"], ["keys", "revoke", "abc"]):
        res = runner.invoke(cli, [*cmd, "--db", str(tmp_path / "mistyped.db")])
        assert res.exit_code == 2 and "no service database" in res.output, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"]


def test_export_log_refuses_to_overwrite_picks_the_format_by_suffix_and_explains(svc, tmp_path):
    import pandas as pd

    client, rank, admin, app = svc
    for _ in range(3):
        b = client.post("/rank", json={"context": [0.5] * D}, headers=rank).json()
        client.post("/reward", json={"event_id": b["event_id"], "reward": 1}, headers=rank)
    db = str(app.state.engine.cfg.db)
    runner = CliRunner()
    out = tmp_path / "out.csv"
    out.write_text("precious")
    res = runner.invoke(cli, ["export-log", "--db", db, "-o", str(out)])
    assert res.exit_code == 2 and "--force" in res.output and out.read_text() == "precious"
    res = runner.invoke(cli, ["export-log", "--db", db, "-o", str(out), "--force"])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(out)
    assert len(df) == 3 and [f"x{j}" for j in range(D)] == [c for c in df.columns if c.startswith("x")]
    pq = tmp_path / "out.parquet"
    assert runner.invoke(cli, ["export-log", "--db", db, "-o", str(pq)]).exit_code == 0
    assert len(pd.read_parquet(pq)) == 3
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    (tmp_path / "dir.csv").mkdir()
    for target, words in ((tmp_path / "out.txt", "suffix"), (tmp_path / "dir.csv", "folder"),
                          (tmp_path / "no" / "x.csv", "does not exist")):
        res = runner.invoke(cli, ["export-log", "--db", db, "-o", str(target)])
        assert res.exit_code == 2 and words in res.output and "Traceback" not in res.output, res.output
    res = runner.invoke(cli, ["export-log", "--db", str(tmp_path / "typo.db"), "-o", str(tmp_path / "y.vw")])
    assert res.exit_code == 2 and "no service database" in res.output and not (tmp_path / "typo.db").exists()
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        res = runner.invoke(cli, ["export-log", "--db", db, "-o", str(ro / "x.vw")])
        assert res.exit_code == 2 and "not writable" in res.output


# ------------------------------------------------------------------ apprentice report
def test_apprentice_report_gives_the_mean_reward_of_both(svc):
    client, rank, admin, app = svc
    client.post("/mode", json={"mode": "apprentice"}, headers=admin)
    rng = np.random.default_rng(2)
    for t in range(60):
        x = rng.normal(size=D)
        b = client.post("/rank", json={"context": x.tolist(), "default_action": t % 2}, headers=rank).json()
        client.post("/reward", json={"event_id": b["event_id"], "reward": int(t % 3 == 0)}, headers=rank)
    rep = client.get("/apprentice", headers=rank).json()
    assert rep["reward_default"] == pytest.approx(20 / 60)
    lo, hi = rep["reward_learned_lower"], rep["reward_learned_upper"]
    assert 0 <= lo <= hi <= 1 and hi - lo == pytest.approx(1 - rep["agreement"])
    text = client.get("/metrics", headers=rank).text
    assert "nf_apprentice_reward_learned_lower " in text and "nf_apprentice_reward_learned_upper " in text


# ------------------------------------------------------------------ the learner's public API only
PRIVATE = {"kernel_view", "_validate_params", "_init_state", "_get_param_names", "_learned_attributes", "_check_X",
           "_simulate_chunk", "_reset", "_check_params", "_get_rng", "_extra_state"}


def test_the_service_imports_no_kernel_and_no_private_learner_name():
    import ast
    import pathlib

    import noisyfeedback.service as service

    root = pathlib.Path(service.__file__).parent
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                assert "kernels" not in module and "learners" not in module, (path, module)
                assert not any(a.name.startswith("_") for a in node.names), (path, module)
            elif isinstance(node, ast.Import):
                assert not any("kernels" in a.name or "learners" in a.name for a in node.names), path
            elif isinstance(node, (ast.Attribute, ast.Name)):
                name = node.attr if isinstance(node, ast.Attribute) else node.id
                assert name not in PRIVATE, (path, name)


def test_a_state_that_turns_non_finite_without_an_error_is_rebuilt_from_the_log(svc, monkeypatch):
    """The service's own guard behind the learner's: if an update leaves the state non-finite without
    raising, the model is rebuilt from the log without that reward, which is refused (422) and removed."""
    client, rank, admin, app = svc
    engine = app.state.engine
    klass = type(engine.learner)
    real = klass.learn

    def learn(self, X, actions, feedback, propensities):
        out = real(self, X, actions, feedback, propensities)
        if (np.asarray(X)[:, 0] == 123.0).any():
            self.W_[0, 0] = np.nan  # as a learner without its own check would
        return out

    monkeypatch.setattr(klass, "learn", learn)
    rng = np.random.default_rng(4)
    for _ in range(5):
        b = client.post("/rank", json={"context": rng.normal(size=D).tolist()}, headers=rank).json()
        client.post("/reward", json={"event_id": b["event_id"], "reward": 1}, headers=rank)
    bad = client.post("/rank", json={"context": [123.0] + [0.0] * (D - 1)}, headers=rank).json()
    before = counts(engine.cfg.db)
    r = client.post("/reward", json={"event_id": bad["event_id"], "reward": 1}, headers=rank)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "event_id"], r.text
    assert counts(engine.cfg.db) == before  # the reward is not in the log
    assert finite_state(engine.learner)
    assert_serving(client, rank, app)
    rebuilt = replayed(engine.cfg.db)
    np.testing.assert_array_equal(rebuilt.learner.W_, engine.learner.W_)
    assert rebuilt.learner.rng_.bit_generator.state == engine.learner.rng_.bit_generator.state


@pytest.mark.parametrize("explained", [True, False])
def test_a_model_without_a_finite_distribution_or_probability_draws_nothing(explained):
    """choose() refuses (422 "context") a distribution that is not finite or does not sum to 1, and a
    draw whose probability is not in (0, 1]; each time the learner's stream is left as it was."""
    import noisyfeedback as nf
    from noisyfeedback.service.choice import NO_DISTRIBUTION, NO_PROBABILITY, choose
    from noisyfeedback.service.errors import Invalid

    X = np.zeros((1, 3))
    for dist, prob, message in (([np.nan, 0.5, 0.5], 0.5, NO_DISTRIBUTION), ([0.7, 0.7, 0.1], 0.7, NO_DISTRIBUTION),
                                ([1 / 3] * 3, 0.0, NO_PROBABILITY), ([1 / 3] * 3, 1 / 3, None)):
        learner = nf.Banditron(3, seed=0).fit_logged(X, [0], [1.0], [1.0])

        def act(x, allowed=None, learner=learner, prob=prob):
            learner.rng_.random(learner.draws_per_round)
            return np.array([1]), np.array([prob])

        learner.act = act
        learner.action_probabilities = lambda x, allowed=None, dist=dist: np.array([dist])
        learner.predict = lambda x: np.array([0])
        if explained:
            learner.act_explained = lambda x, act=act, dist=dist: (*act(x), np.array([dist]), np.array([0]))
        else:
            learner.act_explained = None
        before = learner.rng_.bit_generator.state
        if message is None:
            assert choose(learner, X, 3, 1, None)[:2] == (1, 1 / 3)
            assert learner.rng_.bit_generator.state != before
            continue
        with pytest.raises(Invalid) as err:
            choose(learner, X, 3, 1, None)
        assert (err.value.field, err.value.message) == ("context", message)
        assert learner.rng_.bit_generator.state == before
