"""Lazy package attributes (PEP 562): a package's public names imported on first use.

``import noisyfeedback`` then imports no third-party library (not even numpy); scikit-learn, pandas, SciPy
and numba are imported by the module that needs them, when it is first used (``nf.Banditron``,
``nf.datasets.load``...).
Each package keeps its eager imports under ``if TYPE_CHECKING:`` so that type checkers and the
import-linter contracts see the same graph as before.

A public name may be a function defined in a submodule of the same name (``nf.simulate``, the function in
``noisyfeedback.simulate``). Importing that submodule would set the package's attribute to the module
and hide the function; the package's module class (`_Package`) declines exactly that assignment, so the
name keeps resolving to the function, as it did when it was imported eagerly.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from typing import Any


class _Package(types.ModuleType):
    """A package module that keeps a lazy public name from being replaced by the submodule of that name."""

    def __setattr__(self, name: str, value: Any) -> None:
        where = self.__dict__.get("_LAZY_ATTRIBUTES", {}).get(name)
        if where and isinstance(value, types.ModuleType) and value.__name__ == f"{self.__name__}.{name}":
            return  # the import system registering the submodule: the public name stays the function
        super().__setattr__(name, value)


def lazy_attributes(package: str, names: dict[str, str], namespace: dict[str, Any]
                    ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``names`` maps a public name to the submodule that
    defines it (relative, e.g. ``".learners"``; a name mapped to ``""`` is the submodule of that name);
    an imported value is stored in ``namespace`` (the package's globals), so each is looked up once."""

    namespace["_LAZY_ATTRIBUTES"] = names
    module = sys.modules.get(package)
    if module is not None and type(module) is types.ModuleType:
        module.__class__ = _Package

    def __getattr__(name: str) -> Any:
        try:
            where = names[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        if where == "":
            value = importlib.import_module(f"{package}.{name}")
        else:
            value = getattr(importlib.import_module(where, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
