"""Two replica server processes on one PostgreSQL log under a concurrent burst of rank+reward pairs, the
requests alternated between them; one is killed with SIGKILL mid-burst (its requests then go to the
other) and restarted. Afterwards: every acknowledged event and reward is in the log, both replicas
reach the last reward, and their models equal each other and an offline replay of the log, bit for bit;
the restarted replica's random stream is its initial stream advanced by exactly its own logged draws.

5,000 pairs (marked slow: a minute or more on 2 cores; ``NF_REPLICA_PAIRS=1500`` runs the same checks on
fewer). The throw-away server: tests/pg_cluster.py.
"""

import hashlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from pg_cluster import cluster, new_database

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")

from noisyfeedback import base  # noqa: E402
from noisyfeedback.service.auth import create_key  # noqa: E402
from noisyfeedback.service.learner import make_learner  # noqa: E402
from noisyfeedback.service.stores import open_storage  # noqa: E402

K, D = 10, 16
PARAMS = {"gamma": 0.1, "seed": 7}
PAIRS = int(os.environ.get("NF_REPLICA_PAIRS", "5000"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Replica:
    def __init__(self, name, dsn, snapshots, log_dir):
        self.name, self.dsn, self.snapshots, self.log_dir = name, dsn, snapshots, log_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None
        self.starts = 0

    def start(self):
        self.starts += 1
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        out = open(os.path.join(self.log_dir, f"{self.name}-{self.starts}.log"), "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "noisyfeedback.cli", "serve", "--db", self.dsn, "--replica", self.name,
             "--snapshot-dir", str(self.snapshots), "--port", str(self.port), "--learner", "RCNBF",
             "--n-classes", str(K), "--n-features", str(D), "--param", f"gamma={PARAMS['gamma']}",
             "--param", f"seed={PARAMS['seed']}", "--rho0", "0.1", "--rho1", "0.05", "--snapshot-every", "700",
             "--poll-interval", "0.01"], env=env, stdout=out, stderr=subprocess.STDOUT)
        t_end = time.monotonic() + 120
        while time.monotonic() < t_end:
            assert self.proc.poll() is None, f"replica {self.name} exited: see {out.name}"
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"replica {self.name} did not start")

    def kill9(self):
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture(scope="module")
def cluster_dsn():
    with cluster() as dsn:
        yield dsn


def learned_state(learner) -> dict:
    """Every learned attribute but the random stream."""
    return {k: v for k, v in vars(learner).items() if k.endswith("_") and not k.startswith("_") and k != "rng_"}


def replica_stream(dsn, name):
    """The documented initial stream of a replica: PCG64(SeedSequence(replica_entropy, spawn_key = the
    first 16 bytes of SHA-256(name) as four little-endian 32-bit words))."""
    st = open_storage(dsn, create=False)
    entropy = int(st.get_meta("replica_entropy"))
    st.close()
    digest = hashlib.sha256(name.encode()).digest()[:16]
    key = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=key)))


