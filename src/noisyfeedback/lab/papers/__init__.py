"""Paper recipes for ``noisyfeedback reproduce``: one package per paper (e.g. ``agarwal2021/``).

Every module here is imported by :func:`noisyfeedback.lab.recipe_names` and
:func:`noisyfeedback.lab.reproduce`; each declares a :class:`noisyfeedback.lab.Paper` and registers
it with :func:`noisyfeedback.lab.register_paper` (see :mod:`noisyfeedback.lab.recipes` for the
contract and the ``example`` recipe).
"""
