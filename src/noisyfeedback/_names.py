"""Names and the errors of building from names: the one lookup key, and typed errors that each front door
renders in its own words (flags on the command line, fields in HTTP, keys in a TOML config).

At the bottom of the package (it imports nothing of it), so the registry (`noisyfeedback.registry`),
the datasets and the build layer (`noisyfeedback.build`) share one normalisation of names. The
public home of these names is `noisyfeedback.build`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["BadParameter", "BuildError", "UnknownName", "key", "suggest"]


def key(name: Any) -> str:
    """The lookup key of a name: lower case, without ``-``, ``_`` and white space.

    >>> key("Breast Cancer"), key("breast_cancer"), key("RC-NBF")
    ('breastcancer', 'breastcancer', 'rcnbf')
    """
    return re.sub(r"[\s_\-]+", "", str(name)).lower()


def suggest(name: Any, names: Iterable[str], n: int = 1) -> tuple[str, ...]:
    """The names closest to ``name`` (compared by `key`), best first: a "did you mean".

    >>> suggest("banditorn", ["Perceptron", "Banditron", "RCNBF"])
    ('Banditron',)
    """
    names = list(names)
    by_key: dict[str, str] = {}
    for n_ in names:
        by_key.setdefault(key(n_), n_)
    close = difflib.get_close_matches(key(name), list(by_key), n=n) if isinstance(name, str) else []
    return tuple(by_key[c] for c in close)


def _rebuild(cls: type, args: tuple, state: dict) -> BuildError:
    err = cls.__new__(cls, *args)
    err.args = args
    err.__dict__.update(state)
    return err


class BuildError(ValueError):
    """A spec that cannot be built: the base of `UnknownName` and `BadParameter` (a
    ``ValueError``, so code that catches ``ValueError`` keeps working). Errors pickle with their fields
    (a worker process's error reaches the parent whole)."""

    __module__ = "noisyfeedback.build"

    def __reduce__(self):
        return _rebuild, (type(self), self.args, dict(self.__dict__))

    def with_message(self, message: str) -> BuildError:
        """The same error (same fields) with another message, e.g. prefixed with where it happened."""
        return _rebuild(type(self), (message,), dict(self.__dict__))


class UnknownName(BuildError):
    """A name that is not registered.

    ``kind`` ("learner", "feedback channel", "dataset", "candidate stream", ...), ``name`` as given,
    ``suggestions`` (the closest known names, best first) and ``allowed`` (every known name)."""

    __module__ = "noisyfeedback.build"

    def __init__(self, kind: str, name: Any, suggestions: tuple[str, ...] = (), allowed: tuple[str, ...] = (),
                 message: str | None = None):
        self.kind, self.name = kind, name
        self.suggestions, self.allowed = tuple(suggestions), tuple(allowed)
        if message is None:
            hint = f" (did you mean {self.suggestions[0]!r}?)" if self.suggestions else ""
            message = f"unknown {kind} {name!r}{hint}; allowed: {', '.join(self.allowed)}."
        super().__init__(message)


class BadParameter(BuildError):
    """A parameter a learner, channel or dataset cannot be built with.

    ``owner`` (the class or dataset name), ``param`` (the parameter's name), ``value`` (as given; None when
    missing) and ``reason``: "unknown" (the owner has no such parameter), "missing" (needed and not given),
    "invalid" (a value out of range), "syntax" (not NAME=VALUE) or "choice" (give exactly one of several)."""

    __module__ = "noisyfeedback.build"

    def __init__(self, owner: str, param: str, value: Any, reason: str, message: str):
        self.owner, self.param, self.value, self.reason = owner, param, value, reason
        super().__init__(message)
