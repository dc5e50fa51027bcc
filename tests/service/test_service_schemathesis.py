"""Property-based tests of the decision service from its own OpenAPI schema (schemathesis, in-process ASGI
transport, derandomized): every route gets at least 500 generated requests, valid and invalid (schema-
violating bodies and queries, keys that are wrong, missing or of the wrong role), then the stateful links
(rank -> reward) are followed. Whatever is sent: no 5xx, every 4xx names its field, every distribution
is finite, /health answers 200 afterwards and the model's state is finite. An action-feature service's
routes (action features, slots, activation, the Personalizer routes) get the same checks with fewer
examples a route and smaller generated feature dicts."""

import collections
import json
import math
import string
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.python.asgi import get_client, shutdown_lifespans

from noisyfeedback.service import ServiceConfig, create_app
from noisyfeedback.service.auth import create_key

PER_ROUTE = 200
D, K = 5, 3


def finite_state(learner) -> bool:
    return all(np.isfinite(v).all() for k, v in vars(learner).items()
               if k.endswith("_") and isinstance(v, np.ndarray) and v.dtype.kind == "f")


class Checker:
    """The properties every response must have; counts requests per route."""

    def __init__(self):
        self.count = collections.Counter()
        self.status = collections.Counter()
        self.accepted_rewards = 0

    def __call__(self, case, response) -> None:
        route = f"{case.operation.method.upper()} {case.operation.path}"
        self.count[route] += 1
        code = response.status_code
        self.status[(route, code)] += 1
        assert code < 500, (route, code, response.text, case.body, case.query)
        text = response.text
        if code >= 400 and case.operation.path.startswith("/personalizer/"):  # Personalizer's error body
            err = json.loads(text)["error"]
            # a field is named, except where the whole request is refused (its size or depth)
            whole = err["message"].startswith(("request body larger", "JSON nested"))
            assert code != 422 and err["code"] and err["message"] and (err["target"] or whole), (route, code, text)
        elif code >= 400:
            body = json.loads(text)
            if code == 422:
                locs = [e["loc"] for e in body["detail"]]
                assert locs and all(loc for loc in locs), (route, text)
            else:
                assert body.get("field"), (route, code, text)
        if route == "POST /rank" and code == 200 and "distribution" in text:
            dist = json.loads(text)["distribution"]
            assert "null" not in text and all(isinstance(p, float) and math.isfinite(p) for p in dist), text
        if code in (200, 201) and '"ranking"' in text:  # an action-feature service's ranking
            ranking = json.loads(text)["ranking"]
            assert all(isinstance(r["probability"], float) and 0 <= r["probability"] <= 1 for r in ranking), text
        if route in ("POST /reward", "POST /reward/multislot") and code == 200 \
                and json.loads(text)["status"] == "accepted":
            self.accepted_rewards += 1


