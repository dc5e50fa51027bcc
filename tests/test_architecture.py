"""The shape of the package: the import-linter contract of ``pyproject.toml`` holds (the core and the
service never import the lab; cli on top, then the lab and the service, ope, the core, the kernels),
a planted violation breaks it, and there is no import cycle in ``src/`` counting imports inside
functions (an ast check, tested on a planted cycle)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from import_graph import find_cycles, import_graph, unresolved_imports

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "noisyfeedback"

pytest.importorskip("importlinter")


def lint_imports(src: Path, config: Path = ROOT / "pyproject.toml") -> subprocess.CompletedProcess:
    """``lint-imports`` on the package found in ``src`` (a fresh process: it must not see an imported copy)."""
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run([sys.executable, "-c", code, "--config", str(config), "--no-cache"],
                          env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                          capture_output=True, text=True, timeout=600, cwd=src)


def test_import_linter_contract_holds():
    proc = lint_imports(ROOT / "src")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout and "KEPT" in proc.stdout
    assert "core-never-imports-the-lab" in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def _copy_package(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(PACKAGE, src / "noisyfeedback", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return src


def test_import_linter_catches_a_core_module_importing_the_lab(tmp_path):
    """A copy of the package whose ``feedback`` imports the lab inside a function: the contract breaks."""
    src = _copy_package(tmp_path)
    path = src / "noisyfeedback" / "feedback.py"
    path.write_text(path.read_text(encoding="utf-8")
                    + "\n\ndef _planted():\n    from .lab import figures  # noqa: F401\n", encoding="utf-8")
    proc = lint_imports(src)
    assert proc.returncode != 0, proc.stdout[-4000:]
    assert "The core and the service never import the lab (nor the command line) BROKEN" in proc.stdout
    assert "noisyfeedback.feedback -> noisyfeedback.lab.figures" in proc.stdout


def test_import_linter_catches_the_service_importing_the_lab(tmp_path):
    src = _copy_package(tmp_path)
    path = src / "noisyfeedback" / "service" / "export.py"
    path.write_text("import noisyfeedback.lab.report  # noqa: F401\n" + path.read_text(encoding="utf-8"),
                    encoding="utf-8")
    proc = lint_imports(src)
    assert proc.returncode != 0 and "BROKEN" in proc.stdout, proc.stdout[-4000:]


# ------------------------------------------------------------------ cycles
def test_no_import_cycle_in_src_counting_imports_inside_functions():
    graph = import_graph(PACKAGE)
    assert len(graph) > 100 and "noisyfeedback.lab.engine" in graph
    assert find_cycles(graph) == []


def test_every_import_of_the_package_names_a_module_of_it():
    """An import left behind by a move fails only when its function runs; catch it here."""
    assert unresolved_imports(PACKAGE) == []


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root / "pkg"


#: the most lines a module of the service may have (a longer one mixes concerns: split it)
SERVICE_MODULE_LINES = 400


def long_modules(folder: Path, limit: int) -> list[str]:
    """The modules under ``folder`` longer than ``limit`` lines, with their lengths."""
    return [f"{p.relative_to(folder)}: {n} lines" for p in sorted(folder.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > limit]


def test_no_module_of_the_service_is_longer_than_the_limit(tmp_path):
    assert long_modules(PACKAGE / "service", SERVICE_MODULE_LINES) == []
    (tmp_path / "long.py").write_text("x = 1\n" * (SERVICE_MODULE_LINES + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * SERVICE_MODULE_LINES)
    assert long_modules(tmp_path, SERVICE_MODULE_LINES) == [f"long.py: {SERVICE_MODULE_LINES + 1} lines"]


def test_cycle_checker_finds_a_cycle_through_an_import_inside_a_function(tmp_path):
    pkg = _write(tmp_path, {
        "pkg/__init__.py": "from .a import f\n",
        "pkg/a.py": "from .b import g\n\ndef f():\n    return g()\n",
        "pkg/b.py": "def g():\n    from . import a  # only when g runs\n    return a\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/c.py": "from ..a import f\n",
    })
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.a"} and graph["pkg.sub.c"] == {"pkg.a"}
    assert find_cycles(graph) == [["pkg.a", "pkg.b"]]
    (pkg / "b.py").write_text("def g():\n    return 1\n", encoding="utf-8")
    assert find_cycles(import_graph(pkg)) == []


def test_cycle_checker_on_longer_cycles_and_packages(tmp_path):
    pkg = _write(tmp_path, {
        "pkg/__init__.py": "",  # a package __init__ re-exporting its submodules is no cycle
        "pkg/x/__init__.py": "from .m import h\n",
        "pkg/x/m.py": "def h():\n    import pkg.y.n\n",
        "pkg/y/__init__.py": "",
        "pkg/y/n.py": "from pkg.z import k\n",
        "pkg/z.py": "k = 1\n\ndef back():\n    from .x import m\n",
        "pkg/w.py": "import os, numpy\nfrom pkg import z\n",
    })
    graph = import_graph(pkg)
    assert graph["pkg.w"] == {"pkg.z"}  # outside modules are not part of the graph
    assert find_cycles(graph) == [["pkg.x.m", "pkg.y.n", "pkg.z"]]
    assert unresolved_imports(pkg) == []
    (pkg / "w.py").write_text("from .gone import thing\n", encoding="utf-8")
    assert unresolved_imports(pkg) == [("pkg.w", "pkg.gone")]


# ------------------------------------------------------------ dependencies
_BLOCKED = r"""
import sys
BLOCKED = {"matplotlib", "fastapi", "uvicorn", "dask", "httpx", "orjson", "psycopg"}  # pydantic: typer needs it

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None

