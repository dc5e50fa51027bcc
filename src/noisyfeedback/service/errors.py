"""The service's domain errors: what the engine, the storage and the dependencies raise when they refuse a
request or a configuration. They carry no HTTP status: the app maps each kind to one
(`noisyfeedback.service.app.status_of`), and the command line words a `ConfigError` in its
flags.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["ServiceError", "Invalid", "NotFound", "Conflict", "Unavailable", "Unauthorized", "Forbidden",
           "Unsupported", "ConfigError", "literal"]


class ServiceError(Exception):
    """A request the service refuses: a message and the ``field`` it concerns (None: the request)."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.message, self.field = message, field


class Invalid(ServiceError):
    """The request holds a value the service cannot take (``field``: where, dotted: ``slots.0.id``)."""

    def __init__(self, field: str | None, message: str):
        super().__init__(message, field)


class NotFound(ServiceError):
    """No such event (or route of this service)."""


class Conflict(ServiceError):
    """The request contradicts the log (an event id or a reward already logged)."""


class Unavailable(ServiceError):
    """The log cannot be written or read now; the request may be retried."""


class Unauthorized(ServiceError):
    """No key, or an unknown or revoked one."""


class Forbidden(ServiceError):
    """A key whose role may not call this route."""


class Unsupported(ServiceError):
    """What this service (or installation) does not do."""


def _plain(name: str) -> str:
    return name


def literal(value: object) -> str:
    """``str(value)`` safe inside a `ConfigError` text (its braces doubled)."""
    return str(value).replace("{", "{{").replace("}", "}}")


class ConfigError(ValueError):
    """A configuration no service can run with. ``text`` holds one ``{}`` per option it names, in the
    order of ``options`` (the names of `ServiceConfig` fields), so
    that each front door words them its own way (`render`); ``str()`` uses the field names.

    >>> ConfigError("{} must be at most 30; got 31.", "bits").render(lambda o: "--" + o)
    '--bits must be at most 30; got 31.'
    """

    def __init__(self, text: str, *options: str):
        self.text, self.options = text, options
        super().__init__(self.render())

    def render(self, word: Callable[[str], str] = _plain) -> str:
        return self.text.format(*(word(o) for o in self.options))
