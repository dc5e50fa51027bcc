"""The decision service as a real server (uvicorn subprocess on 127.0.0.1): acceptance 1 and 2 of #20.

1. Driven in order over HTTP with the simulate protocol (digits, flipped rewards), the service's learner
   makes exactly the mistakes ``nf.simulate`` makes and ends with the same weights, bit for bit.
2. SIGKILL during a burst of rewards: every acknowledged reward is in the log and the rebuilt model equals
   a model trained on the log, bit for bit (weights, random stream and the distribution /rank returns).
"""

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

import noisyfeedback as nf  # noqa: E402
from noisyfeedback.service.auth import create_key  # noqa: E402
from noisyfeedback.simulate import round_order, simulation_streams  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``noisyfeedback serve`` in a subprocess; ``start`` waits (bounded) until /health answers."""

    def __init__(self, db, *args):
        self.db, self.args, self.proc = str(db), list(args), None

    def start(self, timeout=90.0):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "noisyfeedback.cli", "serve", "--db", self.db, "--port", str(self.port),
               *self.args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.proc.stderr.read().decode()}")
            try:
                if httpx.get(self.url + "/health", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        raise RuntimeError("server did not start")

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        if self.proc is not None:
            self.proc.stderr.close()
        self.proc = None

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self.kill()


@pytest.fixture
def servers():
    started = []

    def make(db, *args):
        s = Server(db, *args)
        started.append(s)
        return s

    yield make
    for s in started:
        s.kill()


def test_acceptance_service_driven_in_order_equals_simulate(tmp_path, servers):
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    rho0, rho1, n = 0.1, 0.2, 1000
    channel = nf.feedback.NoisyBandit(rho0, rho1)
    make = lambda: nf.RCNBF(10, gamma=0.1, rho0=rho0, rho1=rho1, seed=4)  # noqa: E731
    sim_learner = make()
    trace = nf.simulate(sim_learner, X, y, channel, n_rounds=n, seed=11)

    db = tmp_path / "svc.db"
    key = create_key(db, "admin")
    server = servers(db, "--learner", "RCNBF", "--n-classes", "10", "--n-features", "64", "--param", "gamma=0.1",
                     "--param", "seed=4", "--rho0", str(rho0), "--rho1", str(rho1), "--sync", "NORMAL").start()
    rng_order, rng_feedback, _ = simulation_streams(11)
    order = round_order(X.shape[0], n, rng_order)
    mistakes = 0
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as c:
        for t in range(n):
            i = int(order[t])
            r = c.post("/rank", json={"context": X[i].tolist()})
            assert r.status_code == 200, r.text
            body = r.json()
            mistakes += body["greedy"] != y[i]
            fb = channel.respond(y[i:i + 1], np.array([body["action"]]), rng_feedback)
            r = c.post("/reward", json={"event_id": body["event_id"], "reward": int(fb[0])})
            assert r.status_code == 200 and r.json()["model_version"] == t + 1, r.text
        snap = c.post("/snapshot").json()
    server.stop()
    assert mistakes == trace.mistakes  # exactly: driven in order
    served = nf.load(snap["path"])
    np.testing.assert_array_equal(served.W_, sim_learner.W_)  # bit for bit
    assert served.rng_.bit_generator.state == sim_learner.rng_.bit_generator.state


def reference_from_log(db):
    """A model trained on the log from the first snapshot: draws of every event, then every reward in seq order."""
    con = sqlite3.connect(db)
    path = con.execute("SELECT path FROM snapshots ORDER BY id LIMIT 1").fetchone()[0]
    learner = nf.load(os.path.join(os.path.dirname(db), path))  # stored relative to the database's folder
    draws = con.execute("SELECT COALESCE(SUM(n_draws), 0) FROM events").fetchone()[0]
    learner.rng_.random(draws)
    for reward, ctx, action, prob in con.execute(
            "SELECT r.reward, e.context, e.action, e.probability FROM rewards r JOIN events e "
            "ON e.event_id = r.event_id ORDER BY r.seq"):
        x = np.frombuffer(ctx, dtype=np.float64)[None, :]
        learner.learn(x, np.array([int(action)]), np.array([int(reward)]), np.array([prob]))
    logged = {row[0] for row in con.execute("SELECT event_id FROM rewards")}
    con.close()
    return learner, logged


def test_acceptance_sigkill_during_reward_burst_loses_no_acknowledged_reward(tmp_path, servers):
    X, y = nf.datasets.synsep(n_samples=600, seed=2)
    d = X.shape[1]
    db = tmp_path / "svc.db"
    key = create_key(db, "admin")
    args = ("--learner", "Banditron", "--n-classes", "9", "--n-features", str(d), "--param", "gamma=0.2",
            "--snapshot-every", "150")
    headers = {"Authorization": f"Bearer {key}"}
    probe = {"context": X[0].tolist()}
    server = servers(db, *args).start()

    def post_all(url, path, bodies, acked, stop_after=None, killed=None):
        def one(chunk):
            with httpx.Client(base_url=url, headers=headers, timeout=10) as c:
                for body in chunk:
                    try:
                        r = c.post(path, json=body)
                    except httpx.HTTPError:
                        return
                    if r.status_code == 200:
                        acked.append(body)
                        if stop_after is not None and len(acked) >= stop_after:
                            killed.set()
                    if killed is not None and killed.is_set():
                        time.sleep(0.02)  # keep the burst going, slowly enough that the kill lands during it
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(one, [bodies[k::8] for k in range(8)]))

    ranked = []
    post_all(server.url, "/rank", [{"context": X[i].tolist(), "event_id": f"e{i}"} for i in range(600)], ranked)
    assert len(ranked) == 600
    truth = {f"e{i}": int(y[i]) for i in range(600)}
    con = sqlite3.connect(db)
    actions = dict(con.execute("SELECT event_id, action FROM events"))
    con.close()
    rewards = [{"event_id": e, "reward": int(int(actions[e]) == truth[e])} for e in sorted(truth)]

    # burst 1, all acknowledged; the probe's distribution just before the kill equals the one after restart
    acked1 = []
    post_all(server.url, "/reward", rewards[:250], acked1)
    assert len(acked1) == 250
    before = httpx.post(server.url + "/rank", json=probe, headers=headers).json()["distribution"]
    server.kill()
    server.start()
    after = httpx.post(server.url + "/rank", json=probe, headers=headers).json()["distribution"]
    assert after == before

    # burst 2, killed while rewards are in flight
    acked2, killed = [], threading.Event()
    sender = threading.Thread(target=post_all, args=(server.url, "/reward", rewards[250:], acked2, 60, killed))
    sender.start()
    assert killed.wait(60)
    server.kill()
    sender.join(60)
    assert 60 <= len(acked2) < 350  # the kill landed during the burst
    reference, logged = reference_from_log(db)
    assert {b["event_id"] for b in acked1 + acked2} <= logged  # acknowledged => in the log

    server.start()
    with httpx.Client(base_url=server.url, headers=headers) as c:
        dist = c.post("/rank", json=probe).json()["distribution"]
        snap = c.post("/snapshot").json()
    server.stop()
    rebuilt = nf.load(snap["path"])
    np.testing.assert_array_equal(rebuilt.W_, reference.W_)  # bit for bit
    reference.rng_.random(1)  # the probe after the restart drew one uniform
    assert rebuilt.rng_.bit_generator.state == reference.rng_.bit_generator.state
    assert dist == reference.action_probabilities(X[:1])[0].tolist()


def test_a_huge_header_is_refused_while_it_is_read(tmp_path, servers):
    """The server answers 431 and closes once a request's head passes --max-header, long before a
    200 MB header would have been read; /health answers right after."""
    db = tmp_path / "h.db"
    server = servers(db, "--learner", "Banditron", "--n-classes", "3", "--n-features", "4",
                     "--max-header", "8192").start()
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ")
        sent, answer = 0, b""
        try:
            while sent < 200 << 20:
                s.sendall(b"a" * 65536)
                sent += 65536
        except OSError:  # the server closed the connection
            pass
        try:
            answer = s.recv(4096)
        except OSError:
            pass
    assert sent < 8 << 20, sent  # refused early
    assert answer.startswith(b"HTTP/1.1 431"), answer
    assert time.monotonic() - t0 < 30
    assert httpx.get(server.url + "/health", timeout=5).status_code == 200
    server.stop()


def test_serve_freezes_what_start_up_made_out_of_the_collector(monkeypatch):
    """``serve`` freezes the objects alive at start-up (gc.freeze) before uvicorn runs: a full collection
    then walks only what requests made, instead of holding every request while it walks the whole process."""
    import gc

    import uvicorn

    from noisyfeedback.service import server

    seen = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.append((gc.get_freeze_count(), kw["port"])))
    try:
        server.run(object(), "127.0.0.1", 1234, 8192)
    finally:
        frozen = gc.get_freeze_count()
        gc.unfreeze()
    assert seen and seen[0][1] == 1234 and seen[0][0] > 1000 and frozen > 1000
