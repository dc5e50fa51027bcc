"""Recovery: the model rebuilt from the log, at start and after a failed write.

A snapshot records the last reward seq it has learned and the last event seq whose draws its random
stream has consumed; its row is committed after the events it covers. On start the service loads the
last snapshot, advances the random stream by the draws of the events after it and learns the rewards
after it in seq order: the model equals, bit for bit, the one that was serving when the log was last
committed (replicas: `.replication`). A restart that names another learner, size, flip rate or
parameter value than the log holds is refused, naming both values.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from typing import Any

import numpy as np

from .config import build_learner, rates_conf
from .errors import ConfigError, literal
from .learner import load_model, n_features_of, set_size, state_is_finite
from .replication import replica_snapshot
from .snapshots import snapshot_name
from .storage import is_dsn

__all__ = ["Recovery", "same_value", "refuse_differences"]

log = logging.getLogger("noisyfeedback.service")


def same_value(a: Any, b: Any) -> bool:
    """Whether a stored parameter value and a given one are the same (lists and tuples alike, arrays by
    content, True never equal to 1)."""
    if isinstance(a, (list, tuple, np.ndarray)) or isinstance(b, (list, tuple, np.ndarray)):
        try:
            return bool(np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object)))
        except (TypeError, ValueError):
            return False
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def refuse_differences(db, given: list[tuple[str, Any, Any]]) -> None:
    for option, stored, new in given:
        if not same_value(stored, new):
            raise ConfigError(f"the database {literal(db)} serves {{}} = {literal(repr(stored))}; {{}} "
                              f"{literal(repr(new))} differs. Start with the database's configuration (or leave "
                              "the option out), or use a new database.", option, option)


class Recovery:
    """The engine's start-up and rebuilds (a part of `Engine`)."""

    def _fresh(self) -> tuple[Any, dict]:
        """A new service's learner and the configuration stored with it."""
        learner = build_learner(self.cfg)
        return learner, {"class": type(learner).__name__, "n_classes": int(learner.n_classes),
                         "n_features": int(n_features_of(learner)), "m": set_size(learner),
                         "rho0": rates_conf(self.cfg.rho0), "rho1": rates_conf(self.cfg.rho1)}

    def _check_config(self, conf: dict) -> None:
        """A restart that names another learner, size or flip rate than the database holds is refused."""
        cfg, given = self.cfg, []
        if cfg.model is not None:
            other = load_model(cfg.model, cfg.n_features)
            given += [("model's learner", conf["class"], type(other).__name__),
                      ("model's n_classes", conf["n_classes"], int(other.n_classes)),
                      ("model's n_features", conf["n_features"], n_features_of(other))]
        if cfg.learner is not None:
            from ..registry import resolve_learner

            try:
                name = resolve_learner(cfg.learner).__name__  # the catalogue's name of an alias
            except ValueError:
                name = cfg.learner
            given.append(("learner", conf["class"], name))
        for key in ("n_classes", "n_features", "rho0", "rho1"):
            value = getattr(cfg, key)
            if value is not None:
                given.append((key, conf[key], rates_conf(value) if key.startswith("rho") else type(conf[key])(value)))
        refuse_differences(self.db, given)

    def _check_restart_params(self) -> None:
        """A restart whose ``params`` differ from those of the model the log serves is refused."""
        stored = self.learner.get_params()
        given = []
        for name, value in self.cfg.params.items():
            if name not in stored:
                raise ConfigError(f"the database {literal(self.db)} serves {literal(self.conf['class'])}, which "
                                  f"has no parameter {literal(repr(name))} ({{}}).", "params")
            given.append((f"params[{name!r}]", stored[name], value))
        refuse_differences(self.db, given)

    def _load_snapshot(self):
        """The latest usable snapshot: (learner, reward_seq, event_seq)."""
        if self.replica is not None:
            return replica_snapshot(self.storage, self.snapshots, self.replica)
        return self.snapshots.latest(self.storage.snapshots())

    def _recover(self) -> None:
        """Build the model from the log: the latest usable snapshot, the random draws of the events after
        it, then every reward after it in seq order. Rewards the model refuses (its state would not stay
        finite) are removed from the log."""
        st = self.storage
        if self.replica is not None and hasattr(st, "claim_replica"):  # one process a name (again after an outage)
            st.claim_replica(self.replica)
        stored = st.get_meta("config")
        if stored is None:
            learner, conf = self._fresh()
            path, digest = self.snapshots.write(learner, snapshot_name(0, 0))
            st.set_meta("config", json.dumps(conf))
            st.set_meta("mode", self.cfg.mode)
            st.add_snapshot(path, 0, 0, digest)
        conf = json.loads(st.get_meta("config"))
        if stored is not None:
            self._check_config(conf)
        if self.replica is None and is_dsn(self.db) and st.has_replica_events():  # (replicas: PostgreSQL only)
            raise ConfigError(f"the database {literal(self.db)} is served by replicas; start this process as one "
                              "of them ({} NAME).", "replica")
        self.conf = conf
        refused, snapshot_seq = self._rebuild_model()
        if stored is not None:
            self._check_restart_params()
        self.refused_on_recovery = refused
        self.n_features = conf["n_features"]
        self.n_classes = conf["n_classes"]
        self.m = conf["m"]
        self.rho0, self.rho1 = conf["rho0"], conf["rho1"]
        self.mode = st.get_meta("mode") or "online"
        self.next_event_seq = st.max_event_seq(self.replica) + 1
        self._seen_event_seq = self.next_event_seq - 1  # the last event seq known committed here
        # rewards after those learned are counted as they are learned (a replica's tail): never twice
        self.stats = st.stats(upto=self._learned_upto if self.replica is not None else None, replica=self.replica)
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

    # ------------------------------------------------------------ after a failed write
    def _chain(self, op: tuple, fut: asyncio.Future, error: Exception) -> None:
        inner = self._submit(op)

        def done(f: asyncio.Future) -> None:
            if fut.done():
                return
            if f.exception() is not None:
                fut.set_exception(f.exception())
            else:
                fut.set_exception(error)
        inner.add_done_callback(done)

    def _learn_failed(self, batch: list, results: list, exc: Exception, reward_ops: tuple) -> None:
        """The learner raised (not a refusal) on rewards the log already holds: every request of the batch
        is answered (an accepted reward with 503: it is logged and will be learned), and the model is rebuilt
        from the log, as after a failed write, so that it stays equal to a replay of the log."""
        from .errors import Unavailable

        log.error("learning committed rewards failed (%r); rebuilding the model from the log", exc)
        for (op, fut), res in zip(batch, results):
            if fut is None or fut.done():
                continue
            if op[0] in reward_ops and res.status == "accepted":
                fut.set_exception(Unavailable("the reward is logged, but the model failed to learn it and is being "
                                              "rebuilt from the log; retry later (see GET /health)."))
            else:
                fut.set_result(res)
        self._start_repair()

    def _start_repair(self) -> None:
        self.healthy = False
        if self._repair_task is None or self._repair_task.done():
            self._repair_task = asyncio.ensure_future(self._repair())

    def _activity(self) -> tuple:
        """What a request or a commit changes on the event loop (operations handed to the writer, those not
        yet answered, draws not yet logged, the rewards learned)."""
        return (self.writer.submitted, self.writer.inflight, self._pending_draws, self._learned_upto)

    async def _recover_off_loop(self) -> bool:
        """`_recover` on a worker thread, so that its reads of the log (tried again through an outage for up
        to the store's retry budget) never hold the event loop: it runs on a shallow copy of the engine,
        whose new state (learner, counters, statistics) is taken back on the loop only if nothing was
        handed to the writer, answered or drawn meanwhile. Returns whether it was taken."""
        before = dict(vars(self))
        marks = self._activity()
        rebuilt = copy.copy(self)
        rebuilt._pending_draws = 0  # (no write in flight: nothing drawn is pending)
        await asyncio.to_thread(rebuilt._recover)
        if self._activity() != marks:
            return False
        for name, value in vars(rebuilt).items():
            if before.get(name, rebuilt) is not value:
                setattr(self, name, value)
        return True

    async def _repair(self) -> None:
        """After a failed write: wait until the writer is idle and the log can be written again (e.g. an
        external lock was released, or the database is back), rebuild the model from the log (draws made
        for events that were not logged are undone) and serve again."""
        delay = 0.05
        while True:
            await asyncio.sleep(delay)
            delay = min(2 * delay, 1.0)
            if self.writer.inflight:
                continue
            if not await asyncio.to_thread(self.storage.writable):
                continue
            if self.writer.inflight:
                continue
            try:
                if not await self._recover_off_loop():
                    continue  # written or drawn meanwhile (a request that was under way): again
            except Exception as exc:  # the log cannot be read yet either: try again
                log.error("rebuilding the model from the log failed (%s); retrying", exc)
                continue
            self.healthy = True
            log.warning("the log can be written again; the model was rebuilt from it")
            return
