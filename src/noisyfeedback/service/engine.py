"""The service's core: the deployed learner, the durable log and the order in which the model learns.

**Order.** Every ``/rank`` is given an event ``seq`` (1, 2, ...) when it draws its action from the
learner's random stream; every accepted ``/reward`` a reward ``seq`` when the single writer thread
writes it (the order of arrival at the writer = the order of commit). The model learns rewards in
reward-``seq`` order, each from the logged (context, action, propensity) of its event, and the rank
requests draw from the learner's stream in event-``seq`` order. After a batch of writes commits, its
rewards are learned (in ``seq`` order) *before* any of its requests is acknowledged, so a client that
waits for each answer before sending the next request drives the service exactly as ``nf.simulate``
drives the learner (act, feedback, learn).

**Replicas.** Several processes may serve one PostgreSQL log, each started with its own ``replica`` name.
Each ranks with its own copy of the model and its own random stream (derived from the log's
``replica_entropy`` and the name); its events carry its name and its own count of events. Each learns
*every* reward of the log, whichever replica received it, in reward-``seq`` order: the writer thread
reads the rewards after the last one handed to the model after each commit and, when idle, every
``poll_interval`` seconds. The reward ``seq`` is the order of commit (one advisory lock), so the rewards a
replica reads after a commit are all those up to its own, and learning is a pure function of the log:
every replica's model after reward ``s`` equals an offline replay of the log up to ``s``. A replica's own
reward is answered once everything up to it is learned.

**Recovery.** A snapshot (``learner.save``, our ``.npz``) records the last reward seq it has learned and
the last event seq whose draws its random stream has consumed; its row is committed after the events it
covers. On start the service loads the last snapshot, advances the random stream by the draws of the
events after it and learns the rewards after it in seq order: the model equals, bit for bit, the one
that was serving when the log was last committed. A replica takes the weights of the latest snapshot of
any replica (the one with the highest reward seq) and the random stream of its own latest snapshot (or
its initial stream), advanced by the draws of its own events after it.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import logging
import math
import os
import queue
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import base
from .learner import load_model, make_learner, n_features_of, set_size, state_is_finite
from .storage import EventRow, RewardOutcome, Storage, decode_action, encode_action, is_dsn
from .stores import open_storage

__all__ = ["ServiceConfig", "Engine", "ServiceError", "build_learner"]

MAX_BATCH = 1024
REPLICA_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: the log operations that write a reward the model learns
REWARD_OPS = ("reward", "creward")
log = logging.getLogger("noisyfeedback.service")


class ServiceError(Exception):
    """A request the service refuses: HTTP ``status``, the ``field`` it concerns and a message."""

    def __init__(self, status: int, message: str, field: str | None = None):
        super().__init__(message)
        self.status, self.message, self.field = status, message, field


@dataclass
class ServiceConfig:
    """How to start a service. The learner is given by ``model`` (a saved ``.npz``) or by ``learner``,
    ``n_classes`` and ``n_features`` (plus ``params``); on a database that already holds a service, the
    database's configuration and last snapshot win, and a different ``learner``, ``n_classes``,
    ``n_features``, ``rho0`` or ``rho1`` is refused (``None``: not given). ``rho0``/``rho1``: one flip rate,
    or a list of one per action (flips that depend on the action)."""

    db: str | Path
    model: str | Path | None = None
    learner: str | None = None
    n_classes: int | None = None
    n_features: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    rho0: float | list[float] | None = None
    rho1: float | list[float] | None = None
    mode: str = "online"
    snapshot_every: int = 100_000
    synchronous: str = "FULL"
    max_body: int = 1 << 20
    snapshot_dir: str | Path | None = None
    #: seconds a write waits for a lock held by another process before the request gets 503
    busy_timeout: float = 30.0
    #: bytes of request line and headers together (431 beyond)
    max_header: int = 16 << 10
    #: nesting depth of a JSON body (422 beyond)
    max_depth: int = 32
    #: serve rounds of actions described by features (a catalogue learner; ``/rank`` takes
    #: ``context_features`` and ``actions``), hashed into 2^bits weights with the given interactions
    action_features: bool = False
    bits: int | None = None
    interactions: tuple[str, ...] | None = None
    #: actions a request may list (action-feature services)
    max_actions: int = 50
    #: this process's name among the replicas of one PostgreSQL log (None: the only process serving it)
    replica: str | None = None
    #: seconds between two reads of the rewards other replicas logged, when this one writes nothing
    poll_interval: float = 0.05

    def check(self) -> None:
        """Refuse values no service can run with (one ``ValueError`` naming the option)."""
        def positive_int(name, value, low=1):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                                      or value < low):
                raise ValueError(f"--{name.replace('_', '-')} must be an integer >= {low}; got {value!r}.")
        positive_int("n_classes", self.n_classes, 2)
        positive_int("n_features", self.n_features)
        positive_int("max_body", self.max_body)
        positive_int("max_header", self.max_header, 1024)
        positive_int("max_depth", self.max_depth, 2)
        positive_int("snapshot_every", self.snapshot_every, 0)
        positive_int("max_actions", self.max_actions)
        if self.action_features:
            positive_int("bits", self.bits)
            if self.bits is not None and self.bits > 30:
                raise ValueError(f"--bits must be at most 30; got {self.bits!r}.")
            if self.mode != "online":
                raise ValueError("--action-features serves in online mode only (apprentice mode is for the "
                                 "numeric API).")
            if self.n_classes is not None or self.n_features is not None:
                raise ValueError("--action-features takes its actions and features from each request: leave "
                                 "out --n-classes and --n-features.")
        elif self.bits is not None or self.interactions is not None:
            raise ValueError("--bits and --interaction hash action features: give --action-features too.")
        rates = {}
        for name in ("rho0", "rho1"):
            v = getattr(self, name)
            per = isinstance(v, (list, tuple))
            vals = list(v) if per else [v]
            if v is not None and (not vals or not all(isinstance(r, (int, float)) and not isinstance(r, bool)
                                                       and 0 <= r < 1 for r in vals)):
                raise ValueError(f"--{name} must be in [0, 1), or one such rate per action; got {v!r}.")
            if per and self.n_classes is not None and len(vals) != self.n_classes:
                raise ValueError(f"--{name} must hold one rate per action: {self.n_classes} rates; got {len(vals)}.")
            rates[name] = vals if v is not None else [0.0]
        r0, r1 = rates["rho0"], rates["rho1"]
        if self.action_features and (isinstance(self.rho0, (list, tuple)) or isinstance(self.rho1, (list, tuple))):
            raise ValueError("--rho0/--rho1 per action need numbered actions: with --action-features the actions "
                             "change with each request; give one rate.")
        if len(r0) > 1 and len(r1) > 1 and len(r0) != len(r1):
            raise ValueError(f"--rho0 and --rho1 must hold as many rates; got {len(r0)} and {len(r1)}.")
        n = max(len(r0), len(r1))
        for a in range(n):
            x0, x1 = r0[a if len(r0) > 1 else 0], r1[a if len(r1) > 1 else 0]
            if x0 + x1 >= 1:
                where = f" for action {a}" if n > 1 else ""
                raise ValueError(f"--rho0 + --rho1 must be below 1{where}; got {x0} + {x1}.")
        if self.mode not in ("online", "apprentice"):
            raise ValueError(f"--mode must be online or apprentice; got {self.mode!r}.")
        if self.replica is not None and not (isinstance(self.replica, str) and REPLICA_NAME.fullmatch(self.replica)):
            raise ValueError(f"--replica must be 1 to 64 letters, digits, '_' or '-'; got {self.replica!r}.")
        if self.replica is not None and not is_dsn(self.db):
            raise ValueError("--replica needs a PostgreSQL log (--db postgresql://...): replicas share one "
                             "database.")
        if not (isinstance(self.poll_interval, (int, float)) and 0.001 <= self.poll_interval <= 60):
            raise ValueError(f"--poll-interval must be in [0.001, 60] seconds; got {self.poll_interval!r}.")
        if not (isinstance(self.busy_timeout, (int, float)) and 0 < self.busy_timeout < 3600):
            raise ValueError(f"busy_timeout must be in (0, 3600) seconds; got {self.busy_timeout!r}.")


def _rates_conf(v) -> float | list[float]:
    """A flip-rate option as the stored configuration holds it: a float, or a list of one per action."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return [float(r) for r in v]
    return float(v or 0.0)


