"""A log of 8 Parquet files with the Open Bandit Dataset's columns, evaluated on a real local Dask cluster
(a scheduler and two workers, each its own process on 127.0.0.1): the same IPS/SNIPS/DR/DM estimates as
one process to 1e-12 relative, also when a worker is killed while the tasks run; and ``noisyfeedback evaluate
--scheduler`` on the same cluster prints them."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from typer.testing import CliRunner  # noqa: E402

import noisyfeedback as nf  # noqa: E402
from noisyfeedback.cli import app  # noqa: E402
from noisyfeedback.ope import evaluate_log  # noqa: E402

K, N_FILES, ROWS = 6, 8, 800
AFFINITY = [f"user-item_affinity_{k}" for k in range(K)]


def _open_bandit_like(root: Path):
    """8 files with the columns of the Open Bandit Dataset's logs (timestamp, item_id, position, click,
    propensity_score, user_feature_0..3 as hashed strings, user-item_affinity_0..K−1), random policy."""
    rng = np.random.default_rng(0)
    root.mkdir()
    for f in range(N_FILES):
        aff = rng.normal(size=(ROWS, K))
        item = rng.integers(0, K, ROWS)
        click = (rng.random(ROWS) < 0.05 + 0.1 * (aff[np.arange(ROWS), item] > 0.5)).astype(np.int64)
        cols = {"timestamp": pa.array(np.arange(ROWS) + f * ROWS, pa.int64()),
                "item_id": pa.array(item, pa.int64()), "position": pa.array(rng.integers(1, 4, ROWS), pa.int64()),
                "click": pa.array(click), "propensity_score": pa.array(np.full(ROWS, 1.0 / K))}
        for j in range(4):
            cols[f"user_feature_{j}"] = pa.array([f"{h:032x}" for h in rng.integers(0, 2 ** 62, ROWS)])
        cols.update({c: pa.array(aff[:, k]) for k, c in enumerate(AFFINITY)})
        pq.write_table(pa.table(cols), root / f"part-{f:02d}.parquet", row_group_size=500)


class SlowPolicy:
    """A learner's action probabilities, 20 ms a call: the tasks last long enough to kill a worker."""

    def __init__(self, learner):
        self.learner = learner

    def action_probabilities(self, X):
        time.sleep(0.02)
        return self.learner.action_probabilities(X)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(client, n: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while len(client.scheduler_info()["workers"]) < n:
        if time.monotonic() > deadline:
            raise TimeoutError(f"fewer than {n} Dask workers came up")
        time.sleep(0.1)


def test_dask_cluster_gives_the_one_process_estimates_even_when_a_worker_dies(tmp_path):
    import cloudpickle
    from distributed import Client, get_task_stream

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # SlowPolicy on the workers
    logs = tmp_path / "obd"
    _open_bandit_like(logs)
    read = {"action": "item_id", "reward": "click", "propensity": "propensity_score", "features": AFFINITY}
    train = nf.datasets.read_log(logs / "part-00.parquet", **read)
    policy = SlowPolicy(nf.SquareCB(K, seed=0).fit_logged(train))
    ests = ("ips", "snips", "dr", "dm")
    here = evaluate_log(policy.learner, logs, ests, chunk_rows=200, **read)

    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(nf.__file__).parents[1]),
                                                        os.environ.get("PYTHONPATH", "")])}
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    procs = [subprocess.Popen([*dask, "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    address = f"tcp://127.0.0.1:{port}"
    try:
        time.sleep(0.5)
        for _ in range(2):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny",
                 "--no-dashboard", "--host", "127.0.0.1", "--death-timeout", "30"], env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 30
        client = None
        while client is None:
            try:
                client = Client(address, timeout="5s", set_as_default=False)
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        with client:
            _wait_for(client, 2)
            out: dict = {}
            run = threading.Thread(target=lambda: out.update(
                evaluate_log(policy, str(logs / "*.parquet"), ests, chunk_rows=200, scheduler=client, **read)))
            run.start()
            deadline = time.monotonic() + 20
            while not any(client.processing().values()) and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.3)
            assert run.is_alive(), "the evaluation ended before a worker could be killed"
            os.kill(procs[2].pid, signal.SIGKILL)  # one worker dies mid-run: its tasks run again elsewhere
            run.join(timeout=120)
            assert not run.is_alive()
            assert procs[2].wait(timeout=10) == -signal.SIGKILL
            # the command line on the same cluster (one worker left): the same estimates
            policy.learner.save(tmp_path / "model.npz")
            with get_task_stream(client) as tasks:
                cli = CliRunner().invoke(app, [
                    "evaluate", "--data", str(logs / "*.parquet"), "--model", str(tmp_path / "model.npz"), "--json",
                    "--scheduler", address, "--column", "action=item_id", "--column", "reward=click",
                    "--column", "propensity=propensity_score", "--features", ",".join(AFFINITY), "--chunk-rows", "200"])
            assert cli.exit_code == 0, cli.output
            assert len(tasks.data) >= N_FILES  # the files were read on the cluster
    finally:
        for p in procs[::-1]:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
    for e in ests:
        assert out[e].n == here[e].n == N_FILES * ROWS
        np.testing.assert_allclose([out[e].value, out[e].lower, out[e].upper],
                                   [here[e].value, here[e].lower, here[e].upper], rtol=1e-12, atol=0)
    assert len({round(out[e].value, 6) for e in ests}) > 1  # four estimators, not one number four times
    printed = json.loads(cli.stdout)
    assert list(printed) == list(ests)
    for e in ests:
        np.testing.assert_allclose([printed[e]["value"], printed[e]["lower"], printed[e]["upper"]],
                                   [here[e].value, here[e].lower, here[e].upper], rtol=1e-12, atol=0)
