"""Load test of the decision service: rank+reward pairs over HTTP on 127.0.0.1, open loop.

Starts ``noisyfeedback serve`` in subprocesses and drives them from one asyncio loop with ``--conns``
workers, each on keep-alive connections (a minimal HTTP/1.1 client on asyncio streams, so that the
generator costs little of the 2 cores). The workers send pairs (a rank, then the reward of the returned
event) on a fixed schedule of ``--rate`` pairs per second in total, for ``--seconds`` seconds (a bounded
count: rate × seconds pairs, of which those not sent 10 s after the end of the schedule are dropped and
reported as not sent); ``--rate 0`` sends as fast as the answers come. Latencies are measured per
request and, per pair, from the time the schedule said to send it (so a server that falls behind shows
in ``pair_p99_sched_ms``). Afterwards the log is checked: every acknowledged rank is an event, every
acknowledged reward a reward, and every replica learned them all.

Backends (``--backend``):

- ``sqlite``: one service on a SQLite log with ``synchronous=FULL`` (every group commit fsynced);
- ``postgres``: ``--replicas`` replicas (default 2) on one throw-away PostgreSQL cluster (``fsync`` and
  ``synchronous_commit`` on), started with Debian's server binaries as the ``postgres`` user when run as
  root; each pair ranks on one replica and sends its reward to the next one (alternated).

Request shapes (``--shape``) are entries of :data:`SHAPES`: the ``serve`` options of the service and a
function from the pair's index and the rank answer to the two request bodies; a new API adds a
:class:`Shape`.

    python benchmarks/service_load.py --seconds 60 --rate 1000
    python benchmarks/service_load.py --seconds 60 --rate 1000 --backend postgres --replicas 2
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- request shapes
@dataclass
class Shape:
    """One API under load: ``serve`` options, the rank route and its bodies, the reward route and the
    reward body built from the rank's answer."""

    name: str
    serve_args: list[str]
    rank_path: str
    rank_bodies: Callable[[int], list[bytes]]  # n -> n distinct rank bodies (cycled)
    reward_path: str | Callable[[dict], str]  # or (the rank's JSON answer) -> the reward's path
    reward_body: Callable[[dict, int], bytes]  # (the rank's JSON answer, pair index) -> body
    describe: str
    #: send the client's own event id (the run's tag and the pair's index) with each rank
    client_ids: bool = False
    #: the success statuses of rank and reward (Personalizer's routes: 201 and 204)
    ok: tuple[int, int] = (200, 200)
    #: the event id's key in a rank body (Personalizer's: eventId)
    id_key: str = "event_id"


def _digits() -> np.ndarray:
    from sklearn.datasets import load_digits

    return load_digits().data


def _numeric_bodies(n: int) -> list[bytes]:
    X = _digits()
    return [json.dumps({"context": X[i % len(X)].tolist()}).encode() for i in range(n)]


NUMERIC = Shape(
    name="numeric",
    serve_args=["--learner", "RCNBF", "--n-classes", "10", "--n-features", "64", "--param", "gamma=0.1",
                "--param", "seed=0", "--rho0", "0.1", "--rho1", "0.1"],
    rank_path="/rank", rank_bodies=_numeric_bodies, reward_path="/reward",
    reward_body=lambda ans, i: b'{"event_id":"%s","reward":%d}' % (ans["event_id"].encode(), ans["action"] % 2),
    describe="numeric API (RCNBF, K = 10, d = 64 dense contexts)")

COUNTRIES = ["fr", "de", "it", "es", "nl", "pl", "se", "pt"]
TOPICS = ["politics", "football", "cinema", "music", "science", "travel", "food", "games", "health", "tech"]


def _catalogue_body(i: int, slots: bool) -> bytes:
    """A page of 10 actions, each with its own hashed features, for a context of hashed features."""
    rng = np.random.default_rng(i)
    body = {"context_features": [{"user": {"country": COUNTRIES[i % len(COUNTRIES)], "age": int(18 + i % 50)}},
                                 {"device": {"mobile": bool(i % 3)}}],
            "actions": [{"id": f"item-{j}",
                         "features": [{"a": {"topic": TOPICS[j], "price": float(rng.uniform(1, 20))}}]}
                        for j in range(10)]}
    if slots:
        body["slots"] = [{"id": "hero"}, {"id": "sidebar"}]
    return json.dumps(body).encode()


def _liked(i: int, action_id: str | None) -> int:
    """The synthetic user's click: a country likes two topics."""
    return int(action_id is not None and int(action_id.split("-")[1]) in (i % len(COUNTRIES), (i + 3) % 10))


