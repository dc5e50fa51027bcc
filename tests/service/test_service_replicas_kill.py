"""Two replica server processes on one PostgreSQL log under a concurrent burst of rank+reward pairs, the
requests alternated between them; one is killed with SIGKILL mid-burst (its requests then go to the
other) and restarted. Afterwards: every acknowledged event and reward is in the log, both replicas
reach the last reward, and their models equal each other and an offline replay of the log, bit for bit;
the restarted replica's random stream is its initial stream advanced by exactly its own logged draws.

2,000 pairs (marked slow: about 25 s on 2 cores; ``NF_REPLICA_PAIRS=5000`` runs the same checks on
more). The throw-away server: tests/pg_cluster.py.

And the same two processes under 200 pairs a second while the PostgreSQL server restarts: requests fail
only while it is away (and up to 5 s after), /health says so, and both serve again by themselves with
nothing acknowledged lost and models equal to a replay.
"""

import asyncio
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
import orjson
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
#: rank+reward pairs of the burst (8 client threads: about 8 in flight when a replica is killed, whatever the count)
PAIRS = int(os.environ.get("NF_REPLICA_PAIRS", "2000"))


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
        return self.launch().wait_up()

    def launch(self):
        self.starts += 1
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        out = open(os.path.join(self.log_dir, f"{self.name}-{self.starts}.log"), "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "noisyfeedback.cli", "serve", "--db", self.dsn, "--replica", self.name,
             "--snapshot-dir", str(self.snapshots), "--port", str(self.port), "--learner", "RCNBF",
             "--n-classes", str(K), "--n-features", str(D), "--param", f"gamma={PARAMS['gamma']}",
             "--param", f"seed={PARAMS['seed']}", "--rho0", "0.1", "--rho1", "0.05", "--snapshot-every", "700",
             "--poll-interval", "0.01"], env=env, stdout=out, stderr=subprocess.STDOUT)
        self.out = out.name
        return self

    def wait_up(self):
        t_end = time.monotonic() + 120
        while time.monotonic() < t_end:
            assert self.proc.poll() is None, f"replica {self.name} exited: see {self.out}"
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
        # every acknowledged event and reward is in the log, and so is every event whose answer was lost
        assert_log_and_models(dsn, replicas, head, acked_events, acked_rewards)
        st = open_storage(dsn, create=False)
        logged = {row[1] for row in st.log()}
        st.close()
        assert all(eid in logged for eid in unknown)
        assert len(acked_events) + len(unknown) == PAIRS
    finally:
        for r in replicas:
            r.stop()


def assert_log_and_models(dsn, replicas, head, acked_events, acked_rewards):
    """Every acknowledged event (with its action) and reward is in the log; every replica reaches the last
    reward, counts each reward once (/metrics), and its model and random stream equal an offline replay
    of the log, bit for bit. Returns the number of rewards in the log."""
    st = open_storage(dsn, create=False)
    log = {row[1]: row for row in st.log()}
    last = st.max_reward_seq()
    st.close()
    for eid, action in acked_events.items():
        assert eid in log and int(log[eid][4]) == action, eid
    for eid, click in acked_rewards.items():
        assert log[eid][13] == click, eid
    t_end = time.monotonic() + 60
    while not all(httpx.get(r.url + "/health").json()["model_version"] == last for r in replicas):
        assert time.monotonic() < t_end, "the replicas did not reach the last reward"
        time.sleep(0.05)
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
    for r in replicas:  # each reward counted once, by every replica
        text = httpx.get(r.url + "/metrics", headers=head).text
        assert f'nf_events_total{{replica="{r.name}"}}' in text
        counted = [ln for ln in text.splitlines() if ln.startswith("nf_rewards_total ")][0]
        assert float(counted.split()[1]) == len(rows), r.name
    return len(rows)


RATE = 200.0  # rank+reward pairs a second, over both replicas
WORKERS = 32  # pairs in flight at most (a pair waits for its rank's answer before its reward)
DOWN = 2.5  # seconds without a server: longer than the service's retries of a request (2 s)


