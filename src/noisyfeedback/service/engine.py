"""The service's core: the deployed learner and the order in which it ranks and learns.

**Order.** Every ``/rank`` is given an event ``seq`` (1, 2, ...) when it draws its action from the
learner's random stream; every accepted ``/reward`` a reward ``seq`` when the single writer thread
(`.writer`) writes it (the order of arrival at the writer = the order of commit). The model learns
rewards in reward-``seq`` order, each from the logged (context, action, propensity) of its event, and the
rank requests draw from the learner's stream in event-``seq`` order. After a batch of writes commits, its
rewards are learned (in ``seq`` order) *before* any of its requests is acknowledged, so a client that
waits for each answer before sending the next request drives the service exactly as ``nf.simulate``
drives the learner (act, feedback, learn).

The other concerns live beside it: `.config` (how a service starts), `.recovery` (the model
rebuilt from the log), `.snapshots`, `.replication` (several processes on one PostgreSQL log),
`.writer` (the log writer thread) and `.errors` (what a refused request raises; the app maps
each kind to an HTTP status).
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .. import base
from .._validation import trusted_rows
from .choice import choose
from .config import REPLICA_NAME, ServiceConfig, build_learner
from .contexts import allowed_labels, check_action, context_row
from .errors import ConfigError, Conflict, Invalid, NotFound, ServiceError, Unavailable
from .learner import state_is_finite
from .loglock import lock_log, release_log
from .recovery import Recovery
from .replication import void_event_id
from .snapshots import SnapshotFolder, snapshot_name
from .storage import EventRow, RewardOutcome, Storage, decode_action, encode_action, is_dsn
from .storage_pg import retry_delays
from .stores import open_storage
from .tallies import apprentice_report, count_event, count_reward
from .writer import MAX_BATCH, LogWriter

__all__ = ["ServiceConfig", "Engine", "ServiceError", "build_learner", "MAX_BATCH", "REPLICA_NAME"]

#: the log operations that write a reward the model learns
REWARD_OPS = ("reward", "creward")
UNAVAILABLE = "the log cannot be written now; retry later (see GET /health)."
UNWRITTEN = "the log could not be written; retry later (see GET /health)."
#: threads (each with its own connection) that run a PostgreSQL log's reads for requests, off the event loop
DB_READERS = 4
log = logging.getLogger("noisyfeedback.service")


class Engine(Recovery):
    """The learner, the log and the writer thread. All model work happens on the event loop's thread."""

    #: whether the service ranks actions described by features (`CatalogueEngine`)
    catalogue = False
    #: learn the rewards of one commit in one call (the numeric learners refuse a non-finite step by
    #: themselves, naming the row: `_learn_guarded`); else one call a reward
    LEARN_IN_ONE_CALL = True

    def __init__(self, cfg: ServiceConfig, storage: Storage | None = None):
        cfg.check()
        self.cfg = cfg
        self.replica = cfg.replica
        self._learned_upto = 0  # replicas: the last reward seq learned or refused here
        dsn = is_dsn(cfg.db)
        self.db = str(cfg.db) if dsn else Path(cfg.db).expanduser().resolve()
        fresh = not dsn and storage is None and not Path(self.db).exists()
        if cfg.snapshot_dir is None and dsn:
            raise ConfigError("with a PostgreSQL log give {}, a folder every replica reads.", "snapshot_dir")
        folder = (Path(cfg.snapshot_dir).expanduser().resolve() if cfg.snapshot_dir is not None
                  else Path(f"{self.db}.snapshots"))
        self.snapshots = SnapshotFolder(folder, self.db)
        made_dir = not folder.exists()
        self.storage = storage
        self.writer = LogWriter(self)
        self._snapshot_task: asyncio.Task | None = None
        self._repair_task: asyncio.Task | None = None
        # a PostgreSQL log is read for requests on threads of their own: a query (or a reconnect, up to
        # CONNECT_TIMEOUT seconds) never holds the event loop
        self._readers = ThreadPoolExecutor(DB_READERS, thread_name_prefix="nf-db-read") if dsn else None
        locked = False
        try:
            if self.storage is None:
                self.storage = open_storage(self.db, cfg.synchronous, busy_timeout=cfg.busy_timeout,
                                            retry_budget=cfg.db_retry)
            if not dsn:  # one serving process per SQLite log, for the life of the process
                lock_log(self.db)
                locked = True
            folder.mkdir(mode=0o700, parents=dsn, exist_ok=True)
            self.healthy = True
            self._pending_draws = 0
            self._recover()
        except BaseException:
            if locked:
                release_log(self.db, remove=fresh)
            if fresh:  # a failed start on a new (e.g. mistyped) --db leaves nothing behind
                if self.storage is not None:
                    self.storage.close()
                for suffix in ("", "-wal", "-shm", "-journal"):
                    Path(f"{self.db}{suffix}").unlink(missing_ok=True)
                if made_dir:
                    self.snapshots.remove_new()
            if self._readers is not None:
                self._readers.shutdown(wait=False)
            raise
        self._locked = locked
        self._touched: dict[str, float] = {}
        self._rebuilt = False

    @property
    def snapshot_dir(self) -> Path:
        return self.snapshots.folder

    # ------------------------------------------------------------ learning
    @staticmethod
    def _arrays(rows: list[tuple]):
        X = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float64).reshape(len(rows), -1)
        actions = np.array([decode_action(r[3]) for r in rows], dtype=np.int64)
        feedback = np.array([int(round(r[1])) for r in rows], dtype=np.int64)
        props = np.array([r[4] for r in rows], dtype=np.float64)
        return X, actions, feedback, props

    def _learn_guarded(self, rows: list[tuple], refused: list[int]) -> list[tuple]:
        """Learn the rows in one call to a learner that refuses a non-finite step by itself
        (`NonFiniteUpdate`: the rows before it learned, that row
        not, the state as after them), going on after each refused row; the same model as one call a
        row. Returns the rows left to learn one by one (after any other refusal, which names no row)."""
        while rows:
            try:
                self.learner.learn(*self._arrays(rows))
            except base.NonFiniteUpdate as exc:
                if exc.row:
                    self.model_version = rows[exc.row - 1][0]
                log.warning("reward seq %d refused: %s", rows[exc.row][0], exc)
                refused.append(rows[exc.row][0])
                rows = rows[exc.row + 1:]
                continue
            except ValueError:  # refused by a check before anything was learned: row by row
                return rows
            self.model_version = rows[-1][0]
            return []
        return rows

    def _learn_live(self, rows: list[tuple]) -> list[int]:
        """Learn newly committed rewards in seq order, one row per call (a row the learner refuses with
        ``ValueError`` is rolled back by it); if the state is not finite afterwards the model is rebuilt
        from the log. Returns the refused seqs."""
        refused = []
        if len(rows) > 1 and self.LEARN_IN_ONE_CALL:
            rows = self._learn_guarded(rows, refused)
        for row in rows:
            try:
                self.learner.learn(*self._arrays([row]))
                self.model_version = row[0]
            except ValueError as exc:
                log.warning("reward seq %d refused: %s", row[0], exc)
                refused.append(row[0])
        if rows and not state_is_finite(self.learner):
            log.warning("the model's state is not finite after rewards %s; rebuilding it from the log",
                        [r[0] for r in rows])
            again, _ = self._rebuild_model(upto=(rows[-1][0], self._seen_event_seq))
            refused = sorted(set(refused) | set(again))
            self._rebuilt = True  # a snapshot follows, so that another rebuild replays little
        return refused

    # ------------------------------------------------------------ the writer
    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.writer.start(loop)

    def stop(self) -> None:
        self.writer.stop()
        if self._locked:  # the service is over: another process may serve the log
            self._locked = False
            release_log(self.db)
        for task in (self._repair_task, self._snapshot_task):
            if task is not None and not task.done():
                task.cancel()
        if self._readers is not None:
            self._readers.shutdown(wait=False)

    @property
    def _loop(self) -> asyncio.AbstractEventLoop | None:
        return self.writer.loop

    @_loop.setter
    def _loop(self, loop) -> None:
        self.writer.loop = loop

    def _submit(self, op: tuple, want: bool = True) -> asyncio.Future | None:
        return self.writer.submit(op, want)

    async def _write(self, op: tuple):
        if not self.healthy:
            raise Unavailable(UNAVAILABLE)
        return await self.writer.submit(op)

    async def read(self, fn, *args):
        """``fn(*args)``, a read of the log for a request (or a write that may be repeated, as the mode's).
        SQLite: at once (local and quick, or cached).
        PostgreSQL: on a reader thread, tried again with backoff while the database cannot be reached, for
        at most the store's ``retry_budget`` seconds (one try while it is in an outage), then `Unavailable`."""
        if self._readers is None:
            return fn(*args)
        storage = self.storage
        delays = retry_delays(0.0 if getattr(storage, "outage", False) else storage.retry_budget)
        loop = asyncio.get_running_loop()
        while True:
            try:
                return await loop.run_in_executor(self._readers, fn, *args)
            except Unavailable:
                pause = next(delays, None)
                if pause is None:
                    raise
                await asyncio.sleep(pause)

    async def key_role(self, key_hash: str) -> str | None:
        """The role of the key with this hash (None: unknown or revoked)."""
        return await self.read(self.storage.key_role, key_hash)

    async def check_health(self) -> bool:
        """Whether the service can serve now: its log writable (no failed write under repair) and, on
        PostgreSQL, the database answering (one try, on a new connection if the last one broke)."""
        if self.healthy and self._readers is not None and hasattr(self.storage, "ping"):
            ok = await asyncio.get_running_loop().run_in_executor(self._readers, self.storage.ping)
            return ok and self.healthy
        return self.healthy

    def touch_key(self, key_hash: str) -> None:
        """Record a key's use in the log (at most once a minute per key; never waited for)."""
        now = time.time()
        if self._loop is None or not self.healthy or now - self._touched.get(key_hash, 0.0) < 60.0:
            return
        if len(self._touched) > 10_000:
            self._touched.clear()
        self._touched[key_hash] = now
        self._submit(("touch", key_hash, now), want=False)

    def _committed(self, batch, results, exc, tail=None) -> None:
        """On the event loop after a commit: learn the batch's rewards in seq order, then answer. A
        replica learns the rewards of ``tail`` instead: every reward committed after the last one handed
        over, its own ones included (those already learned, after a rebuild, are skipped)."""
        self.writer.inflight -= len(batch)
        for op, _ in batch:
            if op[0] == "event":
                self._pending_draws -= op[1].n_draws
                self._pending_ids.discard(op[1].event_id)
                if exc is None:
                    self._seen_event_seq = max(self._seen_event_seq, op[1].seq)
        if exc is not None:
            log.error("the log could not be written (%s); refusing writes until it can", exc)
            for _, fut in batch:
                if fut is not None and not fut.done():
                    fut.set_exception(Unavailable(UNWRITTEN))
            self._start_repair()
            return
        rows, events = [], {}
        if self.replica is not None:
            rows, events = tail if tail is not None else ([], {})
            rows = [r for r in rows if r[0] > self._learned_upto]
            if rows:
                self._learned_upto = rows[-1][0]
        for (op, _), res in zip(batch, results):
            if self.replica is None and op[0] in REWARD_OPS and res.status == "accepted":
                ctx, action, prob, mode, default_action, greedy = res.event
                rows.append((res.seq, res.reward, ctx, action, prob, res.slots))
                events[res.seq] = (mode, default_action, greedy)
        try:
            refused = set(self._learn_live(rows)) if rows else set()
        except Exception as exc:  # logged, not learned: answered, and the model rebuilt from the log
            return self._learn_failed(batch, results, exc, REWARD_OPS)
        for seq, reward, *_ in rows:
            if seq not in refused:
                count_reward(self.stats, reward, *events[seq])
        for (op, fut), res in zip(batch, results):
            if fut is None or fut.done():
                continue
            if op[0] in REWARD_OPS and res.status == "accepted" and res.seq in refused:
                # answered once the removal of the reward from the log has committed
                self._chain(("unreward", res.seq), fut, Invalid(
                    "event_id", f"learning the reward of event {op[1]!r} would make the model's state non-finite "
                    "(an extreme context); the reward is refused and not logged."))
            else:
                fut.set_result(res)
        rebuilt, self._rebuilt = self._rebuilt, False
        if ((rebuilt or (self.cfg.snapshot_every
                         and self.model_version - self.last_snapshot_version >= self.cfg.snapshot_every))
                and self._snapshot_task is None):
            self.last_snapshot_version = self.model_version
            self._snapshot_task = asyncio.ensure_future(self._periodic_snapshot())

    async def _periodic_snapshot(self) -> None:
        try:
            await self.snapshot()
        except ServiceError:
            pass
        finally:
            self._snapshot_task = None

    # ------------------------------------------------------------ requests
    async def rank(self, context, event_id: str | None = None, allowed_actions: list[int] | None = None,
                   default_action=None) -> dict:
        if not self.healthy:
            raise Unavailable(UNAVAILABLE)
        K, m = self.n_classes, self.m
        x = context_row(context, self.n_features)
        allowed = allowed_labels(allowed_actions, K, m)
        if default_action is not None:
            default_action = check_action(default_action, "default_action", K, m)
        if self.mode == "apprentice" and default_action is None:
            raise Invalid("default_action", "apprentice mode: send the application's default_action with the context.")
        if event_id is not None and (event_id in self._pending_ids
                                     or await self.read(self.storage.event_exists, event_id)
                                     or event_id in self._pending_ids):  # (again: ranked during the read)
            raise Conflict(f"event_id {event_id!r} is already in the log.", "event_id")
        if not self.healthy:  # (a failed write during the read)
            raise Unavailable(UNAVAILABLE)
        xt = trusted_rows(x)  # validated once (above): the learner's methods take it as it is
        action, prob, n_draws, dist, dist_list, greedy = choose(
            self.learner, xt, K, m, allowed, default_action if self.mode == "apprentice" else None)
        greedy_text = encode_action(greedy)
        seq = self.next_event_seq  # a replica's own count of events
        self.next_event_seq += 1
        if event_id is None:  # '~' is not allowed in ids the client chooses: no collision
            event_id = void_event_id(self.replica, seq)
        row = EventRow(seq, event_id, time.time(), x.tobytes(), encode_action(action), prob,
                       dist.tobytes(), int(n_draws), self.mode,
                       None if default_action is None else encode_action(default_action), greedy_text,
                       self.model_version, replica=self.replica)
        self._pending_ids.add(event_id)
        self._pending_draws += int(n_draws)
        if await self._write(("event", row)) == 0:  # another replica logged this event_id meanwhile
            raise Conflict(f"event_id {event_id!r} is already in the log.", "event_id")
        count_event(self.stats, self.mode, greedy_text == row.default_action)
        return {"event_id": event_id, "action": action, "probability": prob, "distribution": dist_list,
                "greedy": greedy, "model_version": self.model_version, "mode": self.mode}

    async def reward(self, event_id: str, reward: float, timestamp: float | None = None) -> dict:
        if not (0.0 <= reward <= 1.0):
            raise Invalid("reward", "reward must be in [0, 1].")
        if self.binary and reward not in (0.0, 1.0):
            raise Invalid("reward", f"reward must be 0 or 1 for {self.conf['class']}.")
        res: RewardOutcome = await self._write(("reward", event_id, float(reward), timestamp))
        if res.status == "unknown":
            raise NotFound(f"no event {event_id!r} in the log.", "event_id")
        if res.status == "conflict":
            raise Conflict(f"event {event_id!r} already has reward {res.logged_reward}; "
                                    f"a different reward ({reward}) is rejected.", "reward")
        return {"event_id": event_id, "status": res.status, "model_version": self.model_version}

    async def snapshot(self) -> dict:
        """Save the model and commit its row after the events it covers."""
        if not self.healthy:
            raise Unavailable(UNAVAILABLE)
        reward_seq, event_seq = self.model_version, self.next_event_seq - 1
        # a replica's: its random stream and its own count of events
        path, digest = self.snapshots.write(self.learner, snapshot_name(reward_seq, event_seq, self.replica))
        await self._write(("snapshot", path, reward_seq, event_seq, digest, self.replica))
        return {"path": str(self.snapshots.file(path)), "model_version": reward_seq, "event_seq": event_seq}

    async def set_mode(self, mode: str) -> None:
        """Serve in ``mode`` from now on (kept in the log: a restart keeps it); on PostgreSQL the write runs
        off the event loop, retried like a request's reads while the database cannot be reached."""
        await self.read(self.storage.set_meta, "mode", mode)
        self.mode = mode

    def apprentice_report(self) -> dict:
        """Apprentice mode's report (`.tallies.apprentice_report`)."""
        return apprentice_report(self.stats, self.mode)