FEATURES = Shape(
    name="features",
    serve_args=["--action-features", "--learner", "SquareCB", "--param", "seed=0"],
    rank_path="/rank", rank_bodies=lambda n: [_catalogue_body(i, False) for i in range(n)], reward_path="/reward",
    reward_body=lambda ans, i: b'{"event_id":"%s","reward":%d}' % (ans["event_id"].encode(),
                                                                  _liked(i % 2048, ans["action"])),
    describe="action-feature API (SquareCB, 10 actions with hashed features)")

MULTISLOT = Shape(
    name="multislot",
    serve_args=["--action-features", "--learner", "SquareCB", "--param", "seed=0", "--param", "n_slots=2"],
    rank_path="/rank/multislot", rank_bodies=lambda n: [_catalogue_body(i, True) for i in range(n)],
    reward_path="/reward/multislot",
    reward_body=lambda ans, i: json.dumps({"event_id": ans["event_id"], "rewards": [
        {"slot_id": s["id"], "reward": _liked(i % 2048, s["action"])} for s in ans["slots"]]}).encode(),
    describe="multi-slot API (SquareCB, 10 actions with hashed features, 2 slots)", client_ids=True)


PZ_QUERY = "?api-version=2022-09-01-preview"


def _personalizer_body(i: int) -> bytes:
    """The same page in Personalizer's shape (contextFeatures, actions), as the current SDK sends it."""
    body = json.loads(_catalogue_body(i, False))
    return json.dumps({"contextFeatures": body["context_features"], "actions": body["actions"]}).encode()


PERSONALIZER = Shape(
    name="personalizer",
    serve_args=["--action-features", "--learner", "SquareCB", "--param", "seed=0"],
    rank_path="/personalizer/rank" + PZ_QUERY, rank_bodies=lambda n: [_personalizer_body(i) for i in range(n)],
    reward_path=lambda ans: f"/personalizer/events/{ans['eventId']}/reward{PZ_QUERY}",
    reward_body=lambda ans, i: b'{"value":%d}' % _liked(i % 2048, ans["rewardActionId"]),
    describe="action-feature API through Personalizer's current routes (/personalizer/rank?api-version=, "
             "SquareCB, 10 actions with hashed features)", ok=(201, 204))


def _has_action_features() -> bool:
    try:
        from noisyfeedback.service.engine import ServiceConfig
    except ImportError:
        return False
    return "action_features" in getattr(ServiceConfig, "__dataclass_fields__", {})


#: the request shapes a load test can send, by name (the action-feature ones where the service has them)
SHAPES: dict[str, Shape] = {"numeric": NUMERIC}
if _has_action_features():
    SHAPES.update(features=FEATURES, multislot=MULTISLOT, personalizer=PERSONALIZER)


