"""The service's configuration takes flip rates per action (flips that depend on the action): the learner is
built with them, they are stored with the database (a different list is refused on restart), off-policy
evaluation corrects each action with its own, and the metrics claim no corrected click rate they cannot
compute (their counters are not per action)."""

import math
import warnings

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from noisyfeedback.service import ServiceConfig, create_app  # noqa: E402
from noisyfeedback.service.auth import create_key  # noqa: E402
from noisyfeedback.service.learner import parse_rates  # noqa: E402

D, K = 6, 4
R0, R1 = [0.3, 0.3, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5]


def config(tmp_path, **kw):
    base = dict(db=tmp_path / "s.db", learner="SquareCB", n_classes=K, n_features=D, params={"seed": 0},
                rho0=R0, rho1=R1, synchronous="NORMAL")
    return ServiceConfig(**{**base, **kw})


def test_per_action_rates_build_the_learner_and_are_kept(tmp_path):
    cfg = config(tmp_path)
    cfg.check()
    app = create_app(cfg)
    rank = {"Authorization": f"Bearer {create_key(cfg.db, 'rank')}"}
    with TestClient(app) as client:
        engine = app.state.engine
        np.testing.assert_array_equal(engine.learner.rho0, R0)
        np.testing.assert_array_equal(engine.learner.rho1, R1)
        assert (engine.rho0, engine.rho1) == (R0, R1)
        for _ in range(5):
            r = client.post("/rank", json={"context": [1.0] * D}, headers=rank).json()
            assert client.post("/reward", json={"event_id": r["event_id"], "reward": 1}, headers=rank).status_code \
                in (200, 202)
        text = client.get("/metrics", headers=rank).text
        rate = [ln for ln in text.splitlines() if ln.startswith("nf_click_rate ")][0]
        assert math.isnan(float(rate.split()[1]))
    # the database keeps them: the same list restarts, another is refused naming the option
    with TestClient(create_app(config(tmp_path))):
        pass
    with pytest.raises(ValueError, match="serves rho0 = "):
        create_app(config(tmp_path, rho0=[0.2, 0.3, 0.0, 0.0]))


@pytest.mark.parametrize("kw, match", [
    ({"rho0": [0.3, 0.3, 0.0]}, "one rate per action: 4 rates"),
    ({"rho0": [0.3, 0.3, 0.6, 0.0]}, "below 1 for action 2"),
    ({"rho1": [0.1, -0.1, 0.0, 0.0]}, "rho1 must be in \\[0, 1\\)"),
    ({"rho0": [0.1] * 4, "rho1": [0.1] * 5, "n_classes": None}, "as many rates"),
    ({"rho0": [0.1] * 4, "n_classes": None, "n_features": None, "action_features": True}, "numbered actions"),
])
def test_bad_per_action_rates_are_refused(tmp_path, kw, match):
    with pytest.raises(ValueError, match=match):
        config(tmp_path, **kw).check()


def test_cli_rates_parse():
    assert parse_rates("0.25") == 0.25 and parse_rates("0.3,0.3,0,0") == [0.3, 0.3, 0.0, 0.0]
    assert parse_rates(None) is None
    with pytest.raises(ValueError, match="--rho1 takes a rate"):
        parse_rates("0.1,x", "--rho1")
