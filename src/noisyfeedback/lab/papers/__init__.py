"""Paper recipes for ``noisyfeedback reproduce``: one package per paper (e.g. ``agarwal2021/``).

Every module here is imported by `noisyfeedback.lab.recipe_names` and
`noisyfeedback.lab.reproduce`; each declares a `noisyfeedback.lab.Paper` and registers
it with `noisyfeedback.lab.register_paper` (see `noisyfeedback.lab.recipes` for the
contract and the ``example`` recipe).
"""