def test_schemathesis_every_route_and_the_rank_reward_links():
    t0 = time.perf_counter()
    shm = Path("/dev/shm")  # in memory where there is one: the fsyncs of 500 snapshots cost nothing there
    tmp = Path(tempfile.mkdtemp(prefix="nf-st-", dir=shm if shm.is_dir() else None))
    cfg = ServiceConfig(db=tmp / "s.db", learner="RCNBF", n_classes=K, n_features=D,
                        params={"gamma": 0.2, "seed": 0}, rho0=0.1, rho1=0.1, synchronous="NORMAL",
                        snapshot_every=97, max_body=8192)
    app = create_app(cfg)
    admin = f"Bearer {create_key(cfg.db, 'admin')}"
    rank = f"Bearer {create_key(cfg.db, 'rank')}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    ops = [r.ok() for r in schema.get_all_operations()]
    routes = {f"{o.method.upper()} {o.path}" for o in ops}
    assert routes == {"POST /rank", "POST /reward", "GET /health", "GET /metrics", "GET /apprentice",
                      "POST /snapshot", "POST /mode", "GET /policy/evaluate"}
    check = Checker()
    # mostly the admin key (every route is reached), else a rank key, none, or a wrong one
    auth = st.tuples(st.integers(0, 9), st.text(string.ascii_letters + string.digits + "-_", max_size=24)).map(
        lambda p: admin if p[0] < 6 else rank if p[0] < 8 else None if p[0] == 8 else "Bearer nf_" + p[1])
    common = dict(derandomize=True, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
    engine = app.state.engine
    try:
        for op in ops:
            modes = [op.as_strategy(GenerationMode.POSITIVE)]
            if op.body or op.query:  # something to break: schema-violating values too
                modes.append(op.as_strategy(GenerationMode.NEGATIVE))

            @settings(max_examples=PER_ROUTE, **common)
            @given(case=st.one_of(modes), key=auth)
            def fuzz(case, key):
                calls[0] -= time.perf_counter()
                headers = {"Authorization": key} if key is not None else {}
                if case.operation.path == "/mode" and case.body == {"mode": "apprentice"}:
                    case.body = {"mode": "online"}  # keep /rank answering ranks (apprentice is tested elsewhere)
                check(case, case.call(headers=headers))
                calls[0] += time.perf_counter()

            t1, calls = time.perf_counter(), [0.0]
            fuzz()
            print(f"{op.method.upper()} {op.path}: {time.perf_counter() - t1:.1f} s, calls {calls[0]:.1f} s")
        for route in routes:
            assert check.count[route] >= PER_ROUTE, (route, check.count)

        machine = schema.as_state_machine()

        class Links(machine):
            def before_call(self, case):
                # ids chosen by the service (a generated id may repeat: 409) and online mode, so that a
                # rank answers the same whatever ran before it (Hypothesis replays a choice sequence)
                if case.operation.path == "/rank" and isinstance(case.body, dict):
                    case.body.pop("event_id", None)
                    case.body.pop("default_action", None)
                if case.operation.path == "/mode":
                    case.body = {"mode": "online"}

            def get_call_kwargs(self, case):
                return {"headers": {"Authorization": admin}}

            def validate_response(self, response, case, additional_checks=None, **kwargs):
                check(case, response)

        before = check.accepted_rewards
        Links.run(settings=settings(max_examples=40, stateful_step_count=8, **common))
        assert check.accepted_rewards > before  # the link carried ranked event ids into /reward
        assert sum(n for (r, c), n in check.status.items() if r == "POST /rank" and c == 200) >= 100

        with get_client(app) as client:  # on the loop the app runs on
            assert client.get("http://testserver/health").status_code == 200
            r = client.post("http://testserver/rank", json={"context": [0.5] * D}, headers={"Authorization": admin})
        assert r.status_code == 200 and np.isfinite(r.json()["distribution"]).all()
        assert engine.healthy and finite_state(engine.learner)
    finally:
        shutdown_lifespans()
    elapsed = time.perf_counter() - t0
    print(f"schemathesis: {sum(check.count.values())} requests in {elapsed:.1f} s; per route {dict(check.count)}")


FEATURE_ROUTES = {"POST /rank", "POST /reward", "POST /rank/multislot", "POST /reward/multislot",
                  "POST /events/{event_id}/activate", "POST /personalizer/v1.0/rank",
                  "POST /personalizer/v1.0/events/{eventId}/reward",
                  "POST /personalizer/v1.0/events/{eventId}/activate",
                  "POST /personalizer/v1.0/multislot/rank", "POST /personalizer/v1.0/multislot/events/{eventId}/reward",
                  "POST /personalizer/v1.0/multislot/events/{eventId}/activate"}
PER_FEATURE_ROUTE = 30


def _small(node) -> None:
    """Cap the sizes of the feature dicts and lists in a schema (in place), so that generating a body takes
    milliseconds rather than a second: at most 3 entries a dict and 4 items a list."""
    if isinstance(node, dict):
        if "maxProperties" in node or node.get("type") == "object" and "additionalProperties" in node:
            node["maxProperties"] = min(node.get("maxProperties", 3), 3)
        if node.get("maxItems", 0) > 6:
            node["maxItems"] = 4
        if node.get("maxLength", 0) > 32:
            node["maxLength"] = 32
        for v in node.values():
            _small(v)
    elif isinstance(node, list):
        for v in node:
            _small(v)


def test_schemathesis_action_feature_and_personalizer_routes():
    """The routes of an action-feature service (the others are those above): fewer examples a route, the
    same properties; then the rank -> reward / activate links."""
    t0 = time.perf_counter()
    shm = Path("/dev/shm")
    tmp = Path(tempfile.mkdtemp(prefix="nf-st-", dir=shm if shm.is_dir() else None))
    cfg = ServiceConfig(db=tmp / "f.db", learner="SquareCB", action_features=True, bits=10, params={"seed": 0},
                        synchronous="NORMAL", snapshot_every=97, max_body=8192, max_actions=6)
    app = create_app(cfg)
    admin = f"Bearer {create_key(cfg.db, 'admin')}"
    _small(app.openapi())  # generation only: the service's own limits are tested in test_service_features.py
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    ops = [r.ok() for r in schema.get_all_operations()]
    ops = [o for o in ops if f"{o.method.upper()} {o.path}" in FEATURE_ROUTES]
    assert {f"{o.method.upper()} {o.path}" for o in ops} == FEATURE_ROUTES
    check = Checker()
    auth = st.integers(0, 9).map(lambda i: admin if i < 8 else None if i == 8 else "Bearer nf_wrong")
    common = dict(derandomize=True, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
    engine = app.state.engine
    try:
        for op in ops:
            modes = [op.as_strategy(GenerationMode.POSITIVE), op.as_strategy(GenerationMode.NEGATIVE)]

            @settings(max_examples=PER_FEATURE_ROUTE, **common)
            @given(case=st.one_of(modes), key=auth)
            def fuzz(case, key):
                calls[0] -= time.perf_counter()
                check(case, case.call(headers={"Authorization": key} if key is not None else {}))
                calls[0] += time.perf_counter()

            t1, calls = time.perf_counter(), [0.0]
            fuzz()
            print(f"{op.method.upper()} {op.path}: {time.perf_counter() - t1:.1f} s, calls {calls[0]:.1f} s")
        t1 = time.perf_counter()
        for route in FEATURE_ROUTES:
            assert check.count[route] >= PER_FEATURE_ROUTE, (route, check.count)
        assert sum(n for (r, c), n in check.status.items() if r == "POST /rank" and c == 200) >= 5

        machine = schema.as_state_machine()

        class Links(machine):
            def before_call(self, case):
                if case.operation.path == "/rank" and isinstance(case.body, dict):
                    case.body.pop("event_id", None)  # ids chosen by the service (see above)
                    case.body.pop("defer_activation", None)

            def get_call_kwargs(self, case):
                return {"headers": {"Authorization": admin}}

            def validate_response(self, response, case, additional_checks=None, **kwargs):
                check(case, response)

        before = check.accepted_rewards
        Links.run(settings=settings(max_examples=15, stateful_step_count=6, **common))
        assert check.accepted_rewards > before  # the link carried ranked event ids into /reward
        print(f"links: {time.perf_counter() - t1:.1f} s")
        with get_client(app) as client:
            r = client.post("http://testserver/rank", json={"actions": [{"id": "a"}, {"id": "b"}]},
                            headers={"Authorization": admin})
        assert r.status_code == 200
        assert engine.healthy and finite_state(engine.learner)
    finally:
        shutdown_lifespans()
    print(f"schemathesis (action features): {sum(check.count.values())} requests in {time.perf_counter() - t0:.1f} s")
