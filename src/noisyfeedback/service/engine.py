"""The service's core: the deployed learner, the durable log and the order in which the model learns.

**Order.** Every ``/rank`` is given an event ``seq`` (1, 2, ...) when it draws its action from the
learner's random stream; every accepted ``/reward`` a reward ``seq`` when the single writer thread
writes it (the order of arrival at the writer = the order of commit). The model learns rewards in
reward-``seq`` order, each from the logged (context, action, propensity) of its event, and the rank
requests draw from the learner's stream in event-``seq`` order. After a batch of writes commits, its
rewards are learned (in ``seq`` order) *before* any of its requests is acknowledged, so a client that
waits for each answer before sending the next request drives the service exactly as ``nf.simulate``
drives the learner (act, feedback, learn).

**Recovery.** A snapshot (``learner.save``, our ``.npz``) records the last reward seq it has learned and
the last event seq whose draws its random stream has consumed; its row is committed after the events it
covers. On start the service loads the last snapshot, advances the random stream by the draws of the
events after it and learns the rewards after it in seq order: the model equals, bit for bit, the one
that was serving when the log was last committed.
"""

from __future__ import annotations

import asyncio
import json
import math
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import base
from .. import registry
from ..kernels.diluted import top_m_rows
from ..kernels.linear import predict_rows
from ..learners._linear import kernel_view
from .policy import action_distribution, distribution_from_greedy, restricted_draw, set_size
from .storage import EventRow, RewardOutcome, Storage, decode_action, encode_action
from .stores import open_storage

__all__ = ["ServiceConfig", "Engine", "ServiceError", "build_learner"]

MAX_BATCH = 1024


class ServiceError(Exception):
    """A request the service refuses: HTTP ``status``, the ``field`` it concerns and a message."""

    def __init__(self, status: int, message: str, field: str | None = None):
        super().__init__(message)
        self.status, self.message, self.field = status, message, field


@dataclass
class ServiceConfig:
    """How to start a service. The learner is given by ``model`` (a saved ``.npz``) or by ``learner``,
    ``n_classes`` and ``n_features`` (plus ``params``); on a database that already holds a service, the
    database's configuration and last snapshot win."""

    db: str | Path
    model: str | Path | None = None
    learner: str | None = None
    n_classes: int | None = None
    n_features: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    rho0: float = 0.0
    rho1: float = 0.0
    mode: str = "online"
    snapshot_every: int = 100_000
    synchronous: str = "FULL"
    max_body: int = 1 << 20
    snapshot_dir: str | Path | None = None


def build_learner(cfg: ServiceConfig):
    """A fresh learner from the configuration, with its state (W_, rng_) created."""
    if cfg.model is not None:
        learner = base.load(cfg.model)
    else:
        if cfg.learner is None or cfg.n_classes is None or cfg.n_features is None:
            raise ValueError("give --model, or --learner with --n-classes and --n-features.")
        klass = registry.resolve_learner(cfg.learner)
        params = dict(cfg.params)
        names = registry.learner_params(klass)
        for k, v in (("rho0", cfg.rho0), ("rho1", cfg.rho1)):
            if k in names and k not in params and v:
                params[k] = v
        learner = registry.build_learner(klass, int(cfg.n_classes), **params)
    if not registry.learner_tags(learner).servable:
        raise ValueError(f"{type(learner).__name__} cannot be served; the service needs a bandit learner: "
                         f"{', '.join(registry.learners_where(servable=True))}.")
    learner._validate_params()
    n_features = learner.W_.shape[1] if hasattr(learner, "W_") else cfg.n_features
    if n_features is None:
        raise ValueError("--n-features is needed for an unfitted model.")
    learner._init_state(int(n_features))
    if not hasattr(learner, "rng_"):
        learner.rng_ = base.make_rng(getattr(learner, "seed", None))
    return learner


