"""Numerical tolerances of the test suite, in one place."""

#: compiled kernel vs its numpy reference twin (different summation order)
KERNEL_RTOL = 1e-12
KERNEL_ATOL = 1e-12
#: exact identities evaluated in floating point (unbiasedness by enumeration)
EXACT_RTOL = 1e-10
EXACT_ATOL = 1e-12
