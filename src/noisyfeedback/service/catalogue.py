"""The service for actions described by features: a catalogue learner (``CatalogueSquareCB``,
``CatalogueEpsilonGreedy``) behind ``/rank`` with ``context_features`` and ``actions``, ``/rank/multislot``,
``/events/{id}/activate`` and per-slot rewards.

**Requests.** A request's context (a list of namespaced dicts) and its actions' features are hashed as
the learners hash them (:class:`~noisyfeedback.hashing.FeatureHasher`, VW's JSON rules) into one round of
:class:`~noisyfeedback.catalogue.CandidateRounds` (the excluded actions left out); the learner's ``act``
draws the action (one uniform a slot) and ``action_probabilities`` gives the ranking.

**Log.** The event's ``context`` column holds the hashed round (:func:`encode_round`: the namespaces, the
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
import hashlib
import json
import struct
import time
from collections import OrderedDict
from typing import Any

import numpy as np
import orjson

from .. import build, registry
from ..catalogue import CandidateRounds
from ..hashing import FeatureHasher, HashedRows
from .engine import Engine, ServiceConfig, ServiceError
from .storage import EventRow, RewardOutcome, encode_action

__all__ = ["CatalogueEngine", "catalogue_learners", "make_catalogue_learner", "load_catalogue_model", "encode_round",
           "decode_round", "canonical_namespaces", "request_digest", "open_engine"]

_HEAD = struct.Struct("<I")


def catalogue_learners() -> list[str]:
    """The learners an action-feature service can deploy (the catalogue family)."""
    return registry.learners_where(family="catalogue")


def _catalogue_class(name: str):
    """The catalogue learner for ``name``: a catalogue learner itself, or the catalogue twin of an index
    learner ("SquareCB" -> CatalogueSquareCB)."""
    try:
        return build.catalogue_learner_class(name)
    except build.UnknownName:
        raise ValueError(f"--learner {name!r} has no action-feature form; --action-features serves: "
                         f"{', '.join(catalogue_learners())} (also by their index names, e.g. SquareCB).") from None


def _start_state(learner) -> None:
    """Create a fresh learner's state (weights, random stream; parameters validated) through its public
    API: the distribution of a round without features (nothing is drawn)."""
    learner.action_probabilities(CandidateRounds.from_features([{}], [[{}]]))


def make_catalogue_learner(cfg: ServiceConfig):
    """A fresh catalogue learner from the configuration: hashed features (``bits``, ``interactions``)."""
    if cfg.learner is None:
        raise ValueError("give --learner (e.g. SquareCB) with --action-features.")
    klass = _catalogue_class(cfg.learner)
    params = dict(cfg.params)
    if params.get("features", "hashed") != "hashed":
        raise ValueError("--action-features hashes the features of each request: leave out features=...")
    params["features"] = "hashed"
    if cfg.bits is not None:
        params["bits"] = int(cfg.bits)
    if cfg.interactions is not None:
        params["interactions"] = tuple(cfg.interactions)
    for k, v in (("rho0", cfg.rho0), ("rho1", cfg.rho1)):
        if v and k not in params:
            params[k] = v
    try:
        learner = build.build_learner(klass, **params)
        _start_state(learner)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{klass.__name__}: {exc}") from None
    return learner


def load_catalogue_model(cfg: ServiceConfig):
    """The catalogue learner of ``--model``: a model written by ``noisyfeedback train`` (or a hashed catalogue
    learner's ``save``), served as it was trained and learning on from there. Requests are hashed as the
    trainer hashed its examples (VW's rules for JSON and text, :mod:`noisyfeedback.hashing`), so a request's
    ``{"User": {"age": 3}}`` reaches the weights of a VW line's ``|User age:3``. ``--learner``, ``--bits``,
    ``--interaction``, ``--rho0``/``--rho1`` may be left out; given, they must agree with the model."""
    from pathlib import Path

    from ..base import load

    path = Path(cfg.model)
    if path.is_dir():
        raise ValueError(f"--model {str(path)!r} is a folder; give a model file (.npz) written by 'noisyfeedback "
                         "train'.")
    if not path.is_file():
        raise ValueError(f"--model {str(path)!r}: no such file.")
    try:
        learner = load(path)
    except (ValueError, TypeError, KeyError, OSError) as exc:
        msg = str(exc)
        raise ValueError(msg if str(path) in msg else f"--model {str(path)!r}: {msg}") from None
    name = type(learner).__name__
    if name not in catalogue_learners():
        raise ValueError(f"--model {str(path)!r} holds a {name}; --action-features serves the catalogue learners "
                         f"({', '.join(catalogue_learners())}), as 'noisyfeedback train' writes them.")
    if learner.features != "hashed":
        raise ValueError(f"--model {str(path)!r} holds a {name} of dense features; --action-features hashes each "
                         "request's features: train with features='hashed' (as 'noisyfeedback train' does).")
    params = learner.get_params()
    given = [("--learner", None if cfg.learner is None else _catalogue_class(cfg.learner).__name__, name),
             ("--bits", cfg.bits, params["bits"]),
             ("--interaction", None if cfg.interactions is None else tuple(cfg.interactions),
              None if params["interactions"] is None else tuple(params["interactions"]))]
    given += [(f"--{k}", None if getattr(cfg, k) is None else float(getattr(cfg, k)), float(params[k]))
              for k in ("rho0", "rho1")]
    for opt, new, stored in given:
        if new is not None and new != stored:
            raise ValueError(f"--model {str(path)!r} was trained with {opt.lstrip('-')} = {stored!r}; {opt} {new!r} "
                             "differs (leave the option out to serve the model as trained).")
    fixed = {"features", "bits", "interactions", "rho0", "rho1"} & set(cfg.params)
    if fixed:
        raise ValueError(f"--param {min(fixed)}=... cannot change a trained model's features or flip rates.")
    valid = learner.get_params()
    try:
        for k, v in cfg.params.items():  # e.g. exploration: set on the trained model (set_params would reset it)
            if k not in valid:
                raise ValueError(f"Invalid parameter {k!r} for {name}. Valid parameters: {sorted(valid)}.")
            setattr(learner, k, v)
        _start_state(learner)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name}: {exc}") from None
    return learner


# ------------------------------------------------------------------ the logged round
def encode_round(rounds: CandidateRounds, ids: list[str], slots: list[str] | None, probs: np.ndarray) -> bytes:
    """One hashed round as bytes: a JSON head (namespaces, action ids, slot ids, sizes), then the context
    and item rows (indptr, hashes, values, namespace ids) and each slot's probability, little-endian."""
    c, a = rounds.context, rounds.items
    head = orjson.dumps({"ns": list(c.namespaces), "ids": ids, "slots": slots, "nc": int(c.hashes.shape[0]),
                         "na": int(a.hashes.shape[0]), "nr": int(a.n_rows), "k": int(probs.shape[0])})
    parts = [_HEAD.pack(len(head)), head]
    for arr, dt in ((c.indptr, "<i8"), (c.hashes, "<i8"), (c.values, "<f8"), (c.ns, "<i8"), (a.indptr, "<i8"),
                    (a.hashes, "<i8"), (a.values, "<f8"), (a.ns, "<i8"), (probs, "<f8")):
        parts.append(np.ascontiguousarray(arr, dtype=dt).tobytes())
    return b"".join(parts)


def decode_round(blob: bytes) -> dict[str, Any]:
    """Inverse of :func:`encode_round`: the head's fields plus ``context``, ``items`` (HashedRows) and
    ``probs``."""
    (n,) = _HEAD.unpack_from(blob, 0)
    head = orjson.loads(blob[4:4 + n])
    pos = 4 + n

    def take(count, dt):
        nonlocal pos
        arr = np.frombuffer(blob, dtype=dt, count=count, offset=pos)
        pos += 8 * count
        return arr.astype(dt[1:] if dt[0] == "<" else dt)

    names = tuple(head["ns"])
    nc, na, nr = head["nc"], head["na"], head["nr"]
    c = HashedRows(take(2, "<i8"), take(nc, "<i8"), take(nc, "<f8"), take(nc, "<i8"), names)
    a = HashedRows(take(nr + 1, "<i8"), take(na, "<i8"), take(na, "<f8"), take(na, "<i8"), names)
    return {**head, "context": c, "items": a, "probs": take(head["k"], "<f8")}


def rounds_of(records: list[dict]) -> CandidateRounds:
    """Logged rounds as one CandidateRounds (namespace ids mapped onto the union of their names)."""
    names: dict[str, int] = {}
    maps = []
    for r in records:
        maps.append(np.array([names.setdefault(n, len(names)) for n in r["context"].namespaces] or [0], np.int64))
    all_names = tuple(names)

    def cat(side: str) -> HashedRows:
        indptr, hashes, values, ns = [np.zeros(1, np.int64)], [], [], []
        base = 0
        for r, m in zip(records, maps):
            h = r[side]
            indptr.append(h.indptr[1:] + base)
            base += int(h.indptr[-1])
            hashes.append(h.hashes)
            values.append(h.values)
            ns.append(m[h.ns] if h.ns.size else h.ns)
        return HashedRows(np.concatenate(indptr), np.concatenate(hashes), np.concatenate(values),
                          np.concatenate(ns), all_names)

    off = np.zeros(len(records) + 1, np.int64)
    np.cumsum([r["nr"] for r in records], out=off[1:])
    return CandidateRounds(cat("context"), cat("items"), off)


def canonical_namespaces(rounds: CandidateRounds, interactions) -> CandidateRounds:
    """The rounds with each namespace replaced by its class under ``interactions`` (VW's -q pairs of first
    letters): its first letter when a pair names that letter, else one class for all the others ("" ; every
    namespace in one class when ``interactions`` is None). Which feature pairs interact is unchanged (the
    learners read namespaces only through that table, and the table is all ones exactly when it was), so
    the model computes the same bits; the table stays small whatever names a request invents, and logged
    rounds share their namespace classes."""
    names = rounds.context.namespaces
    letters = set() if interactions is None else {ch for pair in interactions for ch in pair} - {":"}
    cls = [n[:1] if n[:1] in letters else "" for n in names]
    uniq = list(dict.fromkeys(cls)) or [""]
    idmap = np.array([uniq.index(c) for c in cls] or [0], np.int64)

    def remap(h: HashedRows) -> HashedRows:
        return HashedRows(h.indptr, h.hashes, h.values, idmap[h.ns] if h.ns.size else h.ns, tuple(uniq))

    return CandidateRounds(remap(rounds.context), remap(rounds.items), rounds.offsets)


def request_digest(kind: str, context_features, actions, excluded, slots, defer: bool) -> str:
    """The SHA-256 of a rank request's content (the same for its native and Personalizer forms)."""
    body = orjson.dumps([kind, context_features, actions, sorted(set(excluded or ())), slots, bool(defer)],
                        option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(body).hexdigest()


class CatalogueEngine(Engine):
    """The engine of an action-feature service (module doc); the log, its order and the recovery are
    :class:`~.engine.Engine`'s."""

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
            raise ValueError(f"the database {self.db} serves the numeric API ({conf['class']}); leave out "
                             "--action-features, or use a new --db.")
        given = []
        if cfg.model is not None:
            other = load_catalogue_model(cfg)
            inter = other.get_params()["interactions"]
            given += [("--model's learner", conf["class"], type(other).__name__),
                      ("--model's bits", conf["bits"], int(other.bits)),
                      ("--model's interactions", conf["interactions"], None if inter is None else list(inter))]
        if cfg.learner is not None:
            try:
                given.append(("--learner", conf["class"], _catalogue_class(cfg.learner).__name__))
            except ValueError:
                given.append(("--learner", conf["class"], cfg.learner))
        if cfg.bits is not None:
            given.append(("--bits", conf["bits"], int(cfg.bits)))
        if cfg.interactions is not None:
            given.append(("--interaction", conf["interactions"], list(cfg.interactions)))
        for opt, key in (("--rho0", "rho0"), ("--rho1", "rho1")):
            if getattr(cfg, key) is not None:
                given.append((opt, conf[key], float(getattr(cfg, key))))
        for opt, stored, new in given:
            if stored != new:
                raise ValueError(f"the database {self.db} serves {opt.lstrip('-')} = {stored!r}; {opt} {new!r} "
                                 "differs. Start with the database's configuration (or leave the option out), or "
                                 "use a new --db.")

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

    def set_mode(self, mode: str) -> None:
        if mode != "online":
            raise ServiceError(422, "an action-feature service runs online only (apprentice mode is for the "
                                    "numeric API).", "mode")
        super().set_mode(mode)

    # ------------------------------------------------------------ requests
    def _round(self, context_features, actions, excluded) -> tuple[CandidateRounds, list[int], list[str]]:
        """The request's round (allowed actions only), the positions of the allowed actions in the request
        and all action ids; 422 naming the field for anything the learner cannot take."""
        if len(actions) > self.cfg.max_actions:
            raise ServiceError(422, f"{len(actions)} actions; a request may list at most {self.cfg.max_actions}.",
                               "actions")
        ids = [a["id"] for a in actions]
        if len(set(ids)) != len(ids):
            seen = set()
            dup = next(i for i in ids if i in seen or seen.add(i))
            raise ServiceError(422, f"action id {dup!r} is given twice.", "actions")
        out = set(excluded or ())
        allowed = [i for i, a in enumerate(ids) if a not in out]
        if not allowed:
            raise ServiceError(422, "every action is excluded.", "excluded_actions")
        if len(self._hashes) > self.MAX_HASHES:  # feature strings are unbounded (ids, prices as text)
            self._hashes.clear()
        hasher = FeatureHasher(hashes=self._hashes)
        try:
            rounds = CandidateRounds.from_features([list(context_features or [])],
                                                   [[actions[i].get("features") or [] for i in allowed]],
                                                   hasher=hasher)
        except (TypeError, ValueError, OverflowError) as exc:
            field = "actions" if str(exc).startswith("actions") else "context_features"
            raise ServiceError(422, f"the features cannot be hashed: {exc}", field) from None
        return canonical_namespaces(rounds, self.learner.interactions), allowed, ids

    async def _idempotent(self, event_id: str | None, digest: str):
        """The answer already given to this event id and request (None when the id is new); 409 for an id
        logged with another request."""
        if event_id is None:
            return None
        pending = self._pending_answers.get(event_id)
        if pending is not None:
            if pending[0] != digest:
                raise ServiceError(409, f"event_id {event_id!r} is already in the log with another request.",
                                   "event_id")
            return await asyncio.shield(pending[1])
        if event_id in self._pending_ids:
            raise ServiceError(409, f"event_id {event_id!r} is already in the log.", "event_id")
        logged = self.storage.event_answer(event_id)
        if logged is None:
            return None
        if logged[0] is None or logged[0] != digest or logged[1] is None:
            raise ServiceError(409, f"event_id {event_id!r} is already in the log with another request.",
                               "event_id")
        return orjson.loads(logged[1])

    async def rank_features(self, context_features, actions: list[dict], excluded=None, event_id: str | None = None,
                            defer: bool = False, slots: list[dict] | None = None) -> dict:
        """Rank ``actions`` for a context: one action (``slots`` None) or one per slot."""
        if not self.healthy:
            raise ServiceError(503, "the log cannot be written now; retry later (see GET /health).")
        k = self.n_slots  # the most slots a request may name (the learner draws k, the request's are shown)
        excl_slots = None
        if slots is not None:
            if len(slots) > k:
                raise ServiceError(422, f"this service fills at most {k} slot{'s' if k > 1 else ''} a request "
                                        f"(n_slots); got {len(slots)}.", "slots")
            slot_ids = [s["id"] for s in slots]
            if len(set(slot_ids)) != len(slot_ids):
                raise ServiceError(422, "slot ids must be distinct.", "slots")
            action_ids = {a["id"] for a in actions}
            for j, s in enumerate(slots):
                b = s.get("baseline_action")
                if b is not None and b not in action_ids:
                    raise ServiceError(422, f"baseline action {b!r} is not among the actions.",
                                       f"slots.{j}.baseline_action")
            if any(s.get("excluded_actions") for s in slots):
                excl_slots = [set(s.get("excluded_actions") or ()) for s in slots]
        digest = request_digest("multislot" if slots is not None else "rank", context_features, actions, excluded,
                                slots, defer)
        again = await self._idempotent(event_id, digest)
        if again is not None:
            return again
        rounds, allowed, ids = self._round(context_features, actions, excluded)
        learner = self.learner
        dist = np.asarray(learner.action_probabilities(rounds), dtype=np.float64)
        if not (np.isfinite(dist).all() and (dist >= 0).all() and abs(dist.sum() - 1.0) <= 1e-6):
            raise ServiceError(422, "the model gives no finite distribution for these features (their values are "
                                    "too extreme); nothing was drawn or logged.", "context_features")
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
            raise ServiceError(422, "every action is excluded from the first slot.", "slots.0.excluded_actions")
        n_draws = int(learner.draws_per_round)
        seq = self.next_event_seq  # a replica's own count of events
        self.next_event_seq += 1
        if event_id is None:  # '~' is not allowed in ids the client chooses: no collision
            event_id = f"ev~{seq}" if self.replica is None else f"ev~{self.replica}~{seq}"
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
                raise ServiceError(409, f"event_id {event_id!r} is already in the log; a retry of the same "
                                        "request gets the answer logged with it.", "event_id")
        except BaseException as exc:
            fut.set_exception(exc if isinstance(exc, ServiceError) else ServiceError(503, str(exc)))
            fut.exception()  # retrieved: no warning when no retry waits on it
            raise
        finally:
            self._pending_answers.pop(event_id, None)
        fut.set_result(answer)
        self._remember(blob, rounds, probs)
        s = self.stats
        s["events"] += 1
        if defer:
            s["deferred"] += 1
            s["deferred_pending"] += 1
        return answer

    async def rank(self, context, event_id=None, allowed_actions=None, default_action=None) -> dict:
        raise ServiceError(422, "this service ranks actions described by features: send context_features and "
                                "actions.", "context")

    async def _reward(self, event_id: str, reward: float, slots: str | None, timestamp: float | None,
                      ignore_inactive: bool = False) -> dict:
        res: RewardOutcome = await self._write(("creward", event_id, float(reward), timestamp, slots))
        if res.status == "unknown":
            raise ServiceError(404, f"no event {event_id!r} in the log.", "event_id")
        if res.status == "inactive" and ignore_inactive:  # Personalizer: "otherwise Rewards will be ignored"
            self.stats["ignored_rewards"] = self.stats.get("ignored_rewards", 0) + 1
            return {"event_id": event_id, "status": "ignored", "model_version": self.model_version}
        if res.status == "inactive":
            raise ServiceError(409, f"event {event_id!r} was ranked with deferred activation and is not activated: "
                                    "activate it (POST /events/{id}/activate) when its result is shown; the "
                                    "reward of an event never activated is not learned.", "event_id")
        if res.status == "conflict":
            raise ServiceError(409, f"event {event_id!r} already has another reward ({res.slots or res.logged_reward}"
                                    "); a different reward is rejected.", "reward")
        return {"event_id": event_id, "status": res.status, "model_version": self.model_version}

    def _value(self, value: float, field: str) -> float:
        """A reward the learner can take: any number in [-1, 1] (a graded reward, fitted as it is), but only
        0 or 1 where the service corrects flipped clicks (``rho0``/``rho1``: the correction holds for clicks)."""
        if not -1.0 <= value <= 1.0:
            raise ServiceError(422, f"a reward must be in [-1, 1]; got {value!r}.", field)
        if value not in (0.0, 1.0) and (self.conf.get("rho0") or self.conf.get("rho1")):
            raise ServiceError(422, f"this service corrects flipped clicks (rho0={self.conf.get('rho0')}, "
                                    f"rho1={self.conf.get('rho1')}), which holds for 0/1 rewards only; got {value!r}. "
                                    "Graded rewards need a service without flip rates.", field)
        return float(value)

    async def reward(self, event_id: str, reward: float, timestamp: float | None = None,
                     ignore_inactive: bool = False, field: str = "reward") -> dict:
        """The reward of a one-slot event (ranked by ``/rank``, or by a multi-slot rank on a one-slot
        service); ``ignore_inactive``: a reward of a deferred event not activated is acknowledged and dropped
        (Personalizer's rule) instead of refused."""
        value = self._value(reward, field)
        if self.n_slots > 1:  # an event ranked for slots takes its rewards per slot
            logged = self.storage.event_context(event_id)
            if logged is not None and decode_round(logged[0])["slots"] is not None:
                raise ServiceError(422, f"event {event_id!r} was ranked for slots: send its rewards per slot "
                                        "(POST /reward/multislot).", field)
        return await self._reward(event_id, value, None, timestamp, ignore_inactive)

    @staticmethod
    def _text(v: float) -> str:
        """A slot's reward in the log's ``slots`` column: 0/1 as digits, a graded one as its repr."""
        return str(int(v)) if v in (0.0, 1.0) else repr(v)

    async def reward_slots(self, event_id: str, rewards: list[tuple[str, float]], timestamp: float | None = None,
                           field: str = "rewards", ignore_inactive: bool = False) -> dict:
        """The rewards of a multi-slot event, per slot id (slots without one: 0)."""
        values = [(sid, self._value(v, f"{field}.{j}")) for j, (sid, v) in enumerate(rewards)]
        logged = self.storage.event_context(event_id)
        if logged is None:
            raise ServiceError(404, f"no event {event_id!r} in the log.", "event_id")
        slot_ids = decode_round(logged[0])["slots"]
        placed = [int(p) >= 0 for p in logged[1].split(",")]
        if slot_ids is None:
            raise ServiceError(422, f"event {event_id!r} has one action, not slots: send its reward to /reward.",
                               field)
        per = [0.0] * len(slot_ids)
        seen = set()
        for j, (sid, v) in enumerate(values):
            if sid not in slot_ids:
                raise ServiceError(422, f"event {event_id!r} has no slot {sid!r}.", f"{field}.{j}")
            if sid in seen:
                raise ServiceError(422, f"slot {sid!r} is given twice.", f"{field}.{j}")
            seen.add(sid)
            if v and not placed[slot_ids.index(sid)]:
                raise ServiceError(422, f"slot {sid!r} was left empty (fewer actions than slots): its reward is 0.",
                                   f"{field}.{j}")
            per[slot_ids.index(sid)] = v
        # the logged slots are the learner's k (those past the request's: 0, never learned)
        per += [0.0] * (len(placed) - len(per))
        return await self._reward(event_id, float(np.mean(per[:len(slot_ids)])), ",".join(map(self._text, per)),
                                  timestamp, ignore_inactive)

    async def activate(self, event_id: str) -> dict:
        if not self.healthy:
            raise ServiceError(503, "the log cannot be written now; retry later (see GET /health).")
        status = await self._write(("activate", event_id, time.time()))
        if status == "unknown":
            raise ServiceError(404, f"no event {event_id!r} in the log.", "event_id")
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
            if not is_dsn(cfg.db) else open_storage(cfg.db, cfg.synchronous)
        stored = storage.get_meta("config")
        if stored is not None:
            kind = bool(json.loads(stored).get("action_features"))
            if cfg.action_features and not kind:
                storage.close()
                raise ValueError(f"the database {cfg.db} serves the numeric API; leave out --action-features, "
                                 "or use a new --db.")
    return (CatalogueEngine if kind else Engine)(cfg, storage)
