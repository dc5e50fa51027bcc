"""Catalogue learners: candidates described by features, a different candidate list every round, one
slot or several (see ``_base.py`` for the model and why these are classes of their own)."""

from ._base import CatalogueOracle
from .epsilon_greedy import CatalogueEpsilonGreedy
from .squarecb import CatalogueSquareCB

__all__ = ["CatalogueOracle", "CatalogueSquareCB", "CatalogueEpsilonGreedy"]
