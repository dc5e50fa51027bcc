import os
import platform
import sys
import weakref

# NumPy chooses its SIMD kernels (exp, log, sums, ...) by the CPU it runs on, and so does OpenBLAS (the dot
# products under scipy's L-BFGS); their last bits differ between AVX2 and AVX-512 (a flip-rate estimate
# moved by 0.002, and with it agarwal2021's stored numbers). The numbers the tests store (tests/data) are
# those of the AVX2 kernels: ask for them on every x86-64 machine, before NumPy is first imported, here and
# in every process the tests start (they inherit the environment).
if platform.machine().lower() in ("x86_64", "amd64"):
    os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4,AVX512_ICL,AVX512_SPR")
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

# One BLAS thread in every test process (and the processes they start): the suite runs one pytest worker
# a core, and the small matrices of the tests run several times slower when two BLAS threads share a core
# with another worker (find_label_issues on digits: 1.0 s with one thread, 8 s with two on a busy 2-core
# machine). Results do not depend on it: the kernels split no sum across threads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import typer.testing  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

_ONE_BLAS_THREAD = threadpool_limits(limits=1, user_api="blas")  # in case a plugin loaded NumPy first

# the shared helpers (reference twins, tolerances) at the top of tests/, and the layer folders: a test module
# imports another's helpers by its name (test_simulate's python_loop), whichever folder is collected first
_HERE = os.path.dirname(os.path.abspath(__file__))
for _layer in ("core", "learners", "ope", "service", "lab", ""):
    sys.path.insert(0, os.path.join(_HERE, _layer))

# typer's CliRunner builds the click command from the app at every invoke (hundreds of signatures read,
# a quarter of a second for this command line): build it once per app; what runs is the same command
_COMMANDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_build_command = typer.testing._get_command


def _command_once(app):
    if app not in _COMMANDS:
        _COMMANDS[app] = _build_command(app)
    return _COMMANDS[app]


typer.testing._get_command = _command_once


def pytest_configure(config):
    # numba's internal IR checks: a kernel that makes them warn is refused (from a cold cache, as in CI)
    config.addinivalue_line("filterwarnings", "error::numba.core.errors.NumbaIRAssumptionWarning")


#: under NUMBA_DISABLE_JIT=1 kernels run as Python: use smaller problems
JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0") == "1"


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


#: the longest test files (half a minute or more on 2 cores, most of it numba compiling or server processes):
#: they start first, so that the workers of `pytest -n auto --dist loadfile` end together (collected in
#: name order, the schemathesis file came last and one worker waited 48 s for it)
LONGEST_FIRST = (
    "tests/service/test_service_schemathesis.py", "tests/service/test_service_replicas_kill.py",
    "tests/learners/test_catalogue.py", "tests/lab/test_reproduce_all.py", "tests/test_one_resolver.py",
    "tests/learners/test_learner_checks.py", "tests/lab/test_agarwal2021.py", "tests/lab/test_moroshko.py",
    "tests/core/test_simulate.py", "tests/core/test_sklearn_conventions.py", "tests/service/test_service_server.py",
    "tests/lab/test_experiments.py", "tests/core/test_noise.py", "tests/learners/test_rcine.py",
)


def pytest_collection_modifyitems(session, config, items):
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
