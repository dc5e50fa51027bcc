"""The package's one atomic-write helper and one JSON encoder.

Every file the package writes (model files, traces, reports, figures, results rows) goes
through `atomic_path`: the data is written to a temporary file in the target's folder,
which then replaces the target with ``os.replace`` — a rename, atomic on POSIX and Windows —
so a reader (or a rerun after a crash) sees the old file or the new one, never half of one.

Every JSON the package writes goes through `json_default` (numpy scalars and arrays
become Python numbers and lists; paths become strings; anything else is an error, never a
silent ``str``), directly or as `JSONEncoder`.

>>> import numpy as np, json, tempfile, pathlib
>>> json.dumps({"a": np.int64(3), "b": np.arange(2.0)}, default=json_default)
'{"a": 3, "b": [0.0, 1.0]}'
>>> p = atomic_write_text(pathlib.Path(tempfile.mkdtemp()) / "x.json", dumps({"n": np.float64(0.5)}))
>>> p.read_text()
'{"n": 0.5}'
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_text", "json_default", "JSONEncoder", "dumps"]


@contextmanager
def atomic_path(path: str | os.PathLike, prefix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path`` atomically.

    The folder is created if needed; the file is made world-readable (``mkstemp`` makes 0600
    files; reports and results are meant to be read). On an exception the temporary file is
    removed and ``path`` is left as it was. ``prefix`` names the temporary file (default
    ``.<name>.<pid>.``; a results store uses its own to recognise a dead writer's leftovers).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix or f".{path.name}.{os.getpid()}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns ``Path(path)``."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns ``Path(path)``."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def json_default(o: Any) -> Any:
    """``default=`` of ``json.dumps``: numpy scalars -> Python scalars, arrays -> lists, paths -> str."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, os.PathLike):
        return os.fspath(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


class JSONEncoder(json.JSONEncoder):
    """``json.JSONEncoder`` that knows numpy scalars, arrays and paths (see `json_default`)."""

    def default(self, o: Any) -> Any:
        return json_default(o)


def dumps(obj: Any, **kwargs: Any) -> str:
    """``json.dumps`` with `json_default`."""
    return json.dumps(obj, default=json_default, **kwargs)
