"""Faults an operator meets: a second process on one SQLite log, a key revoked through another path to the
database, a restart with other parameter values, a service that could never serve, slow headers, and the
Python client's input."""

import math
import os
import socket
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

pytest.importorskip("fastapi")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from typer.testing import CliRunner  # noqa: E402

from noisyfeedback.cli import app as cli  # noqa: E402
from noisyfeedback.client import Client  # noqa: E402
from noisyfeedback.service import ConfigError, ServiceConfig, create_app  # noqa: E402
from noisyfeedback.service.auth import create_key  # noqa: E402


def config(tmp_path, name="svc.db", **kw):
    kw.setdefault("params", {"gamma": 0.2, "seed": 3})
    kw.setdefault("n_classes", 3)
    kw.setdefault("n_features", 2)
    return ServiceConfig(db=tmp_path / name, learner="RCNBF", **kw)


HOLD = ("import sys, time; from noisyfeedback.service.loglock import lock_log; lock_log(sys.argv[1]); "
        "print('held', flush=True); time.sleep(60)")


def test_a_second_process_on_one_sqlite_log_is_refused_naming_the_holder(tmp_path):
    create_app(config(tmp_path)).state.engine.stop()  # the log exists; this process lets go of it
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "svc.db")], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        with pytest.raises(ValueError, match=f"another process \\(pid {holder.pid}\\)"):
            create_app(config(tmp_path))
        os.symlink(tmp_path / "svc.db", tmp_path / "alias.db")  # by another path too
        with pytest.raises(ValueError, match=f"pid {holder.pid}"):
            create_app(config(tmp_path, "alias.db"))
        res = CliRunner().invoke(cli, ["serve", "--db", str(tmp_path / "svc.db")])
        assert res.exit_code == 2 and f"pid {holder.pid}" in res.output and "Traceback" not in res.output
    finally:
        holder.kill()
        holder.wait()
    with TestClient(create_app(config(tmp_path))) as c:  # the holder is gone: it serves
        assert c.get("/health").status_code == 200


def test_a_key_revoked_through_a_symlink_is_refused_on_the_next_request(tmp_path):
    app = create_app(config(tmp_path))
    key = create_key(tmp_path / "svc.db", "admin")
    head = {"Authorization": f"Bearer {key}"}
    os.symlink(tmp_path / "svc.db", tmp_path / "alias.db")
    with TestClient(app) as c:
        assert c.post("/snapshot", headers=head).status_code == 200
        res = CliRunner().invoke(cli, ["keys", "revoke", key, "--db", str(tmp_path / "alias.db")])
        assert res.exit_code == 0, res.output
        assert c.post("/snapshot", headers=head).status_code == 401


def test_a_restart_with_other_parameter_values_is_refused_naming_both(tmp_path):
    create_app(config(tmp_path)).state.engine.stop()
    with pytest.raises(ConfigError, match=r"params\['gamma'\] = 0\.2; params\['gamma'\] 0\.3 differs") as err:
        create_app(config(tmp_path, params={"gamma": 0.3, "seed": 3}))
    assert "--param gamma = 0.2; --param gamma 0.3" in err.value.render(
        lambda o: "--param gamma" if o.startswith("params") else o)
    with pytest.raises(ConfigError, match="seed"):
        create_app(config(tmp_path, params={"seed": 4}))
    with pytest.raises(ConfigError, match="no parameter 'nope'"):
        create_app(config(tmp_path, params={"nope": 1}))
    res = CliRunner().invoke(cli, ["serve", "--db", str(tmp_path / "svc.db"), "--param", "gamma=0.3"])
    assert res.exit_code == 2 and "--param gamma 0.3 differs" in res.output and "0.2" in res.output
    with TestClient(create_app(config(tmp_path))) as c:  # the same values (or none) start
        assert c.get("/health").status_code == 200


def test_configuration_errors_name_fields_and_the_command_line_words_flags(tmp_path):
    with pytest.raises(ConfigError, match="^n_classes must be an integer >= 2") as err:
        config(tmp_path, n_classes=1).check()
    assert err.value.options == ("n_classes",)
    res = CliRunner().invoke(cli, ["serve", "--db", str(tmp_path / "x.db"), "--learner", "RCNBF", "--n-classes",
                                   "1", "--n-features", "2"])
    assert res.exit_code == 2 and "--n-classes must be an integer >= 2" in res.output


def test_more_slots_than_a_request_may_name_are_refused_at_start(tmp_path):
    cfg = ServiceConfig(db=tmp_path / "f.db", learner="SquareCB", action_features=True, bits=6,
                        params={"n_slots": 100})
    with pytest.raises(ConfigError, match="n_slots = 100, but a request names at most 50"):
        create_app(cfg)
    assert not (tmp_path / "f.db").exists()