class Engine:
    """The learner, the log and the writer thread. All model work happens on the event loop's thread."""

    def __init__(self, cfg: ServiceConfig, storage: Storage | None = None):
        self.cfg = cfg
        self.storage = storage if storage is not None else open_storage(cfg.db, cfg.synchronous)
        if cfg.snapshot_dir is None and str(cfg.db).startswith(("postgresql://", "postgres://")):
            raise ValueError("with a PostgreSQL log give snapshot_dir (--snapshot-dir), a folder every replica reads.")
        self.snapshot_dir = Path(cfg.snapshot_dir or f"{cfg.db}.snapshots")
        self.snapshot_dir.mkdir(parents=True, exist_ok=True)
        self.healthy = True
        self._recover()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pending_ids: set[str] = set()
        self._outbox: list = []
        self._snapshot_task: asyncio.Task | None = None

    # ------------------------------------------------------------ start-up
    def _recover(self) -> None:
        st = self.storage
        stored = st.get_meta("config")
        if stored is None:
            learner = build_learner(self.cfg)
            conf = {"class": type(learner).__name__, "n_classes": int(learner.n_classes),
                    "n_features": int(learner.W_.shape[1]), "m": set_size(learner),
                    "rho0": float(self.cfg.rho0), "rho1": float(self.cfg.rho1)}
            path = self.snapshot_dir / "snapshot-000000000000-000000000000.npz"
            learner.save(path)
            st.set_meta("config", json.dumps(conf))
            st.set_meta("mode", self.cfg.mode)
            st.add_snapshot(str(path), 0, 0)
        conf = json.loads(st.get_meta("config"))
        path, reward_seq, event_seq = st.latest_snapshot()
        learner = base.load(path)
        draws = st.draws_after(event_seq)
        while draws > 0:  # the uniforms the logged events after the snapshot drew
            k = min(draws, 1 << 20)
            learner.rng_.random(k)
            draws -= k
        self.learner = learner
        self.model_version = reward_seq
        for rows in st.rewards_after(reward_seq):
            self._learn_rows(rows)
        self.conf = conf
        self.n_features = conf["n_features"]
        self.n_classes = conf["n_classes"]
        self.m = conf["m"]
        self.rho0, self.rho1 = conf["rho0"], conf["rho1"]
        self.mode = st.get_meta("mode") or "online"
        self.next_event_seq = st.max_event_seq() + 1
        self.stats = st.stats()
        self.binary = True  # every bandit learner of the library learns from 0/1 feedback
        self.last_snapshot_version = reward_seq
        self._own_probabilities = hasattr(self.learner, "action_probabilities")

    def _learn_rows(self, rows: list[tuple]) -> None:
        """Learn (seq, reward, context, action, probability) rows, in the given (seq) order."""
        if not rows:
            return
        X = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float64).reshape(len(rows), -1)
        acts = [decode_action(r[3]) for r in rows]
        actions = np.array(acts, dtype=np.int64)
        feedback = np.array([int(round(r[1])) for r in rows], dtype=np.int64)
        props = np.array([r[4] for r in rows], dtype=np.float64)
        self.learner.learn(X, actions, feedback, props)
        self.model_version = rows[-1][0]

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

    def _writer(self) -> None:
        q = self._queue
        while True:
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
                results = self.storage.apply_batch([op for op, _ in batch])
                self._loop.call_soon_threadsafe(self._committed, batch, results, None)
            except BaseException as exc:  # the log cannot be written: answer 503 from now on
                self._loop.call_soon_threadsafe(self._committed, batch, None, exc)
            if stop:
                return

    def _committed(self, batch, results, exc) -> None:
        """On the event loop after a commit: learn the batch's rewards in seq order, then answer."""
        if exc is not None:
            self.healthy = False
            for _, fut in batch:
                if not fut.done():
                    fut.set_exception(ServiceError(503, f"the log could not be written: {exc}"))
            return
        rows = []
        for (op, _), res in zip(batch, results):
            if op[0] == "reward" and res.status == "accepted":
                ctx, action, prob, mode, default_action, greedy = res.event
                rows.append((res.seq, res.reward, ctx, action, prob))
                s = self.stats
                s["rewards"] += 1
                s["reward_sum"] += res.reward
                s["reward_sq"] += res.reward * res.reward
                if mode == "apprentice":
                    s["app_rewards"] += 1
                    s["app_reward_sum"] += res.reward
                    if greedy == default_action:
                        s["app_agree_rewards"] += 1
                        s["app_agree_reward_sum"] += res.reward
            elif op[0] == "event":
                self._pending_ids.discard(op[1].event_id)
        self._learn_rows(rows)
        for (_, fut), res in zip(batch, results):
            if not fut.done():
                fut.set_result(res)
        if (self.cfg.snapshot_every and self.model_version - self.last_snapshot_version >= self.cfg.snapshot_every
                and self._snapshot_task is None):
            self.last_snapshot_version = self.model_version
            self._snapshot_task = asyncio.ensure_future(self._periodic_snapshot())

    async def _periodic_snapshot(self) -> None:
        try:
            await self.snapshot()
        finally:
            self._snapshot_task = None

    async def _write(self, op: tuple):
        if not self.healthy:
            raise ServiceError(503, "the log could not be written; restart the service.")
        fut = self._loop.create_future()
        if not self._outbox:
            self._loop.call_soon(self._flush)
        self._outbox.append((op, fut))
        return await fut

    def _flush(self) -> None:
        """Hand the operations of this loop iteration to the writer in one put (order kept)."""
        ops, self._outbox = self._outbox, []
        self._queue.put(ops)

    # ------------------------------------------------------------ requests
    def context_row(self, context) -> np.ndarray:
        d = self.n_features
        if isinstance(context, dict):
            x = np.zeros((1, d))
            for k, v in context.items():
                try:
                    i = int(k)
                except ValueError:
                    raise ServiceError(422, f"sparse context index {k!r} is not an integer.", f"context.{k}") from None
                if not 0 <= i < d:
                    raise ServiceError(422, f"sparse context index {i} is outside 0..{d - 1}.", f"context.{k}")
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

    def _greedy(self, x: np.ndarray) -> np.ndarray:
        """The greedy action (or top-m set) of one row, from the kernels (no per-call validation)."""
        W = self.learner.W_
        if self.m > 1:
            out = np.empty((1, self.m), dtype=np.int64)
            top_m_rows(W, *kernel_view(x), self.m, out)
            return out[0]
        out = np.empty(1, dtype=np.int64)
        predict_rows(W, *kernel_view(x), out)
        return out[0]

    def _distribution(self, x: np.ndarray, greedy: np.ndarray) -> np.ndarray:
        if self._own_probabilities:
            return action_distribution(self.learner, x)[0]
        return distribution_from_greedy(self.learner, greedy[None])[0]

    async def rank(self, context, event_id: str | None = None, allowed_actions: list[int] | None = None,
                   default_action=None) -> dict:
        x = self.context_row(context)
        K, m = self.n_classes, self.m
        if allowed_actions is not None:
            if not allowed_actions:
                raise ServiceError(422, "allowed_actions is empty.", "allowed_actions")
            if any(not 0 <= a < K for a in allowed_actions):
                raise ServiceError(422, f"allowed_actions must hold labels in 0..{K - 1}.", "allowed_actions")
            if m > 1:
                raise ServiceError(422, "allowed_actions is supported for single-action learners only.",
                                   "allowed_actions")
        if default_action is not None:
            default_action = self._check_action(default_action, "default_action")
        if self.mode == "apprentice" and default_action is None:
            raise ServiceError(422, "apprentice mode: send the application's default_action with the context.",
                               "default_action")
        if event_id is not None and (event_id in self._pending_ids or self.storage.event_exists(event_id)):
            raise ServiceError(409, f"event_id {event_id!r} is already in the log.", "event_id")
        learner = self.learner
        greedy_row = self._greedy(x)
        greedy = greedy_row.tolist()
        greedy_text = encode_action(sorted(greedy) if m > 1 else greedy)
        if self.mode == "apprentice":
            action, prob, n_draws = default_action, 1.0, 0
            dist = np.zeros(K)
            dist[np.atleast_1d(default_action)] = 1.0
        elif allowed_actions is not None:
            p = self._distribution(x, greedy_row)
            u = float(learner.rng_.random()) if learner.draws_per_round else 0.0
            action, prob, dist = restricted_draw(p, np.unique(np.asarray(allowed_actions)), u)
            n_draws = learner.draws_per_round
        else:
            acts, probs = learner.act(x)
            action = acts[0].tolist()
            prob = float(probs[0])
            n_draws = learner.draws_per_round
            dist = self._distribution(x, greedy_row)
        seq = self.next_event_seq
        self.next_event_seq += 1
        if event_id is None:  # '~' is not allowed in ids the client chooses: no collision
            event_id = f"ev~{seq}"
        row = EventRow(seq, event_id, time.time(), x.tobytes(), encode_action(action), prob,
                       dist.tobytes(), int(n_draws), self.mode,
                       None if default_action is None else encode_action(default_action), greedy_text,
                       self.model_version)
        self._pending_ids.add(event_id)
        await self._write(("event", row))
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
        reward_seq, event_seq = self.model_version, self.next_event_seq - 1
        path = self.snapshot_dir / f"snapshot-{reward_seq:012d}-{event_seq:012d}.npz"
        self.learner.save(path)
        await self._write(("snapshot", str(path), reward_seq, event_seq))
        return {"path": str(path), "model_version": reward_seq, "event_seq": event_seq}

    def set_mode(self, mode: str) -> None:
        self.storage.set_meta("mode", mode)
        self.mode = mode

    def apprentice_report(self) -> dict:
        s = self.stats
        div = lambda a, b: a / b if b else math.nan  # noqa: E731
        return {"mode": self.mode, "events": int(s["app_events"]),
                "agreement": div(s["app_agree"], s["app_events"]),
                "rewards": int(s["app_rewards"]),
                "reward_default": div(s["app_reward_sum"], s["app_rewards"]),
                "reward_agreeing": div(s["app_agree_reward_sum"], s["app_agree_rewards"]),
                # the learned greedy policy's reward where it is observed (it agrees), 0 elsewhere: a lower
                # bound of its mean reward on these contexts (the application's action is deterministic)
                "reward_learned_lower": div(s["app_agree_reward_sum"], s["app_rewards"])}