@pytest.mark.slow
def test_two_replica_processes_kill9_and_restart(cluster_dsn, tmp_path):
    dsn = new_database(cluster_dsn)
    key = create_key(dsn, "admin")
    head = {"Authorization": f"Bearer {key}"}
    snaps = tmp_path / "snapshots"
    a = Replica("a", dsn, snaps, str(tmp_path)).start()
    b = Replica("b", dsn, snaps, str(tmp_path)).start()
    replicas = [a, b]
    down = set()  # replicas that are killed (their requests go to the other)
    rng = np.random.default_rng(11)
    W = rng.normal(size=(K, D))
    X = rng.normal(size=(PAIRS, D))
    acked_events, acked_rewards, unknown = {}, {}, []
    lock = threading.Lock()
    local = threading.local()
    killed_at, restarted_at = int(PAIRS * 0.4), int(PAIRS * 0.7)
    done = [0]

    def client():
        if not hasattr(local, "c"):
            local.c = httpx.Client(timeout=30, headers=head)
        return local.c

    def post(first, path, body):
        """POST to replica ``first`` unless it is down or fails; then to the other one (a retry)."""
        order = [first, 1 - first]
        for attempt in range(40):
            r = replicas[order[attempt % 2]]
            if r.name in down:
                continue
            try:
                resp = client().post(r.url + path, json=body)
            except httpx.HTTPError:
                continue
            if resp.status_code == 503:
                time.sleep(0.05)
                continue
            return resp
        raise AssertionError(f"no replica answered {path} {body}")

    def pair(k):
        eid = f"p{k}"
        resp = post(k % 2, "/rank", {"context": X[k].tolist(), "event_id": eid})
        if resp.status_code == 409:  # logged by a replica that died before answering: no reward is sent
            with lock:
                unknown.append(eid)
        else:
            assert resp.status_code == 200, resp.text
            action = resp.json()["action"]
            with lock:
                acked_events[eid] = action
            click = int(action == int(np.argmax(W @ X[k])))
            resp = post((k + 1) % 2, "/reward", {"event_id": eid, "reward": click})
            assert resp.status_code == 200 and resp.json()["status"] in ("accepted", "duplicate"), resp.text
            with lock:
                acked_rewards[eid] = click
        with lock:
            done[0] += 1

    def chaos():
        while done[0] < killed_at:
            time.sleep(0.005)
        down.add("b")
        b.kill9()  # mid-burst: requests to b are in flight
        while done[0] < restarted_at:
            time.sleep(0.005)
        b.start()
        down.discard("b")

    t0 = time.monotonic()
    try:
        with ThreadPoolExecutor(8) as pool:
            side = pool.submit(chaos)
            list(pool.map(pair, range(PAIRS)))
            side.result()
        print(f"burst {time.monotonic() - t0:.1f} s, {len(unknown)} unknown")
        assert b.starts == 2
        # every acknowledged event and reward is in the log
        st = open_storage(dsn, create=False)
        log = {row[1]: row for row in st.log()}
        last = st.max_reward_seq()
        st.close()
        for eid, action in acked_events.items():
            assert eid in log and int(log[eid][4]) == action, eid
        for eid, click in acked_rewards.items():
            assert log[eid][13] == click, eid
        for eid in unknown:
            assert eid in log
        # both reach the last reward ...
        t_end = time.monotonic() + 60
        while not all(httpx.get(r.url + "/health").json()["model_version"] == last for r in replicas):
            assert time.monotonic() < t_end, "the replicas did not reach the last reward"
            time.sleep(0.05)
        # ... with the same model, equal to an offline replay of the log
        models = {}
        for r in replicas:
            snap = httpx.post(r.url + "/snapshot", headers=head).json()
            assert snap["model_version"] == last
            models[r.name] = (base.load(snap["path"]), snap["event_seq"])
        st = open_storage(dsn, create=False)
        rows = [row for chunk in st.rewards_after(0) for row in chunk]
        draws = {n: st.draws_after(0, models[n][1], replica=n) for n in models}
        st.close()
        replay = make_learner("RCNBF", K, D, PARAMS, 0.1, 0.05)
        Xl = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float64).reshape(len(rows), D)
        replay.learn(Xl, np.array([int(r[3]) for r in rows]), np.array([int(r[1]) for r in rows]),
                     np.array([r[4] for r in rows]))
        expected = learned_state(replay)
        for name, (m, _) in models.items():
            got = learned_state(m)
            assert got.keys() == expected.keys()
            for attr, value in expected.items():  # bit for bit
                assert np.asarray(got[attr]).tobytes() == np.asarray(value).tobytes(), (name, attr)
            s = replica_stream(dsn, name)
            s.random(draws[name])
            assert s.bit_generator.state == m.rng_.bit_generator.state, name
        assert len(acked_events) + len(unknown) == PAIRS
    finally:
        for r in replicas:
            r.stop()