def _serve(tmp_path, *extra):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "noisyfeedback.cli", "serve", "--db", str(tmp_path / "h.db"),
                             "--learner", "RCNBF", "--n-classes", "3", "--n-features", "2", "--port", str(port),
                             *extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as c:
                c.sendall(b"GET /health HTTP/1.1\r\nhost: x\r\n\r\n")
                if c.recv(64).startswith(b"HTTP/1.1 200"):
                    return proc, port
        except OSError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("the server did not start")


def test_connections_sending_their_headers_slowly_are_closed(tmp_path):
    proc, port = _serve(tmp_path, "--header-timeout", "0.5")
    try:
        slow = []
        for _ in range(5):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /health HTTP/1.1\r\nhost: x\r\n")  # the head never ends
            slow.append(s)
        t0 = time.monotonic()
        for s in slow:
            answer = s.recv(4096)
            assert answer.startswith(b"HTTP/1.1 408"), answer
            assert s.recv(4096) == b""  # closed
            s.close()
        assert time.monotonic() - t0 < 3
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:  # a prompt request is served
            s.sendall(b"GET /health HTTP/1.1\r\nhost: x\r\n\r\n")
            assert s.recv(64).startswith(b"HTTP/1.1 200")
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()


class _Recorder:
    def __init__(self):
        self.paths = []

    def post(self, path, json=None, headers=None):
        self.paths.append(path)

        class R:
            status_code, content = 200, b"{}"

            def json(self):
                return {}
        return R()


def test_the_client_encodes_event_ids_in_paths_and_refuses_bad_backoff():
    rec = _Recorder()
    client = Client("http://x", "k", session=rec)
    client.activate("../../snapshot?x=")
    client.activate("a b/c#d")
    assert rec.paths == ["/events/..%2F..%2Fsnapshot%3Fx%3D/activate", "/events/a%20b%2Fc%23d/activate"]
    for bad in ("..", ".", ""):
        with pytest.raises(ValueError, match="cannot be sent"):
            client.activate(bad)
    for backoff in (math.nan, math.inf, -1.0, "0.1"):
        with pytest.raises(ValueError, match="'backoff' parameter"):
            Client("http://x", "k", backoff=backoff, session=rec)
    with pytest.raises(ValueError, match="'retries' parameter"):
        Client("http://x", "k", retries=-1, session=rec)
    assert np.isfinite(Client("http://x", "k", backoff=0, session=rec).backoff)


def test_a_rank_validates_its_context_once(tmp_path, monkeypatch):
    """The context is checked once, at the boundary (``contexts.context_row``); the learner's methods take
    it as validated (no full ``check_X`` of it), and the answer is the same as with full checks."""
    import noisyfeedback.learners._linear as linear
    from noisyfeedback._validation import TrustedRows
    from noisyfeedback.service import engine as engine_module

    calls = {"boundary": 0, "learner_full": 0, "learner_trusted": 0}
    boundary, full = engine_module.context_row, linear.check_X

    def counted_boundary(*a, **k):
        calls["boundary"] += 1
        return boundary(*a, **k)

    def counted_check(X, *a, **k):
        calls["learner_trusted" if type(X) is TrustedRows else "learner_full"] += 1
        return full(X, *a, **k)

    app = create_app(config(tmp_path, n_features=3))
    key = {"Authorization": f"Bearer {create_key(tmp_path / 'svc.db', 'rank')}"}
    with TestClient(app) as c:
        assert c.post("/rank", json={"context": [0.5, -1.0, 2.0]}, headers=key).status_code == 200  # warm
        monkeypatch.setattr(engine_module, "context_row", counted_boundary)
        monkeypatch.setattr(linear, "check_X", counted_check)
        r = c.post("/rank", json={"context": [0.5, -1.0, 2.0]}, headers=key).json()
    assert calls["boundary"] == 1 and calls["learner_full"] == 0 and calls["learner_trusted"] >= 1, calls
    learner = app.state.engine.learner
    x = np.array([[0.5, -1.0, 2.0]])
    assert r["greedy"] == int(learner.predict(x)[0])  # the same answer as a fully checked call
    np.testing.assert_array_equal(r["distribution"], learner.action_probabilities(x)[0])


