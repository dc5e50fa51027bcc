"""Load test of the decision service: rank+reward pairs over HTTP on 127.0.0.1.

Starts ``noisyfeedback serve`` (RCNBF, K = 10, d = 64, SQLite log with synchronous=FULL: every
acknowledged request is fsynced) in a subprocess and drives it from an asyncio loop with ``--conns``
keep-alive connections (a minimal HTTP/1.1 client on asyncio streams, so that the generator costs little
of the 2 cores). Each connection sends pairs (POST /rank, then POST /reward for the returned event) on a
fixed schedule of ``--rate`` pairs per second in total, for ``--seconds`` seconds (a bounded count:
rate × seconds pairs); ``--rate 0`` sends as fast as the answers come. Afterwards the log is checked:
every acknowledged rank is an event, every acknowledged reward a reward, and the model learned them all.

    python benchmarks/service_load.py --seconds 60 --rate 1000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


async def drive(port: int, key: str, rate: float, seconds: float, conns: int, contexts: np.ndarray):
    lat_rank, lat_reward, lat_pair = [], [], []
    acked = {"rank": 0, "reward": 0, "errors": 0}
    bodies = [json.dumps({"context": c.tolist()}).encode() for c in contexts]
    per_conn = rate / conns if rate > 0 else 0.0
    n_pairs = int(rate * seconds) if rate > 0 else None
    t_end = time.perf_counter() + seconds

    async def worker(w: int):
        c = await Conn("127.0.0.1", port, key).open()
        k = 0
        start = time.perf_counter() + w / max(rate, 1.0)
        while True:
            if per_conn:
                if w + k * conns >= n_pairs:
                    break
                due = start + k / per_conn
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
            elif time.perf_counter() >= t_end:
                break
            t0 = time.perf_counter()
            st, body = await c.post("/rank", bodies[(w + k * conns) % len(bodies)])
            t1 = time.perf_counter()
            if st != 200:
                acked["errors"] += 1
                k += 1
                continue
            acked["rank"] += 1
            event = json.loads(body)
            reward = b'{"event_id":"%s","reward":%d}' % (event["event_id"].encode(), event["action"] % 2)
            st, _ = await c.post("/reward", reward)
            t2 = time.perf_counter()
            if st == 200:
                acked["reward"] += 1
            else:
                acked["errors"] += 1
            lat_rank.append(t1 - t0)
            lat_reward.append(t2 - t1)
            lat_pair.append(t2 - t0)
            k += 1
        c.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(conns)))
    wall = time.perf_counter() - t0
    return wall, acked, np.array(lat_rank), np.array(lat_reward), np.array(lat_pair)


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


def run(seconds: float = 60.0, rate: float = 1000.0, conns: int = 32, sync: str = "FULL") -> dict:
    """Start a service, drive it, check the log; returns the numbers of the table row."""
    from noisyfeedback.service.auth import create_key

    work = Path(tempfile.mkdtemp(prefix="nf-service-bench-"))
    db = work / "bench.db"
    key = create_key(db, "admin")
    port = free_port()
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, "-m", "noisyfeedback.cli", "serve", "--db", str(db), "--port", str(port), "--learner",
         "RCNBF", "--n-classes", "10", "--n-features", "64", "--param", "gamma=0.1", "--param", "seed=0",
         "--rho0", "0.1", "--rho1", "0.1", "--sync", sync], env=env)
    try:
        import httpx

        for _ in range(600):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        from sklearn.datasets import load_digits

        X = load_digits().data
        _arun(drive(port, key, 100, 1.0, 4, X))  # warm-up (JIT, connections); logged too
        warm = httpx.get(f"http://127.0.0.1:{port}/health").json()
        cpu0, own0 = cpu_seconds(proc.pid), time.process_time()
        wall, acked, lr, lw, lp = _arun(drive(port, key, rate, seconds, conns, X))
        cpu = cpu_seconds(proc.pid) - cpu0
        own = time.process_time() - own0
        health = httpx.get(f"http://127.0.0.1:{port}/health").json()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    con = sqlite3.connect(db)
    n_events = con.execute("SELECT COUNT(*) FROM events").fetchone()[0] - warm["events"]
    n_rewards = con.execute("SELECT COUNT(*) FROM rewards").fetchone()[0] - warm["rewards"]
    con.close()
    lost = (acked["rank"] - n_events) + (acked["reward"] - n_rewards)
    q = lambda a, p: float(np.percentile(a, p) * 1e3) if a.size else float("nan")  # noqa: E731
    return {
        "pairs": int(lp.size), "seconds": wall, "pairs_per_s": lp.size / wall, "errors": acked["errors"],
        "lost": int(lost), "learned": health["model_version"] - warm["model_version"],
        "rank_p50_ms": q(lr, 50), "rank_p95_ms": q(lr, 95), "rank_p99_ms": q(lr, 99),
        "reward_p50_ms": q(lw, 50), "reward_p95_ms": q(lw, 95), "reward_p99_ms": q(lw, 99),
        "server_cpu_us_per_pair": cpu / max(lp.size, 1) * 1e6,
        "generator_cpu_us_per_pair": own / max(lp.size, 1) * 1e6,
        "pair_p50_ms": q(lp, 50), "pair_p99_ms": q(lp, 99), "conns": conns, "rate": rate, "sync": sync,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--rate", type=float, default=1000.0, help="pairs per second in total (0: as fast as possible)")
    ap.add_argument("--conns", type=int, default=32)
    ap.add_argument("--sync", default="FULL", choices=["FULL", "NORMAL"])
    args = ap.parse_args(argv)
    print(json.dumps(run(args.seconds, args.rate, args.conns, args.sync), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
