"""Datasets: seeded generators, scikit-learn bundled sets, file loaders and a catalog."""

from .generators import synnonsep, synsep

__all__ = ["synsep", "synnonsep"]