def build_learner(cfg: ServiceConfig):
    """A fresh learner from the configuration, with its state (weights, random stream) created."""
    if cfg.model is not None:
        return load_model(cfg.model, cfg.n_features)
    if cfg.learner is None or cfg.n_classes is None or cfg.n_features is None:
        raise ValueError("give --model, or --learner with --n-classes and --n-features.")
    return make_learner(cfg.learner, int(cfg.n_classes), int(cfg.n_features), cfg.params, cfg.rho0, cfg.rho1)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover  (platforms without directory handles)
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Engine:
    """The learner, the log and the writer thread. All model work happens on the event loop's thread."""

    #: whether the service ranks actions described by features (:class:`~.catalogue.CatalogueEngine`)
    catalogue = False
    #: learn the rewards of one commit in one call (the numeric learners refuse a non-finite step by
    #: themselves, naming the row: :meth:`_learn_guarded`); else one call a reward
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
            raise ValueError("with a PostgreSQL log give snapshot_dir (--snapshot-dir), a folder every replica reads.")
        self.snapshot_dir = (Path(cfg.snapshot_dir).expanduser().resolve() if cfg.snapshot_dir is not None
                             else Path(f"{self.db}.snapshots"))
        made_dir = not self.snapshot_dir.exists()
        self.storage = storage
        try:
            if self.storage is None:
                self.storage = open_storage(self.db, cfg.synchronous, busy_timeout=cfg.busy_timeout)
            self.snapshot_dir.mkdir(mode=0o700, parents=dsn, exist_ok=True)
            self.healthy = True
            self._pending_draws = 0
            self._recover()
        except BaseException:
            if fresh:  # a failed start on a new (e.g. mistyped) --db leaves nothing behind
                if self.storage is not None:
                    self.storage.close()
                for suffix in ("", "-wal", "-shm", "-journal"):
                    Path(f"{self.db}{suffix}").unlink(missing_ok=True)
                if made_dir and self.snapshot_dir.is_dir():
                    for f in self.snapshot_dir.iterdir():
                        f.unlink()
                    self.snapshot_dir.rmdir()
            raise
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._outbox: list = []
        self._inflight = 0
        self._snapshot_task: asyncio.Task | None = None
        self._repair_task: asyncio.Task | None = None
        self._touched: dict[str, float] = {}
        self._rebuilt = False

    # ------------------------------------------------------------ start-up
    def _fresh(self) -> tuple[Any, dict]:
        """A new service's learner and the configuration stored with it."""
        learner = build_learner(self.cfg)
        return learner, {"class": type(learner).__name__, "n_classes": int(learner.n_classes),
                         "n_features": int(n_features_of(learner)), "m": set_size(learner),
                         "rho0": _rates_conf(self.cfg.rho0), "rho1": _rates_conf(self.cfg.rho1)}

    def _check_config(self, conf: dict) -> None:
        """A restart that names another learner, size or flip rate than the database holds is refused."""
        cfg, given = self.cfg, []
        if cfg.model is not None:
            other = load_model(cfg.model, cfg.n_features)
            given += [("--model's learner", conf["class"], type(other).__name__),
                      ("--model's n_classes", conf["n_classes"], int(other.n_classes)),
                      ("--model's n_features", conf["n_features"], n_features_of(other))]
        if cfg.learner is not None:
            from ..registry import resolve_learner

            try:
                name = resolve_learner(cfg.learner).__name__  # the catalogue's name of an alias
            except ValueError:
                name = cfg.learner
            given.append(("--learner", conf["class"], name))
        for opt, key, value in (("--n-classes", "n_classes", cfg.n_classes), ("--n-features", "n_features",
                                cfg.n_features), ("--rho0", "rho0", cfg.rho0), ("--rho1", "rho1", cfg.rho1)):
            if value is not None:
                given.append((opt, conf[key], _rates_conf(value) if key.startswith("rho") else type(conf[key])(value)))
        for opt, stored, new in given:
            if stored != new:
                raise ValueError(f"the database {self.db} serves {opt.lstrip('-').replace('-', '_')} = {stored!r}; "
                                 f"{opt} {new!r} differs. Start with the database's configuration (or leave the "
                                 "option out), or use a new --db.")

    def _snapshot_file(self, stored: str) -> Path:
        """A snapshot's file from its row: absolute, or relative to the database's folder (older rows:
        relative to the folder the service was started from; found by name in the snapshot folder)."""
        p = Path(stored)
        if p.is_absolute():
            return p
        if not is_dsn(self.db):
            near = Path(self.db).parent / p
            if near.exists():
                return near
        by_name = self.snapshot_dir / p.name
        return by_name if by_name.exists() else p

    def _stored_path(self, path: Path) -> str:
        if not is_dsn(self.db):
            try:
                return str(path.relative_to(Path(self.db).parent))
            except ValueError:
                pass
        return str(path)

    def _write_snapshot(self, learner, name: str) -> tuple[str, str]:
        """Save ``learner`` as ``name`` in the snapshot folder: private (0600), fsynced, renamed into place
        and the folder fsynced. Returns (the path to store, the file's SHA-256)."""
        final = self.snapshot_dir / name
        tmp = self.snapshot_dir / f".{name}.{os.getpid()}.tmp.npz"
        try:
            learner.save(tmp)
            os.chmod(tmp, 0o600)
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
            digest = _sha256(tmp)
            os.replace(tmp, final)
        finally:
            tmp.unlink(missing_ok=True)
        _fsync_dir(self.snapshot_dir)
        return self._stored_path(final), digest

    def _read_snapshot(self, stored: str, digest: str | None, problems: list[str]):
        """The learner of one snapshot row, or None (the problem noted) when its file is missing,
        truncated or replaced (its SHA-256 differs from its row's)."""
        path = self._snapshot_file(stored)
        try:
            if digest is not None and _sha256(path) != digest:
                raise ValueError("its SHA-256 differs from the one logged when it was written")
            return base.load(path)
        except (OSError, ValueError) as exc:
            problems.append(f"{path}: {exc}")
            log.warning("snapshot %s is unusable (%s); trying the one before it", path, exc)
            return None

    def _load_snapshot(self):
        """The latest usable snapshot: (learner, reward_seq, event_seq). A missing, truncated or replaced
        file (its SHA-256 differs from its row's) is skipped for the one before it: the log holds every
        event and reward after any snapshot."""
        if self.replica is not None:
            return self._load_replica_snapshot()
        problems: list[str] = []
        for stored, reward_seq, event_seq, digest in self.storage.snapshots():
            learner = self._read_snapshot(stored, digest, problems)
            if learner is not None:
                return learner, int(reward_seq), int(event_seq)
        raise ValueError("no usable snapshot: " + "; ".join(problems))

    def _replica_stream(self, learner) -> np.random.Generator:
        """A replica's initial random stream: PCG64 from SeedSequence(the log's ``replica_entropy``,
        spawn_key = the SHA-256 of the name). The entropy is stored once per log (the learner's integer
        seed, else fresh entropy), so the stream is known from the log alone."""
        seed = learner.get_params().get("seed")
        default = int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0 \
            else int(np.random.SeedSequence().entropy)
        entropy = int(self.storage.setdefault_meta("replica_entropy", str(default)))
        digest = hashlib.sha256(self.replica.encode()).digest()[:16]
        key = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=key)))

    def _load_replica_snapshot(self):
        """A replica's start: the weights of the usable snapshot with the highest reward seq (of any
        replica), the random stream of this replica's latest usable snapshot (or its initial stream) and
        the replica's own count of events that stream has drawn for: (learner, reward_seq, event_seq)."""
        rows = self.storage.replica_snapshots()  # the latest first
        problems: list[str] = []
        learner = None
        for stored, reward_seq, _, digest, _ in sorted(rows, key=lambda r: -int(r[1])):  # stable: ties by id
            learner = self._read_snapshot(stored, digest, problems)
            if learner is not None:
                break
        if learner is None:
            raise ValueError("no usable snapshot: " + "; ".join(problems))
        rng, event_seq = None, 0
        for stored, _, own_seq, digest, replica in rows:
            if replica == self.replica:
                own = self._read_snapshot(stored, digest, problems)
                if own is not None:
                    rng, event_seq = own.rng_, int(own_seq)
                    break
        learner.rng_ = rng if rng is not None else self._replica_stream(learner)
        return learner, int(reward_seq), event_seq

    def _recover(self) -> None:
        """Build the model from the log: the latest usable snapshot, the random draws of the events after
        it, then every reward after it in seq order. Rewards the model refuses (its state would not stay
        finite) are removed from the log."""
        st = self.storage
        stored = st.get_meta("config")
        if stored is None:
            learner, conf = self._fresh()
            path, digest = self._write_snapshot(learner, "snapshot-000000000000-000000000000.npz")
            st.set_meta("config", json.dumps(conf))
            st.set_meta("mode", self.cfg.mode)
            st.add_snapshot(path, 0, 0, digest)
        conf = json.loads(st.get_meta("config"))
        if stored is not None:
            self._check_config(conf)
        if self.replica is None and is_dsn(self.db) and st.has_replica_events():  # (replicas: PostgreSQL only)
            raise ValueError(f"the database {self.db} is served by replicas; start this process as one of them "
                             "with --replica NAME.")
        refused, snapshot_seq = self._rebuild_model()
        self.refused_on_recovery = refused
        self.conf = conf
        self.n_features = conf["n_features"]
        self.n_classes = conf["n_classes"]
        self.m = conf["m"]
        self.rho0, self.rho1 = conf["rho0"], conf["rho1"]
        self.mode = st.get_meta("mode") or "online"
        self.next_event_seq = st.max_event_seq(self.replica) + 1
        self._seen_event_seq = self.next_event_seq - 1  # the last event seq known committed here
        self.stats = st.stats()
        self.binary = True  # every bandit learner of the library learns from 0/1 feedback
        self.last_snapshot_version = snapshot_seq
        self._pending_ids: set[str] = set()

    def _rebuild_model(self, upto: tuple[int, int] | None = None) -> tuple[list[int], int]:
        """Set the learner to the latest usable snapshot, advanced by the random draws of the events after
        it (logged, and handed to the writer but not yet acknowledged here) and by the rewards after it --
        with ``upto`` = (reward seq, event seq), only those the event loop has seen committed (the writer
        may have committed later ones already). Rewards the model refuses are removed from the log.
        Returns (the refused seqs, the snapshot's reward seq)."""
        st = self.storage
        learner, reward_seq, event_seq = self._load_snapshot()
        up_r, up_e = upto if upto is not None else (None, None)
        draws = (st.draws_after(event_seq, up_e) if self.replica is None
                 else st.draws_after(event_seq, up_e, replica=self.replica)) + self._pending_draws
        while draws > 0:  # the uniforms the logged events after the snapshot drew
            k = min(draws, 1 << 20)
            learner.rng_.random(k)
            draws -= k
        self.learner = learner
        self.model_version = reward_seq
        learned_before, self._learned_upto = self._learned_upto, reward_seq
        refused = self._replay(reward_seq, up_r)
        self._learned_upto = max(self._learned_upto, learned_before)
        if refused:
            log.warning("rewards %s are refused (the model would not stay finite) and removed from the log",
                        refused)
            st.apply_batch([("unreward", seq) for seq in refused])
        return refused, reward_seq

    @staticmethod
    def _arrays(rows: list[tuple]):
        X = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float64).reshape(len(rows), -1)
        actions = np.array([decode_action(r[3]) for r in rows], dtype=np.int64)
        feedback = np.array([int(round(r[1])) for r in rows], dtype=np.int64)
        props = np.array([r[4] for r in rows], dtype=np.float64)
        return X, actions, feedback, props

    def _replay(self, after: int, upto: int | None = None) -> list[int]:
        """Learn the logged rewards after seq ``after`` (chunks at once; a chunk that fails is redone row
        by row from a copy, each refused row left out). Returns the refused seqs."""
        refused: list[int] = []
        for rows in self.storage.rewards_after(after, upto=upto):
            saved = copy.deepcopy(self.learner)
            try:
                self.learner.learn(*self._arrays(rows))
                ok = state_is_finite(self.learner)
            except ValueError:
                ok = False
            if ok:
                self.model_version = self._learned_upto = rows[-1][0]
                continue
            self.learner = saved
            for row in rows:
                before = copy.deepcopy(self.learner)
                try:
                    self.learner.learn(*self._arrays([row]))
                    ok = state_is_finite(self.learner)
                except ValueError:
                    ok = False
                if ok:
                    self.model_version = row[0]
                else:
                    self.learner = before
                    refused.append(row[0])
                self._learned_upto = row[0]
        return refused

    def _learn_guarded(self, rows: list[tuple], refused: list[int]) -> list[tuple]:
        """Learn the rows in one call to a learner that refuses a non-finite step by itself
        (:class:`~noisyfeedback.base.NonFiniteUpdate`: the rows before it learned, that row
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

    # --------------------------------------------------------- writer thread
    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._thread = threading.Thread(target=self._writer, name="nf-log-writer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=10)
            self._thread = None
        for task in (self._repair_task, self._snapshot_task):
            if task is not None and not task.done():
                task.cancel()

    def _tail(self, after: int) -> tuple[list[tuple], dict[int, tuple]]:
        """The rewards logged after seq ``after`` (by any replica), in seq order, as the replay reads them,
        and their events' (mode, default_action, greedy) by seq."""
        rows = [r for chunk in self.storage.rewards_after(after) for r in chunk]
        if not rows:
            return rows, {}
        events = self.storage.reward_events(after, rows[-1][0])
        # a reward removed (refused by the model) between the two reads: learned by no one, counted as online
        return rows, {r[0]: events.get(r[0], ("online", None, None)) for r in rows}

    def _writer(self) -> None:
        q = self._queue
        tailing = self.replica is not None
        cursor = None  # replicas: the last reward seq handed to the event loop (None: ask the loop)
        while True:
            if tailing:
                try:
                    item = q.get(timeout=self.cfg.poll_interval)
                except queue.Empty:
                    item = ()
                    if not self.healthy:
                        cursor = None
                        continue
            else:
                item = q.get()
            if item is None:
                return
            batch = list(item)
            stop = False
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
                results = self.storage.apply_batch([op for op, _ in batch]) if batch else []
                tail = None
                if tailing:  # every reward committed up to now, ours included, in seq order
                    if cursor is None:
                        cursor = self._learned_upto
                    tail = self._tail(cursor)
                    if tail[0]:
                        cursor = tail[0][-1][0]
                if batch or (tail and tail[0]):
                    self._loop.call_soon_threadsafe(self._committed, batch, results, None, tail)
            except BaseException as exc:  # nothing of the batch is logged (rolled back): 503, then repair
                cursor = None
                if batch:
                    self._loop.call_soon_threadsafe(self._committed, batch, None, exc)
                else:  # a failed read while idle: the next write finds out (and repairs)
                    log.warning("reading the rewards of the other replicas failed (%s); retrying", exc)
                    time.sleep(min(1.0, 10 * self.cfg.poll_interval))
            if stop:
                return

    def _committed(self, batch, results, exc, tail=None) -> None:
        """On the event loop after a commit: learn the batch's rewards in seq order, then answer. A
        replica learns the rewards of ``tail`` instead: every reward committed after the last one handed
        over, its own ones included (those already learned, after a rebuild, are skipped)."""
        self._inflight -= len(batch)
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
                    fut.set_exception(ServiceError(503, f"the log could not be written: {exc}"))
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
        refused = set(self._learn_live(rows)) if rows else set()
        s = self.stats
        for seq, reward, *_ in rows:
            if seq in refused:
                continue
            mode, default_action, greedy = events[seq]
            s["rewards"] += 1
            s["reward_sum"] += reward
            s["reward_sq"] += reward * reward
            if mode == "apprentice":
                s["app_rewards"] += 1
                s["app_reward_sum"] += reward
                if greedy == default_action:
                    s["app_agree_rewards"] += 1
                    s["app_agree_reward_sum"] += reward
        for (op, fut), res in zip(batch, results):
            if fut is None or fut.done():
                continue
            if op[0] in REWARD_OPS and res.status == "accepted" and res.seq in refused:
                # answered once the removal of the reward from the log has committed
                self._chain(("unreward", res.seq), fut, ServiceError(
                    422, f"learning the reward of event {op[1]!r} would make the model's state non-finite "
                         "(an extreme context); the reward is refused and not logged.", "event_id"))
            else:
                fut.set_result(res)
        rebuilt, self._rebuilt = self._rebuilt, False
        if ((rebuilt or (self.cfg.snapshot_every
                         and self.model_version - self.last_snapshot_version >= self.cfg.snapshot_every))
                and self._snapshot_task is None):
            self.last_snapshot_version = self.model_version
            self._snapshot_task = asyncio.ensure_future(self._periodic_snapshot())

    def _chain(self, op: tuple, fut: asyncio.Future, error: ServiceError) -> None:
        inner = self._submit(op)

        def done(f: asyncio.Future) -> None:
            if fut.done():
                return
            if f.exception() is not None:
                fut.set_exception(f.exception())
            else:
                fut.set_exception(error)
        inner.add_done_callback(done)

    async def _periodic_snapshot(self) -> None:
        try:
            await self.snapshot()
        except ServiceError:
            pass
        finally:
            self._snapshot_task = None

    def _start_repair(self) -> None:
        self.healthy = False
        if self._repair_task is None or self._repair_task.done():
            self._repair_task = asyncio.ensure_future(self._repair())

    async def _repair(self) -> None:
        """After a failed write: wait until the writer is idle and the log can be written again (e.g. an
        external lock was released), rebuild the model from the log (draws made for events that were not
        logged are undone) and serve again."""
        delay = 0.05
        while True:
            await asyncio.sleep(delay)
            delay = min(2 * delay, 1.0)
            if self._inflight:
                continue
            if not await asyncio.to_thread(self.storage.writable):
                continue
            if self._inflight:
                continue
            try:
                self._pending_draws = 0
                self._recover()
            except Exception as exc:  # the log cannot be read yet either: try again
                log.error("rebuilding the model from the log failed (%s); retrying", exc)
                continue
            self.healthy = True
            log.warning("the log can be written again; the model was rebuilt from it")
            return

    def _submit(self, op: tuple, want: bool = True) -> asyncio.Future | None:
        fut = self._loop.create_future() if want else None
        if not self._outbox:
            self._loop.call_soon(self._flush)
        self._outbox.append((op, fut))
        self._inflight += 1
        return fut

    async def _write(self, op: tuple):
        if not self.healthy:
            raise ServiceError(503, "the log cannot be written now; retry later (see GET /health).")
        return await self._submit(op)

    def _flush(self) -> None:
        """Hand the operations of this loop iteration to the writer in one put (order kept)."""
        ops, self._outbox = self._outbox, []
        self._queue.put(ops)

    def touch_key(self, key_hash: str) -> None:
        """Record a key's use in the log (at most once a minute per key; never waited for)."""
        now = time.time()
        if self._loop is None or not self.healthy or now - self._touched.get(key_hash, 0.0) < 60.0:
            return
        if len(self._touched) > 10_000:
            self._touched.clear()
        self._touched[key_hash] = now
        self._submit(("touch", key_hash, now), want=False)

    # ------------------------------------------------------------ requests
    def context_row(self, context) -> np.ndarray:
        d = self.n_features
        if isinstance(context, dict):
            x = np.zeros((1, d))
            seen: set[int] = set()
            for k, v in context.items():
                if not (k.isascii() and k.isdigit()) or len(k) > 18:
                    raise ServiceError(422, f"sparse context index {k!r} is not a plain decimal integer "
                                            "(ASCII digits only).", f"context.{k}")
                i = int(k)
                if not 0 <= i < d:
                    raise ServiceError(422, f"sparse context index {i} is outside 0..{d - 1}.", f"context.{k}")
                if i in seen:
                    raise ServiceError(422, f"sparse context index {i} is given twice.", f"context.{k}")
                seen.add(i)
                x[0, i] = v
        else:
            if len(context) != d:
                raise ServiceError(422, f"context has {len(context)} features; the model has {d}.", "context")
            x = np.array(context, dtype=np.float64).reshape(1, d)
        if not np.isfinite(x).all():
            raise ServiceError(422, "context holds a value that is not finite.", "context")
        return x

    def _check_action(self, value, name: str):
        K, m = self.n_classes, self.m
        vals = value if isinstance(value, list) else [value]
        if len(vals) != m:
            raise ServiceError(422, f"{name} must be {'one label' if m == 1 else f'a set of {m} labels'}.", name)
        if any(not 0 <= v < K for v in vals):
            raise ServiceError(422, f"{name} must hold labels in 0..{K - 1}.", name)
        if len(set(vals)) != m:
            raise ServiceError(422, f"{name} must hold {m} distinct labels.", name)
        return sorted(vals) if m > 1 else vals[0]

    def _greedy(self, x: np.ndarray) -> list | int:
        """The greedy action (or top-m set, in increasing label order) of one row."""
        if self.m > 1:
            return sorted(self.learner.predict_set(x)[0].tolist())
        return int(self.learner.predict(x)[0])

    def _distribution(self, x: np.ndarray, allowed: np.ndarray | None = None) -> np.ndarray:
        """What ``act`` draws from for this row (restricted to ``allowed`` and renormalised; set learners:
        inclusion probabilities, summing to m); 422 when the model gives no finite distribution (nothing
        is drawn then)."""
        kw = {} if allowed is None else {"allowed": allowed}
        dist = np.asarray(self.learner.action_probabilities(x, **kw), dtype=np.float64)[0]
        if not (np.isfinite(dist).all() and (dist >= 0).all() and abs(dist.sum() - self.m) <= 1e-6 * self.m):
            raise ServiceError(422, "the model gives no finite distribution of actions for this context "
                                    "(its values are too extreme); nothing was drawn or logged.", "context")
        return dist

    async def rank(self, context, event_id: str | None = None, allowed_actions: list[int] | None = None,
                   default_action=None) -> dict:
        if not self.healthy:
            raise ServiceError(503, "the log cannot be written now; retry later (see GET /health).")
        x = self.context_row(context)
        K, m = self.n_classes, self.m
        allowed = None
        if allowed_actions is not None:
            if not allowed_actions:
                raise ServiceError(422, "allowed_actions is empty.", "allowed_actions")
            if any(not 0 <= a < K for a in allowed_actions):
                raise ServiceError(422, f"allowed_actions must hold labels in 0..{K - 1}.", "allowed_actions")
            if m > 1:
                raise ServiceError(422, "allowed_actions is supported for single-action learners only.",
                                   "allowed_actions")
            allowed = np.unique(np.asarray(allowed_actions, dtype=np.int64))
        if default_action is not None:
            default_action = self._check_action(default_action, "default_action")
        if self.mode == "apprentice" and default_action is None:
            raise ServiceError(422, "apprentice mode: send the application's default_action with the context.",
                               "default_action")
        if event_id is not None and (event_id in self._pending_ids or self.storage.event_exists(event_id)):
            raise ServiceError(409, f"event_id {event_id!r} is already in the log.", "event_id")
        learner = self.learner
        dist = self._distribution(x, allowed)
        greedy = self._greedy(x)
        greedy_text = encode_action(greedy)
        if self.mode == "apprentice":
            action, prob, n_draws = default_action, 1.0, 0
            dist = np.zeros(K)
            dist[np.atleast_1d(default_action)] = 1.0
        else:
            state = learner.rng_.bit_generator.state if learner.draws_per_round else None
            acts, probs = learner.act(x) if allowed is None else learner.act(x, allowed=allowed)
            action = acts[0].tolist()
            prob = float(probs[0])
            n_draws = learner.draws_per_round
            if not 0.0 < prob <= 1.0:  # nothing is logged: the draw is undone
                if state is not None:
                    learner.rng_.bit_generator.state = state
                raise ServiceError(422, "the model gives no finite probability for this context; nothing was "
                                        "logged.", "context")
        seq = self.next_event_seq  # a replica's own count of events
        self.next_event_seq += 1
        if event_id is None:  # '~' is not allowed in ids the client chooses: no collision
            event_id = f"ev~{seq}" if self.replica is None else f"ev~{self.replica}~{seq}"
        row = EventRow(seq, event_id, time.time(), x.tobytes(), encode_action(action), prob,
                       dist.tobytes(), int(n_draws), self.mode,
                       None if default_action is None else encode_action(default_action), greedy_text,
                       self.model_version, replica=self.replica)
        self._pending_ids.add(event_id)
        self._pending_draws += int(n_draws)
        if await self._write(("event", row)) == 0:  # another replica logged this event_id meanwhile
            raise ServiceError(409, f"event_id {event_id!r} is already in the log.", "event_id")
        s = self.stats
        s["events"] += 1
        if self.mode == "apprentice":
            s["app_events"] += 1
            s["app_agree"] += int(greedy_text == row.default_action)
        return {"event_id": event_id, "action": action, "probability": prob, "distribution": dist.tolist(),
                "greedy": greedy, "model_version": self.model_version, "mode": self.mode}

    async def reward(self, event_id: str, reward: float, timestamp: float | None = None) -> dict:
        if not (0.0 <= reward <= 1.0):
            raise ServiceError(422, "reward must be in [0, 1].", "reward")
        if self.binary and reward not in (0.0, 1.0):
            raise ServiceError(422, f"reward must be 0 or 1 for {self.conf['class']}.", "reward")
        res: RewardOutcome = await self._write(("reward", event_id, float(reward), timestamp))
        if res.status == "unknown":
            raise ServiceError(404, f"no event {event_id!r} in the log.", "event_id")
        if res.status == "conflict":
            raise ServiceError(409, f"event {event_id!r} already has reward {res.logged_reward}; "
                                    f"a different reward ({reward}) is rejected.", "reward")
        return {"event_id": event_id, "status": res.status, "model_version": self.model_version}

    async def snapshot(self) -> dict:
        """Save the model and commit its row after the events it covers."""
        if not self.healthy:
            raise ServiceError(503, "the log cannot be written now; retry later (see GET /health).")
        reward_seq, event_seq = self.model_version, self.next_event_seq - 1
        name = f"snapshot-{reward_seq:012d}-{event_seq:012d}.npz"
        if self.replica is not None:  # its random stream and its own count of events are this replica's
            name = f"snapshot-{self.replica}-{reward_seq:012d}-{event_seq:012d}.npz"
        path, digest = self._write_snapshot(self.learner, name)
        await self._write(("snapshot", path, reward_seq, event_seq, digest, self.replica))
        return {"path": str(self._snapshot_file(path)), "model_version": reward_seq, "event_seq": event_seq}

    def set_mode(self, mode: str) -> None:
        self.storage.set_meta("mode", mode)
        self.mode = mode

    def apprentice_report(self) -> dict:
        """Apprentice mode's report: how often the learned greedy action agrees with the application's,
        and the mean reward of both: the application's actions (observed), and the learned policy's,
        bounded (its reward is observed where the two agree; elsewhere it lies in [0, 1])."""
        s = self.stats
        div = lambda a, b: a / b if b else math.nan  # noqa: E731
        n, agree_n, agree_sum = s["app_rewards"], s["app_agree_rewards"], s["app_agree_reward_sum"]
        return {"mode": self.mode, "events": int(s["app_events"]),
                "agreement": div(s["app_agree"], s["app_events"]),
                "rewards": int(n),
                "reward_default": div(s["app_reward_sum"], n),
                "reward_agreeing": div(agree_sum, agree_n),
                # the learned greedy policy's mean reward on these contexts: observed where it agrees with
                # the application's (deterministic) action, unknown in [0, 1] elsewhere
                "reward_learned_lower": div(agree_sum, n),
                "reward_learned_upper": div(agree_sum + (n - agree_n), n)}
