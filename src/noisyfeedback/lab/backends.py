"""Where tasks run: in this process, in local worker processes (joblib/loky), or on a Dask cluster.

Every backend maps `run_task` over task
dicts and yields rows as tasks finish (in any order); this process writes each
row to the results store. Results never depend on the backend: each task is
seeded from its own identity (see `.tasks`).

- ``serial`` (``jobs=1``): one task after another, here.
- ``joblib`` (``jobs=N``, ``-j N`` on the command line; ``-1`` = every core):
  loky worker processes, reused between calls. Tasks carry only the *spec* of
  their data set; each worker loads it once (an ``lru_cache``) and reuses it.
- ``dask`` (``scheduler="tcp://HOST:PORT"``, or a ``distributed.Client``):
  an existing Dask distributed cluster. Install the extra
  (``pip install "noisyfeedback[dask]"``) here and on the workers, which must
  be able to import ``noisyfeedback`` (same version) and read any data files
  the config names. Workers load each data set once per worker process.

Running on SLURM or PBS with dask-jobqueue
------------------------------------------
Start a cluster whose workers are batch jobs, then pass its scheduler address::

    # pip install dask-jobqueue
    from dask_jobqueue import SLURMCluster          # or PBSCluster, SGECluster, LSFCluster
    cluster = SLURMCluster(cores=8, processes=8, memory="16GB", walltime="02:00:00",
                           job_extra_directives=["--partition=cpu"],
                           python="/path/to/.venv/bin/python")
    cluster.scale(jobs=4)                             # 4 batch jobs × 8 single-threaded workers
    print(cluster.scheduler_address)                  # tcp://10.0.0.5:8786

    from noisyfeedback.lab import run_config
    run_config("sweep.toml", scheduler=cluster.scheduler_address)
    # or from a shell:  noisyfeedback run sweep.toml --scheduler tcp://10.0.0.5:8786

Use one thread per worker process (``processes == cores``): the learners' loops
are single-threaded compiled code, one core each. The results
directory is written by the submitting process only, so workers need no shared
file system for results (only for data files). A sweep interrupted on the
cluster resumes like a local one: run the same command again.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

__all__ = ["Backend", "SerialBackend", "JoblibBackend", "DaskBackend", "make_backend"]


class Backend:
    """Maps a function over items, yielding results as they finish. A context manager."""

    name = "backend"

    def imap_unordered(self, fn: Callable[[Any], Any], items: list[Any]) -> Iterator[Any]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def describe(self) -> str:
        return self.name


class SerialBackend(Backend):
    name = "serial"

    def imap_unordered(self, fn, items):
        for it in items:
            yield fn(it)


class JoblibBackend(Backend):
    """Local worker processes through joblib's loky backend."""

    name = "joblib"

    def __init__(self, n_jobs: int):
        self.n_jobs = n_jobs

    def imap_unordered(self, fn, items):
        if not items:
            return
        from joblib import Parallel, delayed

        par = Parallel(n_jobs=self.n_jobs, backend="loky", return_as="generator_unordered", batch_size=1,
                       pre_dispatch="2*n_jobs")
        yield from par(delayed(fn)(it) for it in items)

    def describe(self) -> str:
        from joblib import effective_n_jobs

        return f"{effective_n_jobs(self.n_jobs)} local processes (joblib/loky)"


def probe_scheduler(address: str, timeout: float = 3.0) -> None:
    """Raise OSError (one line) unless a ``tcp://host:port`` scheduler answers within ``timeout``
    seconds: the TCP connection opens and the peer starts a Dask handshake (its first message's
    8-byte length is plausible); other address forms are left to dask."""
    import socket
    from urllib.parse import urlsplit

    if not address.startswith("tcp://"):
        return
    try:
        parts = urlsplit(address)
        host, port = parts.hostname, parts.port
    except ValueError as exc:
        raise OSError(f"invalid Dask scheduler address {address!r}: {exc}.") from None
    if not host or not port:
        raise OSError(f"invalid Dask scheduler address {address!r}; expected tcp://HOST:PORT.")
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        raise OSError(f"cannot reach the Dask scheduler at {address} within {timeout:g} s "
                      f"({exc.strerror or exc}).") from None
    try:
        head = b""
        while len(head) < 8:
            chunk = sock.recv(8 - len(head))
            if not chunk:
                break
            head += chunk
    except OSError:
        head = b""
    finally:
        sock.close()
    if len(head) < 8 or not 0 < int.from_bytes(head, "little") < 1 << 26:
        raise OSError(f"{address} does not answer as a Dask scheduler (no handshake within {timeout:g} s).")


class DaskBackend(Backend):
    """An existing Dask distributed cluster (scheduler address or Client)."""

    name = "dask"

    def __init__(self, scheduler: Any):
        try:
            from distributed import Client
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "a Dask scheduler was given but dask.distributed is not installed: "
                "pip install 'noisyfeedback[dask]'") from exc
        if isinstance(scheduler, Client):
            self.client, self._own = scheduler, False
        else:
            address = getattr(scheduler, "scheduler_address", scheduler)  # a LocalCluster/SLURMCluster object
            if not isinstance(address, str):
                raise TypeError(f"scheduler must be an address such as 'tcp://host:8786', a Cluster or a "
                                f"distributed.Client; got {type(scheduler).__name__}.")
            probe_scheduler(address)  # one line within seconds, not a 30 s hang and a traceback
            try:
                self.client = Client(address, set_as_default=False, timeout="30s")
            except (OSError, MemoryError) as exc:
                raise OSError(f"cannot reach the Dask scheduler at {address}: {exc}") from exc
            self._own = True

    def imap_unordered(self, fn, items):
        if not items:
            return
        from distributed import as_completed

        futures = self.client.map(fn, items, pure=False)
        try:
            for _fut, row in as_completed(futures, with_results=True, loop=self.client.loop):
                yield row
        finally:
            self.client.cancel([f for f in futures if not f.done()])

    def close(self) -> None:
        if self._own:
            self.client.close()

    def describe(self) -> str:
        try:
            n = len(self.client.scheduler_info().get("workers", {}))
        except Exception:  # pragma: no cover
            n = "?"
        return f"Dask cluster at {self.client.scheduler.address} ({n} workers)"


def make_backend(jobs: int = 1, scheduler: Any = None) -> Backend:
    """``scheduler`` given: Dask; else ``jobs`` > 1 or -1: joblib; else serial."""
    if scheduler is not None:
        return DaskBackend(scheduler)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs == 0 or jobs < -1:
        raise ValueError(f"jobs must be an int >= 1 (or -1 for every core); got {jobs!r}.")
    if jobs == 1:
        return SerialBackend()
    return JoblibBackend(jobs)