def test_a_body_of_thousands_of_actions_is_refused_before_its_structure_is_validated(tmp_path, monkeypatch):
    import json

    from noisyfeedback.service.routers import rank as rank_routes

    body = json.dumps({"context_features": [], "actions": [{"id": f"a{j}", "features": [{"x": j}]}
                                                           for j in range(10_000)]})
    app = create_app(config(tmp_path))
    key = {"Authorization": f"Bearer {create_key(tmp_path / 'svc.db', 'rank')}", "content-type": "application/json"}
    parsed = []
    real = rank_routes.parse_body
    monkeypatch.setattr(rank_routes, "parse_body", lambda *a: (parsed.append(1), real(*a))[1])
    with TestClient(app) as c:
        t0 = time.perf_counter()
        r = c.post("/rank", content=body, headers=key)
        assert r.status_code == 422 and "10000 actions; a request may list at most 50" in r.text, r.text
        assert r.json()["detail"][0]["loc"] == ["body", "actions"]
        assert not parsed and time.perf_counter() - t0 < 5.0  # (a loose bound: shared machines)
        assert c.post("/rank", json={"context": [1.0, 2.0]}, headers=key).status_code == 200 and parsed


def _numeric_service(tmp_path):
    """A numeric service's app and a rank key's header."""
    app = create_app(config(tmp_path))
    key = {"Authorization": f"Bearer {create_key(tmp_path / 'svc.db', 'rank')}"}
    return app, key


def _rank_and_reward(c, key, context, reward) -> str:
    """Rank a context and reward its event (both answered 200); the event's id."""
    event_id = c.post("/rank", json={"context": context}, headers=key).json()["event_id"]
    assert c.post("/reward", json={"event_id": event_id, "reward": reward}, headers=key).status_code == 200
    return event_id


def _break_learning(learner) -> None:
    """This learner object (not the one rebuilt from the log) raises an error that is not a refusal."""
    def fail(*a, **k):
        raise RuntimeError("the learner broke")

    learner.learn = fail


def _healthy_again(c) -> None:
    for _ in range(200):  # the repair rebuilds the model from the log
        if c.get("/health").status_code == 200:
            break
        time.sleep(0.05)
    assert c.get("/health").status_code == 200


def test_a_learner_that_raises_after_the_reward_is_logged_answers_and_the_service_recovers(tmp_path):
    """A learner error that is not a refusal, after the reward is committed: the request is answered (503,
    saying the reward is logged) instead of waiting for ever, the model is rebuilt from the log (so it has
    learned that reward, as a replay would), and the next requests work."""
    import threading

    app, key = _numeric_service(tmp_path)
    with TestClient(app) as c:
        _rank_and_reward(c, key, [1.0, 2.0], 1)
        engine = app.state.engine
        broken = engine.learner
        _break_learning(broken)
        ev = c.post("/rank", json={"context": [0.5, -1.0]}, headers=key).json()["event_id"]
        answer = {}
        t = threading.Thread(target=lambda: answer.update(r=c.post(
            "/reward", json={"event_id": ev, "reward": 1}, headers=key)), daemon=True)
        t.start()
        t.join(20)
        assert "r" in answer, "the reward request never returned"
        r = answer["r"]
        assert r.status_code == 503 and "logged" in r.json()["detail"], r.text
        _healthy_again(c)
        assert engine.learner is not broken and engine.model_version == 2  # the logged reward, learned
        again = c.post("/reward", json={"event_id": ev, "reward": 1}, headers=key)  # the retry: already there
        assert again.status_code == 200, again.text
        _rank_and_reward(c, key, [1.0, 0.0], 0)
        assert engine.model_version == 3


def test_the_model_is_rebuilt_off_the_event_loop(tmp_path):
    """While the model is rebuilt from the log after a failure, and one of its reads of the log takes a
    second (a slow or reconnecting database), /health answers at once with 503; once the model is rebuilt
    it answers 200, and the rebuilt model is the replay of the log."""
    import threading

    app, key = _numeric_service(tmp_path)
    with TestClient(app) as c:
        _rank_and_reward(c, key, [1.0, 2.0], 1)
        engine = app.state.engine
        storage, broken = engine.storage, engine.learner
        reading, real = threading.Event(), storage.stats

        def slow_stats(*a, **k):  # the last read of the rebuild
            reading.set()
            time.sleep(1.0)
            return real(*a, **k)

        storage.stats = slow_stats
        _break_learning(broken)
        ev = c.post("/rank", json={"context": [0.5, -1.0]}, headers=key).json()["event_id"]
        assert c.post("/reward", json={"event_id": ev, "reward": 1}, headers=key).status_code == 503
        assert reading.wait(10), "the model was not rebuilt"
        t0 = time.perf_counter()
        health = c.get("/health")
        waited = time.perf_counter() - t0
        assert health.status_code == 503 and waited < 0.6, (health.status_code, waited)
        _healthy_again(c)
        assert engine.learner is not broken and engine.model_version == 2  # the logged reward, learned
        storage.stats = real
        _rank_and_reward(c, key, [1.0, 0.0], 0)
        assert engine.model_version == 3
