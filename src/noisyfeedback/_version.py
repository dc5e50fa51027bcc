"""The package version (a leaf module: every part of the package may import it)."""

__version__ = "0.1.0"
