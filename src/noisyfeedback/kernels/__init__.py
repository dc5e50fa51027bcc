"""Compiled kernels (numba ``@njit``): plain arrays and scalars in, no validation.

The public classes validate and own state; these functions trust their inputs
(the stumpy pattern). Every kernel has a slow reference twin in ``tests/``.
Set ``NUMBA_DISABLE_JIT=1`` to run them as plain Python (coverage, debugging).
"""