sys.meta_path.insert(0, Block())
import numpy as np
import noisyfeedback as nf
from noisyfeedback import build, registry
X, y = nf.datasets.load("synsep", n_samples=300)
trace = nf.simulate(build.build_learner("banditron", 9, seed=0), X, y,
                    feedback=build.build_channel("bandit", rho0=0.1, rho1=0.1), n_rounds=300, seed=0)
C = nf.feedback.symmetric_confusion(3, 0.2)
Xi, yi = nf.datasets.load("iris")
nf.fit_batch(nf.UMA(confusion=C), Xi, yi, nf.feedback.ConfusionNoise(C), seed=0)
from typer.testing import CliRunner
from noisyfeedback.cli import app
res = CliRunner().invoke(app, ["simulate", "-l", "perceptron", "--dataset", "iris", "--rounds", "100"])
assert res.exit_code == 0, res.output
res = CliRunner().invoke(app, ["reproduce", "example", "--quick"])
assert res.exit_code == 2 and "pip install 'noisyfeedback[lab]'" in res.output, res.output
print("core ok", sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED))
"""


def test_the_core_and_its_command_line_run_without_the_lab_and_service_extras():
    """numpy, scipy, numba, scikit-learn, pandas/pyarrow, typer/rich only: the lab's commands say what to
    install instead of failing with a traceback."""
    proc = subprocess.run([sys.executable, "-c", _BLOCKED], capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
                               "HOME": "/tmp"})  # numba's cache beside the kernels, as the other tests have it
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "core ok []" in proc.stdout


# ------------------------------------------------------------ lazy imports
_LIGHT = r"""
import sys, tempfile, os
HEAVY = ("sklearn", "pandas", "scipy", "numba", "matplotlib", "fastapi", "pyarrow", "dask")

def heavy():
    return sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY))

import noisyfeedback as nf
print("package", heavy())
from typer.testing import CliRunner
from noisyfeedback.cli import app
print("cli", heavy())
data = sys.argv[1]
with tempfile.TemporaryDirectory() as d:
    m = os.path.join(d, "m.npz")
    for args in (["train", "--data", data, "--model", m], ["predict", "--data", data, "--model", m, "-p",
                 os.path.join(d, "p.txt")], ["evaluate", "--data", data, "--model", m]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
print("vw commands", heavy())
import noisyfeedback.simulate  # the submodule of the same name does not replace the function
import noisyfeedback.datasets.uma_toy
print("shadow", nf.simulate.__name__, type(nf.simulate).__name__, nf.datasets.uma_toy.__name__,
      type(nf.datasets.uma_toy).__name__)
"""


def test_the_package_and_the_vw_commands_import_no_heavy_library_they_do_not_use():
    """``import noisyfeedback`` costs no scikit-learn, pandas, SciPy or numba (its names are imported on
    first use); nor does the command line (the service's commands load none of the engine until they run);
    train/predict/evaluate on a VW log load numba and SciPy only."""
    proc = subprocess.run([sys.executable, "-c", _LIGHT, str(ROOT / "tests" / "data" / "vw" / "cb_test_medium.ldf")],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    out = proc.stdout.splitlines()
    assert "package []" in out
    assert "shadow simulate function uma_toy function" in out
    assert "cli []" in out
    assert "vw commands ['numba', 'scipy']" in out


def _type_checking_imports(source: str) -> dict[str, str]:
    """The names a package imports under ``if TYPE_CHECKING:``, each with its submodule as ``_LAZY`` writes it
    (``".learners"``; ``""`` for ``from . import name``)."""
    import ast

    names: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in ast.walk(node):
                if isinstance(imp, ast.ImportFrom):
                    where = "." * imp.level + (imp.module or "")
                    for alias in imp.names:
                        names[alias.asname or alias.name] = "" if where == "." else where
    return names


@pytest.mark.parametrize("package", ["noisyfeedback", "noisyfeedback.datasets", "noisyfeedback.learners",
                                     "noisyfeedback.learners.catalogue", "noisyfeedback.learners.label_noise",
                                     "noisyfeedback.learners.teachers", "noisyfeedback.noise",
                                     "noisyfeedback.ope", "noisyfeedback.service"])
def test_lazy_names_are_the_type_checking_imports_and_all_resolve(package):
    """A lazy package lists each public name twice (the ``TYPE_CHECKING`` imports the tools read, the ``_LAZY``
    map the package uses): the two must agree, and every name of ``__all__`` must resolve."""
    import importlib

    module = importlib.import_module(package)
    declared = _type_checking_imports(Path(module.__file__).read_text(encoding="utf-8"))
    assert declared == module._LAZY_ATTRIBUTES
    for name in module.__all__:
        assert getattr(module, name) is not None, name
