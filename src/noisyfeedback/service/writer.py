"""The log writer: ONE thread that writes the operations of the event loop to the log in batches.

The operations of one loop iteration are handed over in one put (their order kept); the thread takes
whatever is queued (up to `MAX_BATCH`), applies it in one transaction, and hands the results back
to the loop (``on_commit(batch, results, exc, tail)``), where the engine learns and answers. A replica's
writer also reads the rewards the other replicas committed (`tail`): after each of
its own commits and, when idle, every ``poll_interval`` seconds. On PostgreSQL a batch whose connection
fails before its commit is redone, and so is the read after it, for a bounded time
(``serve --db-retry``, `.storage_pg.RETRY_BUDGET` by default); then its requests fail with 503 and the engine repairs.

Group commit: when other operations are in flight as the thread takes a batch (concurrent requests), it
first waits ``commit_delay`` seconds (`.config.ServiceConfig`, 1 ms by default) so that theirs join the same
transaction, as PostgreSQL's ``commit_delay`` with ``commit_siblings``. A lone client's write never waits;
under load there are fewer transactions and fsyncs, and fewer hand-overs between the two threads.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from typing import Any

from .errors import Unavailable
from .replication import tail as read_tail
from .storage_pg import retry_delays

__all__ = ["LogWriter", "MAX_BATCH"]

MAX_BATCH = 1024
log = logging.getLogger("noisyfeedback.service")


class LogWriter:
    """The writer thread of one engine (``engine.storage``; ``engine._committed`` gets the results;
    replicas read from ``engine._learned_upto`` on after a failure)."""

    def __init__(self, engine: Any):
        self.engine = engine
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.outbox: list = []
        #: operations handed over and not yet answered on the loop; operations handed over in all
        self.inflight = self.submitted = 0

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.thread = threading.Thread(target=self._run, name="nf-log-writer", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        if self.thread is not None:
            self.queue.put(None)
            self.thread.join(timeout=10)
            self.thread = None

    def submit(self, op: tuple, want: bool = True) -> asyncio.Future | None:
        """Queue ``op`` (on the event loop); its future gets the log's result after the commit."""
        fut = self.loop.create_future() if want else None
        if not self.outbox:
            self.loop.call_soon(self._flush)
        self.outbox.append((op, fut))
        self.inflight += 1
        self.submitted += 1
        return fut

    def _flush(self) -> None:
        """Hand the operations of this loop iteration to the thread in one put (order kept)."""
        ops, self.outbox = self.outbox, []
        self.queue.put(ops)

    def _read_tail(self, cursor: int) -> tuple:
        """The rewards after ``cursor`` (`.replication.tail`); on PostgreSQL tried again with backoff while
        the database cannot be reached, for at most the store's ``retry_budget`` seconds (the batch before it has
        committed: its requests are not failed for a lost connection if it comes back)."""
        storage = self.engine.storage
        if not hasattr(storage, "outage"):
            return read_tail(storage, cursor)
        delays = retry_delays(0.0 if storage.outage else storage.retry_budget)
        while True:
            try:
                return read_tail(storage, cursor)
            except Unavailable:
                pause = next(delays, None)
                if pause is None:
                    raise
                time.sleep(pause)

    def _run(self) -> None:
        eng = self.engine
        q = self.queue
        tailing = eng.replica is not None
        cursor = None  # replicas: the last reward seq handed to the event loop (None: ask the loop)
        while True:
            if tailing:
                try:
                    item = q.get(timeout=eng.cfg.poll_interval)
                except queue.Empty:
                    item = ()
                    if not eng.healthy:
                        cursor = None
                        continue
            else:
                item = q.get()
            if item is None:
                return
            batch = list(item)
            stop = False
            # other operations in flight (``inflight`` is the loop's count, read without a lock: a stale value
            # only moves one wait): let their writes join this commit
            if batch and eng.cfg.commit_delay and self.inflight > len(batch):
                time.sleep(eng.cfg.commit_delay)
            while len(batch) < MAX_BATCH:
                try:
                    nxt = q.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                batch.extend(nxt)
            try:
                results = eng.storage.apply_batch([op for op, _ in batch]) if batch else []
                tail = None
                if tailing:  # every reward committed up to now, ours included, in seq order
                    if cursor is None:
                        cursor = eng._learned_upto
                    tail = self._read_tail(cursor) if batch else read_tail(eng.storage, cursor)
                    if tail[0]:
                        cursor = tail[0][-1][0]
                if batch or (tail and tail[0]):
                    self.loop.call_soon_threadsafe(eng._committed, batch, results, None, tail)
            except BaseException as exc:  # nothing of the batch is logged (rolled back): 503, then repair
                cursor = None
                if batch:
                    self.loop.call_soon_threadsafe(eng._committed, batch, None, exc)
                else:  # a failed read while idle: the next write finds out (and repairs)
                    log.warning("reading the rewards of the other replicas failed (%s); retrying", exc)
                    time.sleep(min(1.0, 10 * eng.cfg.poll_interval))
            if stop:
                return
