"""Catalogue learners: candidates described by features, a different candidate list every round, one
slot or several (see ``_base.py`` for the model and why these are classes of their own)."""

from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below are imported on first use (lazy_attributes)
    from ._base import CatalogueOracle
    from .epsilon_greedy import CatalogueEpsilonGreedy
    from .squarecb import CatalogueSquareCB

_LAZY = {
    'CatalogueOracle': '._base',
    'CatalogueEpsilonGreedy': '.epsilon_greedy',
    'CatalogueSquareCB': '.squarecb',
}
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())

__all__ = ["CatalogueOracle", "CatalogueSquareCB", "CatalogueEpsilonGreedy"]