class Conn:
    """A keep-alive HTTP/1.1 connection on asyncio streams (a small fraction of httpx's CPU per request,
    which matters on 2 cores): GET or POST JSON, the status and the body."""

    def __init__(self, port: int, head: dict):
        self.port = port
        self.head = "".join(f"{k}: {v}\r\n" for k, v in head.items()).encode()

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        return self

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        self.writer.write(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + self.head
                          + b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode()
                          + b"\r\n\r\n" + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        n = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                n = int(line[15:])
        return int(head[9:12]), await self.reader.readexactly(n)

    def close(self):
        self.writer.close()


@pytest.mark.slow
def test_a_postgresql_restart_under_load_fails_requests_only_while_it_lasts(cluster_dsn, tmp_path):
    """Two replica processes under 200 rank+reward pairs a second (pair k ranks on replica k mod 2 and
    sends its reward to the other, on a fixed schedule) while PostgreSQL restarts (a fast stop, 2.5 s
    without a server, a start: longer than a request is retried, so some fail and the replicas repair).
    Requests answer 200 or 503 (never 500, never the driver's text), and fail only from the stop until at
    most 5 s after the start; /health answers 503 on both replicas whenever it is asked while the server
    is stopped; afterwards both serve the load again (and say so) without a restart of their own; every
    acknowledged event and reward is in the log and both models and random streams equal a replay."""
    from pg_cluster import restart

    dsn = new_database(cluster_dsn)
    head = {"Authorization": f"Bearer {create_key(dsn, 'admin')}"}
    snaps = tmp_path / "snapshots"
    replicas = [Replica(n, dsn, snaps, str(tmp_path)).launch() for n in "ab"]
    try:
        for r in replicas:
            r.wait_up()
        pids = [r.proc.pid for r in replicas]
        rng = np.random.default_rng(13)
        W = rng.normal(size=(K, D))
        n_pairs = int(RATE * 9.0)  # 9 s of schedule: the restart from 2 s on, then service again
        X = rng.normal(size=(n_pairs, D))
        acked_events, acked_rewards = {}, {}
        failures, bad, health, times = [], [], [], {}
        sent, sent_at = [], {}

        async def load():
            t0 = time.monotonic()
            busy = [True]
            todo = iter(range(n_pairs))

            async def post(conns, c, path, body):
                status, text = await conns[c].request("POST", path, orjson.dumps(body))
                if status != 200:
                    failures.append((time.monotonic(), replicas[c].name, path, status))
                    if status != 503 or b"psycopg" in text or b"connection" in text.lower():
                        bad.append((status, text))
                return status, text

            async def worker():
                conns = [await Conn(r.port, head).open() for r in replicas]
                try:
                    for k in todo:  # each pair at its time on the schedule (or as soon as a worker is free)
                        await asyncio.sleep(max(0.0, t0 + k / RATE - time.monotonic()))
                        sent.append(time.monotonic())
                        sent_at[k] = sent[-1]
                        eid = f"p{k}"
                        status, text = await post(conns, k % 2, "/rank", {"context": X[k].tolist(), "event_id": eid})
                        if status != 200:
                            continue
                        action = orjson.loads(text)["action"]
                        acked_events[eid] = action
                        click = int(action == int(np.argmax(W @ X[k])))
                        status, text = await post(conns, (k + 1) % 2, "/reward", {"event_id": eid, "reward": click})
                        if status == 200:
                            assert orjson.loads(text)["status"] == "accepted", text
                            acked_rewards[eid] = click
                finally:
                    for c in conns:
                        c.close()

            async def sample_health():
                conns = [await Conn(r.port, {}).open() for r in replicas]
                while busy[0]:
                    for c, r in enumerate(replicas):
                        asked = time.monotonic()
                        status, _ = await conns[c].request("GET", "/health")
                        health.append((asked, time.monotonic(), r.name, status))
                    await asyncio.sleep(0.05)
                for c in conns:
                    c.close()

            async def restart_later():
                await asyncio.sleep(2.0)
                await asyncio.to_thread(restart, cluster_dsn, DOWN, times)

            sampler = asyncio.ensure_future(sample_health())
            try:
                await asyncio.gather(restart_later(), *(worker() for _ in range(WORKERS)))
            finally:
                busy[0] = False
                await sampler
            return t0

        t0 = asyncio.run(load())
        duration = sent[-1] - sent[0]
        rel = {k: round(v - t0, 2) for k, v in times.items()}
        fail_t = [round(f[0] - t0, 2) for f in failures]
        print(f"restart {rel}; {len(sent)} pairs sent in {duration:.1f} s ({len(sent) / duration:.0f}/s); "
              f"{len(acked_events)} events and {len(acked_rewards)} rewards acknowledged; {len(failures)} failed "
              f"requests, from {min(fail_t, default=None)} to {max(fail_t, default=None)} s; "
              f"/health samples {len(health)} ({sum(h[3] == 503 for h in health)} of them 503)")
        assert not bad, bad[:3]
        assert len(sent) == n_pairs and len(sent) / duration >= 0.75 * RATE  # the load was offered
        # failures only from the stop until 5 s after the start
        for t, *what in failures:
            assert times["stop"] <= t <= times["up"] + 5.0, (round(t - t0, 2), what, rel)
        # /health: 503 on each replica whenever asked (and answered) while the server was stopped
        during = [h for h in health if times["stopped"] <= h[0] and h[1] <= times["start"]]
        for r in replicas:
            seen = [h[3] for h in during if h[2] == r.name]
            assert seen and set(seen) == {503}, (r.name, seen)
        # afterwards: both serve, and say so, in the same processes
        assert [r.proc.pid for r in replicas] == pids and all(r.proc.poll() is None for r in replicas)
        assert all(r.starts == 1 for r in replicas)
        assert [httpx.get(r.url + "/health").status_code for r in replicas] == [200, 200]
        assert {h[3] for h in health if h[0] > times["up"] + 5.0} <= {200}
        # ... and served the load again: pairs sent after the start were acknowledged by both
        after = [k for k in range(n_pairs) if sent_at[k] > times["up"] and f"p{k}" in acked_rewards]
        assert {k % 2 for k in after} == {0, 1} and len(after) >= 0.5 * RATE * (sent[-1] - times["up"]), len(after)
        assert len(acked_rewards) > 0.5 * n_pairs
        n = assert_log_and_models(dsn, replicas, head, acked_events, acked_rewards)
        print(f"{n} rewards in the log; both models equal its replay")
    finally:
        for r in replicas:
            r.stop()
