"""Paper recipes for ``noisyfeedback reproduce``: one module per paper (e.g. ``agarwal2021.py``).

Every module here is imported by :func:`noisyfeedback.experiments.recipe_names` and
:func:`noisyfeedback.experiments.reproduce`; each registers its recipe with
:func:`noisyfeedback.experiments.register_recipe` (see :mod:`noisyfeedback.experiments.recipes`
for the recipe contract and the ``example`` recipe).
"""
