"""Named codes of the integer arguments the compiled kernels take (plain module-level ints:
numba reads them as compile-time constants, so ``sparse == CSR_CODED`` costs what ``sparse == 3`` did).

Row storage, the ``sparse`` argument (from `noisyfeedback.learners._linear.kernel_view`):

- ``DENSE``: ``Xd`` is the dense X (``indptr``/``indices``/``data`` unused);
- ``CSR_FLOAT64``: a CSR X with float64 values (a kernel may read a row's slices in place);
- ``CSR_OTHER``: a CSR X with other value types (copied into float64 row buffers, so the
  arithmetic stays float64 with and without the JIT);
- ``CSR_CODED``: coded rows (`CodedRows`): ``data`` holds one-byte
  codes and ``Xd`` is the (1, n_values) table of their values.

Feedback channels, the ``code`` argument (from ``FeedbackChannel._kernel_args``):
``CODE_FULL`` (the true label), ``CODE_CONFUSION`` (a label drawn from C[:, y], one uniform a
round), ``CODE_BANDIT`` (1[ỹ = y], flipped with rho0/rho1), ``CODE_DILUTED`` (1[y ∈ set], flipped).
"""

DENSE = 0
CSR_FLOAT64 = 1
CSR_OTHER = 2
CSR_CODED = 3

CODE_FULL = 0
CODE_CONFUSION = 1
CODE_BANDIT = 2
CODE_DILUTED = 3
