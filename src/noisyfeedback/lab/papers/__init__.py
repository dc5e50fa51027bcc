"""Paper recipes for ``noisyfeedback reproduce``: one module per paper (e.g. ``agarwal2021.py``).

Every module here is imported by :func:`noisyfeedback.lab.recipe_names` and
:func:`noisyfeedback.lab.reproduce`; each registers its recipe with
:func:`noisyfeedback.lab.register_recipe` (see :mod:`noisyfeedback.lab.recipes`
for the recipe contract and the ``example`` recipe).
"""