# ---------------------------------------------------------------- the client
class Conn:
    """One keep-alive HTTP/1.1 connection: POST JSON, read the status and the JSON body."""

    def __init__(self, host: str, port: int, key: str):
        self.host, self.port = host, port
        self.head = (f"Host: {host}:{port}\r\nAuthorization: Bearer {key}\r\n"
                     "Content-Type: application/json\r\n").encode()

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        self.writer.write(b"POST " + path.encode() + b" HTTP/1.1\r\n" + self.head
                          + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        n = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                n = int(line[15:])
        return status, await self.reader.readexactly(n)

    def close(self):
        self.writer.close()


def flood_body(n: int = 10_000) -> bytes:
    """An authenticated rank body of ``n`` actions with features: far more than a service takes (50)."""
    actions = [{"id": f"f{j}", "features": [{"a": {"topic": TOPICS[j % len(TOPICS)], "price": float(j)}}]}
               for j in range(n)]
    return json.dumps({"context_features": [{"user": {"country": "fr"}}], "actions": actions}).encode()


async def flood(port: int, key: str, per_second: float, seconds: float, path: str, counts: dict) -> None:
    """``per_second`` oversized rank requests a second (each on a new connection: a refusal closes it)."""
    body = flood_body()
    t0 = time.perf_counter()
    k = 0
    while time.perf_counter() < t0 + seconds:
        delay = t0 + k / per_second - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        k += 1
        try:
            c = await Conn("127.0.0.1", port, key).open()
            st, _ = await c.post(path, body)
            c.close()
        except (OSError, asyncio.IncompleteReadError):
            st = 0
        counts[st] = counts.get(st, 0) + 1


async def drive(ports: list[int], key: str, rate: float, seconds: float, conns: int, shape: Shape,
                bodies: list[bytes], tag: str = "m", flood_rate: float = 0.0, flood_counts: dict | None = None):
    """Send the pairs; pair i ranks on replica i mod R and rewards on the next one (and, with
    ``flood_rate``, that many 10,000-action rank requests a second to the first replica meanwhile)."""
    lat_rank, lat_reward, lat_pair, lat_sched = [], [], [], []
    acked = {"rank": 0, "reward": 0, "errors": 0}
    per_conn = rate / conns if rate > 0 else 0.0
    n_pairs = int(rate * seconds) if rate > 0 else None
    t_end = time.perf_counter() + seconds
    t_stop = t_end + 10.0  # a service that falls behind: pairs not sent 10 s after the schedule are dropped
    R = len(ports)

    async def worker(w: int):
        cs = [await Conn("127.0.0.1", p, key).open() for p in ports]
        k = 0
        start = time.perf_counter() + w / max(rate, 1.0)
        while True:
            i = w + k * conns
            due = None
            if per_conn:
                if i >= n_pairs or time.perf_counter() >= t_stop:
                    break
                due = start + k / per_conn
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
            elif time.perf_counter() >= t_end:
                break
            t0 = time.perf_counter()
            rank_body = bodies[i % len(bodies)]
            if shape.client_ids:
                rank_body = rank_body[:-1] + b',"%s":"%s%d"}' % (shape.id_key.encode(), tag.encode(), i)
            st, body = await cs[i % R].post(shape.rank_path, rank_body)
            t1 = time.perf_counter()
            k += 1
            if st != shape.ok[0]:
                acked["errors"] += 1
                continue
            acked["rank"] += 1
            ans = json.loads(body)
            path = shape.reward_path if isinstance(shape.reward_path, str) else shape.reward_path(ans)
            st, _ = await cs[(i + 1) % R].post(path, shape.reward_body(ans, i))
            t2 = time.perf_counter()
            if st == shape.ok[1]:
                acked["reward"] += 1
            else:
                acked["errors"] += 1
            lat_rank.append(t1 - t0)
            lat_reward.append(t2 - t1)
            lat_pair.append(t2 - t0)
            lat_sched.append(t2 - (due if due is not None else t0))
        for c in cs:
            c.close()

    t0 = time.perf_counter()
    extra = [flood(ports[0], key, flood_rate, seconds, shape.rank_path, flood_counts if flood_counts is not None
                   else {})] if flood_rate > 0 else []
    await asyncio.gather(*(worker(w) for w in range(conns)), *extra)
    wall = time.perf_counter() - t0
    acked["offered"] = n_pairs if n_pairs is not None else len(lat_pair)
    return wall, acked, *(np.array(a) for a in (lat_rank, lat_reward, lat_pair, lat_sched))


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def _arun(coro):
    try:
        import uvloop

        return uvloop.run(coro)
    except ImportError:
        return asyncio.run(coro)


# ---------------------------------------------------------------- backends
@contextlib.contextmanager
def postgres_cluster():
    """A throw-away PostgreSQL cluster (fsync on) on a Unix socket in ``work``; yields its DSN."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError("no PostgreSQL server binaries (apt-get install postgresql)")
    bindir = os.path.dirname(found[-1])
    root = Path(tempfile.mkdtemp(prefix="nf-pg-bench-"))  # a folder the postgres user can reach
    prefix = []
    if os.geteuid() == 0:  # postgres refuses to run as root
        shutil.chown(root, "postgres")
        prefix = ["runuser", "-u", "postgres", "--"]
    data = root / "data"
    run = lambda *a: subprocess.run(prefix + [str(x) for x in a], check=True, capture_output=True,  # noqa: E731
                                    timeout=120)
    run(f"{bindir}/initdb", "-D", data, "-A", "trust", "-U", "nf", "-E", "UTF8")
    run(f"{bindir}/pg_ctl", "-D", data, "-o", f"-k {root} -c listen_addresses='' -c max_connections=200",
        "-l", root / "log", "-w", "-t", "60", "start")
    try:
        yield f"postgresql:///postgres?host={root}&user=nf"
    finally:
        subprocess.run(prefix + [f"{bindir}/pg_ctl", "-D", str(data), "-m", "fast", "stop"], capture_output=True,
                       timeout=120)
        shutil.rmtree(root, ignore_errors=True)


def _serve(db: str, port: int, shape: Shape, extra: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "noisyfeedback.cli", "serve", "--db", db, "--port", str(port),
                             *shape.serve_args, *extra], env=dict(os.environ))


def _wait_healthy(ports: list[int], procs: list[subprocess.Popen]) -> None:
    import httpx

    for port, proc in zip(ports, procs):
        for _ in range(1200):
            if proc.poll() is not None:
                raise RuntimeError(f"the service on port {port} exited with status {proc.returncode}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)


def run(seconds: float = 60.0, rate: float = 1000.0, conns: int = 32, sync: str = "FULL", shape: str = "numeric",
        backend: str = "sqlite", replicas: int = 2, flood_rate: float = 0.0) -> dict:
    """Start the service(s), drive them, check the log; returns the numbers of the table row."""
    import httpx

    from noisyfeedback.service.auth import create_key
    from noisyfeedback.service.stores import open_storage

    sh = SHAPES[shape]
    work = Path(tempfile.mkdtemp(prefix="nf-service-bench-"))
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, work, True)
        if backend == "sqlite":
            db, n = str(work / "bench.db"), 1
            extras = [["--sync", sync]]
        elif backend == "postgres":
            db, n = stack.enter_context(postgres_cluster()), replicas
            extras = [["--replica", f"r{j}", "--snapshot-dir", str(work / "snapshots")] for j in range(n)]
        else:
            raise ValueError(f"unknown backend {backend!r}")
        key = create_key(db, "admin")
        ports = [free_port() for _ in range(n)]
        procs = []
        stack.callback(lambda: [(p.terminate(), p.wait(timeout=30)) for p in procs])
        for j in range(n):  # the first creates the log; the others join it
            procs.append(_serve(db, ports[j], sh, extras[j]))
            _wait_healthy(ports[j:j + 1], procs[j:j + 1])
        bodies = sh.rank_bodies(2048)
        _arun(drive(ports, key, 100, 1.0, 4, sh, bodies, tag="w"))  # warm-up (JIT, connections); logged too
        st = open_storage(db, create=False)
        warm = st.stats()
        st.close()
        cpu0, own0 = sum(cpu_seconds(p.pid) for p in procs), time.process_time()
        flood_counts: dict = {}
        wall, acked, lr, lw, lp, ls = _arun(drive(ports, key, rate, seconds, conns, sh, bodies, flood_rate=flood_rate,
                                                  flood_counts=flood_counts))
        cpu = sum(cpu_seconds(p.pid) for p in procs) - cpu0
        own = time.process_time() - own0
        st = open_storage(db, create=False)
        logged = st.stats()
        n_events, n_rewards = logged["events"] - warm["events"], logged["rewards"] - warm["rewards"]
        last = st.max_reward_seq()
        st.close()
        t_end = time.time() + 60  # every replica learns every reward
        versions = []
        while time.time() < t_end:
            versions = [httpx.get(f"http://127.0.0.1:{p}/health").json()["model_version"] for p in ports]
            if all(v == last for v in versions):
                break
            time.sleep(0.05)
    lost = (acked["rank"] - n_events) + (acked["reward"] - n_rewards)
    q = lambda a, p: float(np.percentile(a, p) * 1e3) if a.size else float("nan")  # noqa: E731
    return {
        "shape": shape, "backend": backend, "replicas": n, "describe": sh.describe,
        "pairs": int(lp.size), "offered": int(acked["offered"]), "seconds": wall, "pairs_per_s": lp.size / wall,
        "errors": acked["errors"],
        "lost": int(lost), "learned_by_all": all(v == last for v in versions),
        "rank_p50_ms": q(lr, 50), "rank_p95_ms": q(lr, 95), "rank_p99_ms": q(lr, 99),
        "reward_p50_ms": q(lw, 50), "reward_p95_ms": q(lw, 95), "reward_p99_ms": q(lw, 99),
        "pair_p50_ms": q(lp, 50), "pair_p99_ms": q(lp, 99), "pair_p99_sched_ms": q(ls, 99),
        "server_cpu_us_per_pair": cpu / max(lp.size, 1) * 1e6,
        "generator_cpu_us_per_pair": own / max(lp.size, 1) * 1e6,
        "conns": conns, "rate": rate, "flood_rate": flood_rate,
        "flood_statuses": {str(k): v for k, v in sorted(flood_counts.items())},
        "sync": sync if backend == "sqlite" else "synchronous_commit=on",
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--rate", type=float, default=1000.0, help="pairs per second in total (0: as fast as possible)")
    ap.add_argument("--conns", type=int, default=32)
    ap.add_argument("--sync", default="FULL", choices=["FULL", "NORMAL"], help="SQLite's synchronous setting")
    ap.add_argument("--shape", default="numeric", choices=sorted(SHAPES))
    ap.add_argument("--backend", default="sqlite", choices=["sqlite", "postgres"])
    ap.add_argument("--replicas", type=int, default=2, help="replicas on the PostgreSQL backend")
    ap.add_argument("--flood", type=float, default=0.0, help="10,000-action rank requests a second sent meanwhile")
    args = ap.parse_args(argv)
    print(json.dumps(run(args.seconds, args.rate, args.conns, args.sync, args.shape, args.backend, args.replicas,
                         args.flood), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
