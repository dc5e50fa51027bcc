"""A Python client of an action-feature decision service (``noisyfeedback serve --action-features``).

>>> from noisyfeedback.client import Client
>>> c = Client("http://127.0.0.1:8000", key)                                  # doctest: +SKIP
>>> r = c.rank([{"user": {"country": "fr"}}], {"a1": [{"t": "news"}], "a2": [{"t": "sport"}]})  # doctest: +SKIP
>>> c.reward(r["event_id"], 1)                                                # doctest: +SKIP

**Retries.** Every rank carries an event id (the caller's, or a fresh UUID the client makes), so a rank
whose answer was lost (a dropped connection, a timeout, a 502/503/504) is sent again with the same id
and body, and the service answers what it answered the first time (nothing is drawn or logged twice).
Rewards and activations are idempotent on the service's side (a repeated one is acknowledged as
``"duplicate"``). Other refusals (4xx) raise `ServiceRefused` at once.

Needs ``httpx`` (the ``client`` or ``service`` extra).
"""

from __future__ import annotations

import math
import time
import uuid
from typing import Any, Mapping, Sequence
from urllib.parse import quote

__all__ = ["Client", "ServiceRefused"]

RETRY_STATUS = (502, 503, 504)


class ServiceRefused(Exception):
    """The service refused a request: HTTP ``status`` and its ``detail``."""

    def __init__(self, status: int, detail: Any):
        super().__init__(f"{status}: {detail}")
        self.status, self.detail = status, detail


def _path_id(event_id: str) -> str:
    """An event id as one segment of a URL path: percent-encoded ('/', '?', '#' included); '.' and '..',
    which a URL resolves as path steps, are refused."""
    text = str(event_id)
    if text in ("", ".", ".."):
        raise ValueError(f"event_id {text!r} cannot be sent in a URL path.")
    return quote(text, safe="")


def _actions(actions) -> list[dict]:
    """``[{"id": ..., "features": [...]}, ...]`` from that list or from a mapping id -> features."""
    if isinstance(actions, Mapping):
        return [{"id": str(k), "features": v if isinstance(v, list) else [v]} for k, v in actions.items()]
    return [dict(a) for a in actions]


class Client:
    """``Client(base_url, key)``: rank, rank_multislot, reward, reward_slots, activate (see the module doc).

    ``retries`` extra attempts after the first (waiting ``backoff``·2^attempt seconds between them);
    ``session`` an ``httpx.Client``-like object to send through (its base URL is used as is)."""

    def __init__(self, base_url: str, key: str, *, timeout: float = 10.0, retries: int = 3, backoff: float = 0.05,
                 session=None):
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"The 'retries' parameter of Client must be an integer >= 0. Got {retries!r} instead.")
        if isinstance(backoff, bool) or not isinstance(backoff, (int, float)) or not math.isfinite(backoff) \
                or backoff < 0:
            raise ValueError(f"The 'backoff' parameter of Client must be a finite number >= 0. Got {backoff!r} "
                             "instead.")
        if session is None:
            try:
                import httpx
            except ImportError:  # pragma: no cover
                raise ImportError("noisyfeedback.client needs httpx: pip install 'noisyfeedback[client]'.") from None
            session = httpx.Client(base_url=base_url, timeout=timeout)
            self._owned = True
        else:
            self._owned = False
        self.base_url, self.retries, self.backoff = base_url, int(retries), float(backoff)
        self._session = session
        self._headers = {"Authorization": f"Bearer {key}"}

    def _post(self, path: str, body: dict | None = None) -> dict:
        import httpx

        attempt = 0
        while True:
            try:
                r = self._session.post(path, json=body, headers=self._headers)
            except httpx.TransportError:
                if attempt >= self.retries:
                    raise
            else:
                if r.status_code < 300:
                    return r.json() if r.content else {}
                if r.status_code not in RETRY_STATUS or attempt >= self.retries:
                    try:
                        detail = r.json().get("detail")
                    except ValueError:
                        detail = r.text
                    raise ServiceRefused(r.status_code, detail)
            time.sleep(self.backoff * 2 ** attempt)
            attempt += 1

    def rank(self, context_features: Sequence[Mapping] | Mapping | None, actions, *, excluded_actions=None,
             event_id: str | None = None, defer_activation: bool = False) -> dict:
        """Rank actions (``[{"id", "features"}]`` or ``{id: features}``) for a context (a list of
        namespaced dicts): the answer's ``action``, ``probability``, ``ranking`` and ``event_id``."""
        return self._post("/rank", self._rank_body(context_features, actions, excluded_actions, event_id,
                                                   defer_activation))

    def rank_multislot(self, context_features, actions, slots: Sequence[Mapping | str], *, excluded_actions=None,
                       event_id: str | None = None, defer_activation: bool = False) -> dict:
        """One action per slot (``[{"id", "features", "baseline_action"}]`` or slot ids): ``slots`` of the
        answer hold each slot's ``action`` and ``probability``."""
        body = self._rank_body(context_features, actions, excluded_actions, event_id, defer_activation)
        body["slots"] = [{"id": s} if isinstance(s, str) else dict(s) for s in slots]
        return self._post("/rank/multislot", body)

    @staticmethod
    def _rank_body(context_features, actions, excluded_actions, event_id, defer_activation) -> dict:
        if isinstance(context_features, Mapping):
            context_features = [context_features]
        body: dict[str, Any] = {"context_features": list(context_features or []), "actions": _actions(actions),
                                "event_id": event_id if event_id is not None else str(uuid.uuid4()),
                                "defer_activation": bool(defer_activation)}
        if excluded_actions:
            body["excluded_actions"] = list(excluded_actions)
        return body

    def reward(self, event_id: str, reward: float) -> dict:
        """The reward (0 or 1) of a one-action event."""
        return self._post("/reward", {"event_id": event_id, "reward": reward})

    def reward_slots(self, event_id: str, rewards: Mapping[str, float]) -> dict:
        """The rewards of a multi-slot event, ``{slot id: 0 or 1}`` (slots left out: 0)."""
        return self._post("/reward/multislot", {"event_id": event_id, "rewards": [
            {"slot_id": str(k), "reward": v} for k, v in rewards.items()]})

    def activate(self, event_id: str) -> dict:
        """Activate an event ranked with ``defer_activation=True`` (its result was shown)."""
        return self._post(f"/events/{_path_id(event_id)}/activate")

    def close(self) -> None:
        if self._owned:
            self._session.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
