"""The service for actions described by features: a catalogue learner (``CatalogueSquareCB``,
``CatalogueEpsilonGreedy``) behind ``/rank`` with ``context_features`` and ``actions``, ``/rank/multislot``,
``/events/{id}/activate`` and per-slot rewards.

**Requests.** A request's context (a list of namespaced dicts) and its actions' features are hashed as
the learners hash them (`FeatureHasher`, VW's JSON rules) into one round of
`CandidateRounds` (the excluded actions left out); the learner's ``act``
draws the action (one uniform a slot) and ``action_probabilities`` gives the ranking.

**Log.** The event's ``context`` column holds the hashed round (`encode_round`: the namespaces, the
action and slot ids, the hashed rows and each slot's probability), ``action`` the chosen positions in the
round's candidate list, ``n_draws`` the uniforms drawn (the learner's slots): recovery rehashes nothing,
it replays the rows the model saw. ``event_extras`` keeps whether the event is deferred and when it was
activated, and the digest of the request and the answer given (a retry with the same event id and the
same request gets the same answer; another request with that id gets 409). A reward for a deferred event
that was never activated is refused (409; on the Personalizer routes acknowledged and dropped, as
Personalizer does) and never learned.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import OrderedDict
from typing import Any

import numpy as np
import orjson

from ..catalogue import CandidateRounds
from ..hashing import FeatureHasher
from .catalogue_models import catalogue_class, catalogue_learners, load_catalogue_model, make_catalogue_learner
from .config import ServiceConfig
from .engine import UNAVAILABLE, UNWRITTEN, Engine
from .errors import ConfigError, Conflict, Invalid, NotFound, ServiceError, Unavailable, literal
from .recovery import refuse_differences
from .replication import void_event_id
from .rounds import canonical_namespaces, decode_round, encode_round, request_digest, rounds_of
from .storage import EventRow, RewardOutcome, encode_action
from .tallies import count_event

__all__ = ["CatalogueEngine", "catalogue_learners", "make_catalogue_learner", "encode_round", "decode_round",
           "canonical_namespaces", "request_digest", "open_engine", "rounds_of", "load_catalogue_model"]


class CatalogueEngine(Engine):
    """The engine of an action-feature service (module doc); the log, its order and the recovery are
    `Engine`'s."""

    catalogue = True
    #: feature hashes kept between requests (by namespace hash and name), cleared beyond this many
    MAX_HASHES = 200_000
    #: one call a reward: a reward of a recent event is learned from the very rounds it was ranked with
    LEARN_IN_ONE_CALL = False

    def _fresh(self):
        learner = load_catalogue_model(self.cfg) if self.cfg.model is not None else make_catalogue_learner(self.cfg)
        params = learner.get_params()
        return learner, {"class": type(learner).__name__, "action_features": True, "n_classes": 0,
                         "n_features": 0, "m": 1, "n_slots": int(params["n_slots"]), "bits": int(params["bits"]),
                         "interactions": None if params["interactions"] is None else list(params["interactions"]),
                         "rho0": float(params.get("rho0", 0.0)), "rho1": float(params.get("rho1", 0.0))}

    def _check_config(self, conf: dict) -> None:
        cfg = self.cfg
        if not conf.get("action_features"):
            raise ConfigError(f"the database {literal(self.db)} serves the numeric API ({literal(conf['class'])}); "
                              "leave out {}, or use a new database.", "action_features")
        given = []
        if cfg.model is not None:
            other = load_catalogue_model(cfg)
            inter = other.get_params()["interactions"]
            given += [("model's learner", conf["class"], type(other).__name__),
                      ("model's bits", conf["bits"], int(other.bits)),
                      ("model's interactions", conf["interactions"], None if inter is None else list(inter))]
        if cfg.learner is not None:
            try:
                given.append(("learner", conf["class"], catalogue_class(cfg.learner).__name__))
            except ValueError:
                given.append(("learner", conf["class"], cfg.learner))
        if cfg.bits is not None:
            given.append(("bits", conf["bits"], int(cfg.bits)))
        if cfg.interactions is not None:
            given.append(("interactions", conf["interactions"], list(cfg.interactions)))
        for key in ("rho0", "rho1"):
            if getattr(cfg, key) is not None:
                given.append((key, conf[key], float(getattr(cfg, key))))
        refuse_differences(self.db, given)

    #: rounds of recent events kept for learning their rewards without decoding the log (bounded)
    RECENT_EVENTS, RECENT_BYTES = 4096, 32 << 20

    def _recover(self) -> None:
        self._pending_answers: dict[str, tuple[str, asyncio.Future]] = {}
        self._recent: OrderedDict[bytes, tuple[CandidateRounds, np.ndarray]] = OrderedDict()
        self._recent_bytes = 0
        self._hashes: dict[tuple[int, str], int] = {}
        super()._recover()
        self.n_slots = int(self.conf["n_slots"])
        self.stats.setdefault("deferred", 0)
        self.stats.setdefault("deferred_pending", 0)

    def _remember(self, blob: bytes, rounds: CandidateRounds, probs: np.ndarray) -> None:
        recent = self._recent
        recent[blob] = (rounds, probs)
        self._recent_bytes += len(blob)
        while len(recent) > self.RECENT_EVENTS or self._recent_bytes > self.RECENT_BYTES:
            old, _ = recent.popitem(last=False)
            self._recent_bytes -= len(old)

    def _arrays(self, rows: list[tuple]):
        """(rounds, positions, rewards per slot, probabilities per slot) of logged rewards. The reward of a
        recent event is learned from the very rounds it was ranked with (the same arrays as the log's)."""
        hit = self._recent.pop(rows[0][2], None) if len(rows) == 1 else None
        if hit is not None:
            self._recent_bytes -= len(rows[0][2])
            rounds, probs = hit
            records = [{"k": probs.shape[0], "probs": probs}]
        else:
            records = [decode_round(r[2]) for r in rows]
            rounds = None
        k = int(records[0]["k"])  # the learner's slots (every event of a service has as many)
        actions = np.array([[int(a) for a in r[3].split(",")] for r in rows], dtype=np.int64).reshape(len(rows), k)
        feedback = np.zeros((len(rows), k))  # as logged: clicks 0/1 or graded rewards (the learners take both)
        for i, r in enumerate(rows):
            if len(r) > 5 and r[5] is not None:
                feedback[i] = [float(v) for v in r[5].split(",")]
            else:
                feedback[i, 0] = float(r[1])
        props = np.stack([rec["probs"] for rec in records])
        rounds = rounds if rounds is not None else rounds_of(records)
        if k == 1:
            return rounds, actions[:, 0], feedback[:, 0], props[:, 0]
        return rounds, actions, feedback, props

    async def set_mode(self, mode: str) -> None:
        if mode != "online":
            raise Invalid("mode", "an action-feature service runs online only (apprentice mode is for the "
                                    "numeric API).")
        await super().set_mode(mode)

    # ------------------------------------------------------------ requests
    def _round(self, context_features, actions, excluded) -> tuple[CandidateRounds, list[int], list[str]]:
        """The request's round (allowed actions only), the positions of the allowed actions in the request
        and all action ids; 422 naming the field for anything the learner cannot take."""
        if len(actions) > self.cfg.max_actions:
            raise Invalid("actions", f"{len(actions)} actions; a request may list at most {self.cfg.max_actions}.")
        ids = [a["id"] for a in actions]
        if len(set(ids)) != len(ids):
            seen = set()
            dup = next(i for i in ids if i in seen or seen.add(i))
            raise Invalid("actions", f"action id {dup!r} is given twice.")
        out = set(excluded or ())
        allowed = [i for i, a in enumerate(ids) if a not in out]
        if not allowed:
            raise Invalid("excluded_actions", "every action is excluded.")
        if len(self._hashes) > self.MAX_HASHES:  # feature strings are unbounded (ids, prices as text)
            self._hashes.clear()
        hasher = FeatureHasher(hashes=self._hashes)
        try:
            rounds = CandidateRounds.from_features([list(context_features or [])],
                                                   [[actions[i].get("features") or [] for i in allowed]],
                                                   hasher=hasher)
        except (TypeError, ValueError, OverflowError) as exc:
            field = "actions" if str(exc).startswith("actions") else "context_features"
            raise Invalid(field, f"the features cannot be hashed: {exc}") from None
        return canonical_namespaces(rounds, self.learner.interactions), allowed, ids

    async def _idempotent(self, event_id: str | None, digest: str):
        """The answer already given to this event id and request (None when the id is new); 409 for an id
        logged with another request."""
        if event_id is None:
            return None
        pending = self._pending_answers.get(event_id)
        if pending is not None:
            if pending[0] != digest:
                raise Conflict(f"event_id {event_id!r} is already in the log with another request.", "event_id")
            return await asyncio.shield(pending[1])
        if event_id in self._pending_ids:
            raise Conflict(f"event_id {event_id!r} is already in the log.", "event_id")
        logged = await self.read(self.storage.event_answer, event_id)
        if event_id in self._pending_answers or event_id in self._pending_ids:  # ranked during the read
            return await self._idempotent(event_id, digest)
        if logged is None:
            return None
        if logged[0] is None or logged[0] != digest or logged[1] is None:
            raise Conflict(f"event_id {event_id!r} is already in the log with another request.", "event_id")
        return orjson.loads(logged[1])

    async def rank_features(self, context_features, actions: list[dict], excluded=None, event_id: str | None = None,
                            defer: bool = False, slots: list[dict] | None = None) -> dict:
        """Rank ``actions`` for a context: one action (``slots`` None) or one per slot."""
        if not self.healthy:
            raise Unavailable(UNAVAILABLE)
        k = self.n_slots  # the most slots a request may name (the learner draws k, the request's are shown)
        excl_slots = None
        if slots is not None:
            if len(slots) > k:
                raise Invalid("slots", f"this service fills at most {k} slot{'s' if k > 1 else ''} a request "
                                        f"(n_slots); got {len(slots)}.")
            slot_ids = [s["id"] for s in slots]
            if len(set(slot_ids)) != len(slot_ids):
                raise Invalid("slots", "slot ids must be distinct.")
            action_ids = {a["id"] for a in actions}
            for j, s in enumerate(slots):
                b = s.get("baseline_action")
                if b is not None and b not in action_ids:
                    raise Invalid(f"slots.{j}.baseline_action", f"baseline action {b!r} is not among the actions.")
            if any(s.get("excluded_actions") for s in slots):
                excl_slots = [set(s.get("excluded_actions") or ()) for s in slots]
        digest = request_digest("multislot" if slots is not None else "rank", context_features, actions, excluded,
                                slots, defer)
        again = await self._idempotent(event_id, digest)
        if again is not None:
            return again
        if not self.healthy:  # (a failed write during the read)
            raise Unavailable(UNAVAILABLE)
        rounds, allowed, ids = self._round(context_features, actions, excluded)
        learner = self.learner
        dist = np.asarray(learner.action_probabilities(rounds), dtype=np.float64)
        if not (np.isfinite(dist).all() and (dist >= 0).all() and abs(dist.sum() - 1.0) <= 1e-6):
            raise Invalid("context_features", "the model gives no finite distribution for these features (their "
                                              "values are too extreme); nothing was drawn or logged.")
        # logged as the event's greedy choice: the most probable candidates (the policies' probabilities
        # increase with the score), without another pass over the model
        greedy = np.argsort(-dist, kind="stable")[:k].tolist()
        state = learner.rng_.bit_generator.state
        shown = 1 if slots is None else len(slots)  # slots past the request's: drawn, not shown (-1)
        if excl_slots is not None:
            allowed_ids = [ids[i] for i in allowed]
            ex = np.ones((len(allowed_ids), k), bool)
            for j, out in enumerate(excl_slots):
                ex[:, j] = [a in out for a in allowed_ids]
            chosen, probs = learner.act_excluding(rounds, ex)
        else:
            chosen, probs = learner.act(rounds)
        chosen = np.array(chosen, dtype=np.int64).reshape(k)
        probs = np.array(probs, dtype=np.float64).reshape(k)
        chosen[shown:], probs[shown:] = -1, 1.0
        greedy = greedy[:shown]
        if chosen[0] < 0:  # every action excluded from the first slot: nothing to show first
            learner.rng_.bit_generator.state = state
            raise Invalid("slots.0.excluded_actions", "every action is excluded from the first slot.")
        n_draws = int(learner.draws_per_round)
        seq = self.next_event_seq  # a replica's own count of events
        self.next_event_seq += 1
        if event_id is None:  # '~' is not allowed in ids the client chooses: no collision
            event_id = void_event_id(self.replica, seq)
        allowed_ids = [ids[i] for i in allowed]
        p_of = dict(zip(allowed_ids, dist.tolist()))
        first = allowed_ids[int(chosen[0])]
        rest = sorted((i for i in ids if i != first), key=lambda i: -p_of.get(i, 0.0))  # stable: request order
        ranking = [{"id": i, "probability": p_of.get(i, 0.0)} for i in [first, *rest]]
        answer: dict[str, Any] = {"event_id": event_id, "action": first, "probability": float(probs[0]),
                                  "ranking": ranking, "model_version": self.model_version}
        if slots is not None:
            answer["slots"] = [{"id": s["id"], "action": allowed_ids[int(c)] if c >= 0 else None,
                                "probability": float(p)} for s, c, p in zip(slots, chosen, probs)]
        answer["deferred"] = bool(defer)
        blob = encode_round(rounds, allowed_ids, None if slots is None else [s["id"] for s in slots], probs)
        baselines = None if slots is None else json.dumps([s.get("baseline_action") for s in slots])
        row = EventRow(seq, event_id, time.time(), blob, encode_action(chosen.tolist() if k > 1 else int(chosen[0])),
                       float(probs[0]), dist.tobytes(), n_draws, "online", baselines,
                       encode_action(greedy if k > 1 else greedy[0]), self.model_version, replica=self.replica,
                       deferred=bool(defer), request_sha256=digest, answer=orjson.dumps(answer))
        fut = self._loop.create_future()
        self._pending_answers[event_id] = (digest, fut)
        self._pending_ids.add(event_id)
        self._pending_draws += n_draws
        try:
            if await self._write(("event", row)) == 0:  # another replica logged this event_id meanwhile
                raise Conflict(f"event_id {event_id!r} is already in the log; a retry of the same "
                                        "request gets the answer logged with it.", "event_id")
        except BaseException as exc:
            fut.set_exception(exc if isinstance(exc, ServiceError) else Unavailable(UNWRITTEN))
            fut.exception()  # retrieved: no warning when no retry waits on it
            raise
        finally:
            self._pending_answers.pop(event_id, None)
        fut.set_result(answer)
        self._remember(blob, rounds, probs)
        count_event(self.stats, "online", False)
        if defer:
            self.stats["deferred"] += 1
            self.stats["deferred_pending"] += 1
        return answer

    async def rank(self, context, event_id=None, allowed_actions=None, default_action=None) -> dict:
        raise Invalid("context", "this service ranks actions described by features: send context_features and "
                                "actions.")

    async def _reward(self, event_id: str, reward: float, slots: str | None, timestamp: float | None,
                      ignore_inactive: bool = False) -> dict:
        res: RewardOutcome = await self._write(("creward", event_id, float(reward), timestamp, slots))
        if res.status == "unknown":
            raise NotFound(f"no event {event_id!r} in the log.", "event_id")
        if res.status == "inactive" and ignore_inactive:  # Personalizer: "otherwise Rewards will be ignored"
            self.stats["ignored_rewards"] = self.stats.get("ignored_rewards", 0) + 1
            return {"event_id": event_id, "status": "ignored", "model_version": self.model_version}
        if res.status == "inactive":
            raise Conflict(f"event {event_id!r} was ranked with deferred activation and is not activated: "
                                    "activate it (POST /events/{id}/activate) when its result is shown; the "
                                    "reward of an event never activated is not learned.", "event_id")
        if res.status == "conflict":
            raise Conflict(f"event {event_id!r} already has another reward ({res.slots or res.logged_reward}"
                                    "); a different reward is rejected.", "reward")
        return {"event_id": event_id, "status": res.status, "model_version": self.model_version}

    def _value(self, value: float, field: str) -> float:
        """A reward the learner can take: any number in [-1, 1] (a graded reward, fitted as it is), but only
        0 or 1 where the service corrects flipped clicks (``rho0``/``rho1``: the correction holds for clicks)."""
        if not -1.0 <= value <= 1.0:
            raise Invalid(field, f"a reward must be in [-1, 1]; got {value!r}.")
        if value not in (0.0, 1.0) and (self.conf.get("rho0") or self.conf.get("rho1")):
            raise Invalid(field, f"this service corrects flipped clicks (rho0={self.conf.get('rho0')}, "
                                    f"rho1={self.conf.get('rho1')}), which holds for 0/1 rewards only; got {value!r}. "
                                    "Graded rewards need a service without flip rates.")
        return float(value)

    async def reward(self, event_id: str, reward: float, timestamp: float | None = None,
                     ignore_inactive: bool = False, field: str = "reward") -> dict:
        """The reward of a one-slot event (ranked by ``/rank``, or by a multi-slot rank on a one-slot
        service); ``ignore_inactive``: a reward of a deferred event not activated is acknowledged and dropped
        (Personalizer's rule) instead of refused."""
        value = self._value(reward, field)
        if self.n_slots > 1:  # an event ranked for slots takes its rewards per slot
            logged = await self.read(self.storage.event_context, event_id)
            if logged is not None and decode_round(logged[0])["slots"] is not None:
                raise Invalid(field, f"event {event_id!r} was ranked for slots: send its rewards per slot "
                                        "(POST /reward/multislot).")
        return await self._reward(event_id, value, None, timestamp, ignore_inactive)

    @staticmethod
    def _text(v: float) -> str:
        """A slot's reward in the log's ``slots`` column: 0/1 as digits, a graded one as its repr."""
        return str(int(v)) if v in (0.0, 1.0) else repr(v)

    async def reward_slots(self, event_id: str, rewards: list[tuple[str, float]], timestamp: float | None = None,
                           field: str = "rewards", ignore_inactive: bool = False) -> dict:
        """The rewards of a multi-slot event, per slot id (slots without one: 0)."""
        values = [(sid, self._value(v, f"{field}.{j}")) for j, (sid, v) in enumerate(rewards)]
        logged = await self.read(self.storage.event_context, event_id)
        if logged is None:
            raise NotFound(f"no event {event_id!r} in the log.", "event_id")
        slot_ids = decode_round(logged[0])["slots"]
        placed = [int(p) >= 0 for p in logged[1].split(",")]
        if slot_ids is None:
            raise Invalid(field, f"event {event_id!r} has one action, not slots: send its reward to /reward.")
        per = [0.0] * len(slot_ids)
        seen = set()
        for j, (sid, v) in enumerate(values):
            if sid not in slot_ids:
                raise Invalid(f"{field}.{j}", f"event {event_id!r} has no slot {sid!r}.")
            if sid in seen:
                raise Invalid(f"{field}.{j}", f"slot {sid!r} is given twice.")
            seen.add(sid)
            if v and not placed[slot_ids.index(sid)]:
                raise Invalid(f"{field}.{j}",
                              f"slot {sid!r} was left empty (fewer actions than slots): its reward is 0.")
            per[slot_ids.index(sid)] = v
        # the logged slots are the learner's k (those past the request's: 0, never learned)
        per += [0.0] * (len(placed) - len(per))
        return await self._reward(event_id, float(np.mean(per[:len(slot_ids)])), ",".join(map(self._text, per)),
                                  timestamp, ignore_inactive)

    async def activate(self, event_id: str) -> dict:
        if not self.healthy:
            raise Unavailable(UNAVAILABLE)
        status = await self._write(("activate", event_id, time.time()))
        if status == "unknown":
            raise NotFound(f"no event {event_id!r} in the log.", "event_id")
        if status == "activated":
            self.stats["deferred_pending"] -= 1
        return {"event_id": event_id, "status": status}


def open_engine(cfg: ServiceConfig) -> Engine:
    """The engine a configuration asks for: an action-feature one when ``cfg.action_features`` or when the
    database already serves action features."""
    from pathlib import Path

    from .storage import is_dsn
    from .stores import open_storage

    kind = cfg.action_features
    storage = None
    if is_dsn(cfg.db) or Path(cfg.db).expanduser().exists():
        storage = open_storage(cfg.db, cfg.synchronous, create=False, busy_timeout=cfg.busy_timeout) \
            if not is_dsn(cfg.db) else open_storage(cfg.db, cfg.synchronous, retry_budget=cfg.db_retry)
        stored = storage.get_meta("config")
        if stored is not None:
            kind = bool(json.loads(stored).get("action_features"))
            if cfg.action_features and not kind:
                storage.close()
                raise ConfigError(f"the database {literal(cfg.db)} serves the numeric API; leave out {{}}, or "
                                  "use a new database.", "action_features")
    return (CatalogueEngine if kind else Engine)(cfg, storage)
