"""The lab: the wing that runs studies and writes about them — declarative sweeps (TOML configs),
resumable runs on one machine or a Dask cluster, results tables, figures, reports, and the
``reproduce`` recipes of the papers (`.papers`).

The rule of the house: the core (kernels, learners, feedback, simulate, datasets, noise, ope) and
the service never import the lab; the lab builds on them (an import-linter contract in
``pyproject.toml`` says so, and the tests run it).

For the command line (thin wrappers call these):

- `run_config` (``noisyfeedback run CONFIG.toml [-j N] [--scheduler tcp://H:P] [--out DIR]``)
  → path of ``results.parquet``;
- `validate_config` (a dry run: check everything, count tasks) → a Plan (``describe_plan(plan)``);
- `plot_results` (``noisyfeedback plot results.parquet [--out DIR]``) → list of PNG paths;
- `reproduce` (``noisyfeedback reproduce NAME [--quick] [--data-dir D] [--out DIR] [-j N]``)
  → path of the report's ``index.html``; `recipe_names` lists the NAMEs.

In code: `run_experiment` takes a path, a dict or an `ExperimentConfig`;
`read_results` reads a results table; `.figures` turns it into figures and
tables; `register_paper` adds a reproduction (a `Paper`). See `.config` for the schema
and ``examples/`` for configs.

>>> from noisyfeedback.lab import parse_config, build_plan
>>> cfg = parse_config({"n_rounds": 100, "seeds": 2, "datasets": [{"name": "synsep", "n_samples": 50}],
...                     "channels": [{"name": "NoisyBandit", "params": {"rho0": [0.0, 0.2], "rho1": [0.0, 0.4]},
...                                   "zip": [["rho0", "rho1"]]}],
...                     "learners": [{"name": "Banditron", "params": {"gamma": [0.05, 0.1]}}]})
>>> build_plan(cfg).n_tasks
8
"""

from . import figures
from .config import ConfigError, ExperimentConfig, load_config, parse_config
from .figures import plot_results
from .plan import Plan, build_plan, describe_plan
from .recipes import Claim, Paper, RecipeError, recipe_names, register_paper, reproduce
from .runner import new_progress, run_config, run_experiment, sweep, validate_config
from .store import read_results
from .engine import Engine, make_task, register_task_kind, run_tasks, task_kind
from .tasks import run_task

__all__ = [
    "run_config",
    "run_experiment",
    "sweep",
    "validate_config",
    "plot_results",
    "reproduce",
    "register_paper",
    "Paper",
    "Claim",
    "recipe_names",
    "RecipeError",
    "read_results",
    "load_config",
    "parse_config",
    "build_plan",
    "describe_plan",
    "Plan",
    "ExperimentConfig",
    "ConfigError",
    "new_progress",
    "register_task_kind",
    "task_kind",
    "make_task",
    "run_tasks",
    "Engine",
    "run_task",
    "figures",
]
