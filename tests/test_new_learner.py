"""A new learner is one file plus one line of the catalogue: in a copy of the package, a learner file and its
line in ``registry.LEARNERS`` are all it takes for every front door to see it — the command line's
``simulate``, a TOML sweep, the service (its tags say servable), ``nf.load`` of its saved model and the
public check suite (``noisyfeedback.checks``), which it passes. Nothing is exported from the package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import noisyfeedback

LEARNER_FILE = '''
"""GreedyBanditron: Banditron with less exploration by default (a toy learner written as one file: the
front doors see it through its line in the catalogue)."""

from ...base import Tags
from .banditron import Banditron


class GreedyBanditron(Banditron):
    """Banditron under another name, with a smaller default exploration rate (γ = 0.05)."""

    _tags = Tags(family="bandit", online=True, servable=True)
    _test_params = {"n_classes": 3, "gamma": 0.1, "seed": 0}

    def __init__(self, n_classes: int, gamma: float = 0.05, seed=None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.seed = seed
'''

LINE = '    "GreedyBanditron": "noisyfeedback.learners.bandit.greedy_banditron:GreedyBanditron",\n'

SCRIPT = '''
import json, sys
from pathlib import Path
import numpy as np
from typer.testing import CliRunner
import noisyfeedback as nf
from noisyfeedback import checks
from noisyfeedback.cli import app

tmp = Path(sys.argv[1])
assert "GreedyBanditron" not in nf.__all__
# the command line
res = CliRunner().invoke(app, ["simulate", "--learner", "greedy-banditron", "--dataset", "synsep", "--n-samples",
                               "300", "--rounds", "300", "--save-trace", str(tmp / "t.json")])
assert res.exit_code == 0, res.output
assert json.loads((tmp / "t.json").read_text())["learner"] == "GreedyBanditron(n_classes=9)", res.output
# a TOML sweep
from noisyfeedback.lab import read_results, run_experiment
(tmp / "sweep.toml").write_text(
    'n_rounds = 200\\nseeds = [0]\\n[[datasets]]\\nname = "synsep"\\nn_samples = 200\\n'
    '[[channels]]\\nname = "bandit"\\n[[learners]]\\nname = "Greedy Banditron"\\nparams = { gamma = [0.05, 0.2] }\\n')
df = read_results(run_experiment(tmp / "sweep.toml", tmp / "run", progress=False))
assert sorted(df["learner_class"]) == ["GreedyBanditron"] * 2, df
# the service (servable by its tags): the app starts with it
from fastapi.testclient import TestClient
from noisyfeedback.service.app import create_app
from noisyfeedback.service.engine import ServiceConfig
from noisyfeedback.service.learner import servable_learners
assert "GreedyBanditron" in servable_learners()
web = create_app(ServiceConfig(db=str(tmp / "db.sqlite"), learner="greedybanditron", n_classes=3, n_features=4))
with TestClient(web):
    assert type(web.state.engine.learner).__name__ == "GreedyBanditron"
# nf.load of its saved model
model = checks.make(checks.registered_learners()["GreedyBanditron"])
X, y, ch = checks.problem(model)
checks.interact(model, X, y, ch)
back = nf.load(model.save(tmp / "m.npz"))
assert type(back).__name__ == "GreedyBanditron" and np.array_equal(back.W_, model.W_)
# the check suite
assert "GreedyBanditron" in checks.registered_learners()
assert "check_compiled_loop" in checks.check_learner(checks.registered_learners()["GreedyBanditron"])
print("ALL FRONT DOORS OK")
'''


def test_a_learner_added_as_one_file_is_seen_by_every_front_door(tmp_path):
    src = Path(noisyfeedback.__file__).parent
    copy = tmp_path / "pkg" / "noisyfeedback"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "learners" / "bandit" / "greedy_banditron.py").write_text(LEARNER_FILE)
    reg = copy / "registry.py"
    text = reg.read_text()
    anchor = '    "Banditron": "noisyfeedback.learners.bandit.banditron:Banditron",\n'
    assert anchor in text
    reg.write_text(text.replace(anchor, anchor + LINE))  # the one line
    # without the JIT: what is tested is which learners each front door sees, and the copy (a new place)
    # would compile every kernel it reaches anew (from a cold cache, about 30 s)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "pkg"), "COLUMNS": "200", "NUMBA_DISABLE_JIT": "1"}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "ALL FRONT DOORS OK" in out.stdout
