import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

#: under NUMBA_DISABLE_JIT=1 kernels run as Python: use smaller problems
JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0") == "1"


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
