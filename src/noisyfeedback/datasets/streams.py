"""Logs of any size, read in chunks: one interface for every log format.

`stream_log` yields fixed-size chunks of logged rounds in the learners' arrays, in the order of the
log, holding at most one chunk (and the reader's buffers) in memory whatever the log's size. Every
format is one entry of `FORMATS` (name -> `LogFormat`: the reader and the file suffixes it
claims); `register_format` adds one. The chunks of a stream, concatenated, are the arrays the
whole-file reader gives (the same bits): `read_log` is that concatenation for tables.

Chunk kinds (``chunk.kind``):

- ``"index"`` — `LogChunk`: ``X`` (rows, d) contexts, ``actions`` (0-based int64),
  ``rewards`` (float64), ``propensities`` (float64), ``feature_names`` and ``start`` (the index of the
  chunk's first row in the log). Unpacks as ``X, actions, rewards, propensities = chunk``.

**Tables** (``"parquet"``, ``"csv"``): a file, a directory (every ``*.parquet``/``*.pq`` or ``*.csv``
file under it, in sorted path order), a glob (``"logs/day=*/*.parquet"``, matches in sorted order), a
list of such paths, or a `pyarrow.dataset.Dataset` (its fragments' order). Read in record batches
(``batch_size`` rows a batch, the chunk size): Parquet files with ``pyarrow.parquet``, one file after
another, CSV files, Datasets, filesystems and partitionings with ``pyarrow.dataset`` scanners (which
import pandas: about 50 MB more); checked with Arrow's
compute functions, a batch at a time; the columns are those of `read_log`: ``action`` (0-based
ints, or text of decimal digits), ``reward``, ``propensity`` and the features (default every other
column), or the decision service's ``export-log -o log.parquet`` (``context`` lists become the
features ``0``, ``1``, …; events without a reward are left out). A bad value raises ValueError naming
the column and the data row (counted from 0 over the whole log) and, for several files, the file.
CSV columns are read as text and converted by Arrow (so a later block cannot change a column's type).

Options of the table formats: ``action``, ``reward``, ``propensity`` (column names), ``features``
(the feature columns, in order), ``filesystem`` (a pyarrow filesystem), ``partitioning`` (e.g.
``"hive"``: its columns are then available as features by name; they are not used unless named).

>>> import numpy as np, tempfile, os
>>> from noisyfeedback.datasets import write_log
>>> d = tempfile.mkdtemp()
>>> path = write_log(os.path.join(d, "log.parquet"), np.eye(5, 2), [0, 1, 0, 1, 1], [1, 0, 1, 1, 0], [0.5] * 5)
>>> [(c.start, c.X.shape) for c in stream_log(path, chunk_rows=2)]
[(0, (2, 2)), (2, (2, 2)), (4, (1, 2))]
"""

from __future__ import annotations

import glob as _glob
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator, Sequence

import numpy as np

_INT64_MAX = np.iinfo(np.int64).max


@dataclass
class BanditLog:
    """Logged rows: X (n, d) (CSR from VW text, dense from tables), actions (n,) int64 0-based,
    rewards (n,) float64, propensities (n,) float64, feature_names (d names, or None when hashed)."""

    X: Any
    actions: np.ndarray
    rewards: np.ndarray
    propensities: np.ndarray
    feature_names: list[str] | None = None

    def __iter__(self):  # X, actions, rewards, propensities = log
        return iter((self.X, self.actions, self.rewards, self.propensities))


__all__ = ["BanditLog", "LogChunk", "LogFormat", "FORMATS", "register_format", "stream_log", "log_format", "log_files",
           "DEFAULT_CHUNK_ROWS", "concat_chunks"]

#: rows a chunk by default (16k rows of 30 float64 features: 4 MB). `fit_logged` on a 1M-row Parquet log
#: peaked 38 MB higher with 65,536 rows a chunk, at the same speed (the model does not depend on the chunks)
DEFAULT_CHUNK_ROWS = 16384


@dataclass
class LogChunk(BanditLog):
    """A chunk of an index log: rows ``start`` .. ``start + len(actions) − 1`` of the log."""

    start: int = 0
    kind: ClassVar[str] = "index"

    def __len__(self) -> int:
        return int(self.actions.shape[0])


@dataclass(frozen=True)
class LogFormat:
    """A log format: ``reader(source, chunk_rows, **options)`` yields chunks; ``suffixes`` are the file
    suffixes it claims (for inferring the format of a path); ``kind`` the kind of its chunks."""

    name: str
    reader: Callable[..., Iterator[Any]]
    suffixes: tuple[str, ...] = ()
    kind: str = "index"
    doc: str = ""


#: every log format, by name
FORMATS: dict[str, LogFormat] = {}


def register_format(name: str, reader: Callable[..., Iterator[Any]], suffixes: Sequence[str] = (),
                    kind: str = "index", doc: str = "") -> LogFormat:
    """Add (or replace) the format ``name``: ``reader(source, chunk_rows, **options)`` yields chunks."""
    fmt = LogFormat(name, reader, tuple(suffixes), kind, doc)
    FORMATS[name] = fmt
    return fmt


def _suffix_of(path: str) -> str:
    """The format suffix of a file name, compression suffixes skipped (``log.vw.gz`` -> ``.vw``)."""
    p = Path(path)
    sfx = [s.lower() for s in p.suffixes]
    while sfx and sfx[-1] in (".gz", ".bz2", ".xz", ".zst"):
        sfx.pop()
    return sfx[-1] if sfx else ""


def _format_by_suffix(suffix: str) -> str | None:
    for name, fmt in FORMATS.items():
        if suffix in fmt.suffixes:
            return name
    return None


def log_files(source: Any, suffixes: Sequence[str] | None = None) -> list[str]:
    """The files of a source, in order: a file; a directory (its files with one of ``suffixes``, under it
    at any depth, sorted by path); a glob (its matches, sorted); a list of these (in the list's order).
    Raises FileNotFoundError naming the source when it names no file."""
    if isinstance(source, (list, tuple)):
        return [f for s in source for f in log_files(s, suffixes)]
    s = os.fspath(source)
    if os.path.isdir(s):
        files = sorted(str(p) for p in Path(s).rglob("*") if p.is_file() and not p.name.startswith((".", "_"))
                       and (suffixes is None or _suffix_of(str(p)) in suffixes))
        if not files:
            raise FileNotFoundError(f"{s}: no log file in the directory (looked for {', '.join(suffixes or ['*'])}).")
        return files
    if os.path.isfile(s):
        return [s]
    if _glob.has_magic(s):
        files = sorted(f for f in _glob.glob(s, recursive=True) if os.path.isfile(f))
        if not files:
            raise FileNotFoundError(f"{s}: the pattern matches no file.")
        return files
    raise FileNotFoundError(f"{s}: no such file, directory or pattern.")


def log_format(source: Any, format: str | None = None) -> str:
    """The format of a source: ``format`` if given (checked), else from a Dataset's file format or the
    suffix of its (first) file."""
    if format is not None:
        if format not in FORMATS:
            raise ValueError(f"unknown log format {format!r}; the formats are {sorted(FORMATS)}.")
        return format
    if is_arrow_dataset(source):
        import pyarrow.dataset as ds

        return "csv" if isinstance(getattr(source, "format", None), ds.CsvFileFormat) else "parquet"
    files = log_files(source, [s for f in FORMATS.values() for s in f.suffixes])
    suffixes = {_suffix_of(f) for f in files}
    names = {_format_by_suffix(s) for s in suffixes}
    if len(names) != 1 or None in names:
        raise ValueError(f"{source}: cannot tell the log format from the file suffixes {sorted(suffixes)}; "
                         f"pass format= (one of {sorted(FORMATS)}).")
    return names.pop()


def stream_log(source: Any, *, format: str | None = None, chunk_rows: int = DEFAULT_CHUNK_ROWS,
               **options: Any) -> Iterator[Any]:
    """Yield the log ``source`` in chunks of ``chunk_rows`` rounds (the last one shorter), in order.

    ``source``: a path, a directory, a glob, a list of paths, or (tables) a ``pyarrow.dataset.Dataset``;
    ``format``: a name of `FORMATS` (default from the suffix); ``options``: the format's (see the
    module docstring). Memory: one chunk and the reader's buffers, whatever the log's size."""
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        raise ValueError(f"The 'chunk_rows' parameter of stream_log must be an int >= 1. Got {chunk_rows!r} instead.")
    name = log_format(source, format)
    return FORMATS[name].reader(source, int(chunk_rows), **options)


# ------------------------------------------------------------------ tables
#: the columns of the decision service's Parquet export that the table reader uses
_SERVICE_COLUMNS = ("event_id", "context", "action", "probability", "reward")
_TABLE_OPTIONS = ("action", "reward", "propensity", "features", "filesystem", "partitioning")


def is_arrow_dataset(obj: Any) -> bool:
    """Whether ``obj`` is a `pyarrow.dataset.Dataset`, without importing ``pyarrow.dataset`` (which imports
    pandas) where nothing has: a Dataset exists only once its module is imported."""
    ds = sys.modules.get("pyarrow.dataset")
    return ds is not None and isinstance(obj, ds.Dataset)


class _ParquetFiles:
    """Local Parquet files read one after another with ``pyarrow.parquet``: what the table readers use of
    a Dataset (``schema``, the first file's; ``scanner(columns, batch_size)``, whose ``scan_batches``
    yields record batches tagged with their file), without ``pyarrow.dataset`` and the pandas it imports.
    Memory as the Dataset scanner's options below: one batch, no read-ahead threads, pages read as a
    buffered stream."""

    format = None
    partitioning = None

    def __init__(self, files: list[str]):
        import pyarrow.parquet as pq

        self.files = files
        self.schema = pq.read_schema(files[0])

    def scanner(self, columns: list[str], batch_size: int, **_ignored) -> "_ParquetFiles._Scan":
        return self._Scan(self.files, columns, batch_size)

    @dataclass
    class _Scan:
        files: list[str]
        columns: list[str]
        batch_size: int

        def scan_batches(self) -> Iterator[Any]:
            import types

            import pyarrow.parquet as pq

            for path in self.files:
                f = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 16)  # 1 MiB held 8 MB more, no faster
                try:
                    missing = [c for c in self.columns if c not in f.schema_arrow.names]
                    if missing:
                        raise ValueError(f"{path}: no column named {missing[0]!r}; the columns are "
                                         f"{f.schema_arrow.names}.")
                    fragment = types.SimpleNamespace(path=path)
                    for batch in f.iter_batches(batch_size=self.batch_size, columns=self.columns, use_threads=False):
                        yield types.SimpleNamespace(record_batch=batch, fragment=fragment)
                finally:
                    f.close()


def _dataset(source: Any, fmt: str, filesystem=None, partitioning=None, text_columns: Sequence[str] | None = None):
    """(dataset, name for messages, file list or None); local Parquet files as `_ParquetFiles`."""
    if is_arrow_dataset(source):
        files = list(getattr(source, "files", []) or [])
        return source, (files[0] if len(files) == 1 else "<dataset>"), files or None
    files = log_files(source, FORMATS[fmt].suffixes)
    name = files[0] if len(files) == 1 else os.fspath(source) if not isinstance(source, (list, tuple)) else "<files>"
    if fmt == "parquet" and filesystem is None and partitioning is None:
        return _ParquetFiles(files), name, files
    import pyarrow as pa
    import pyarrow.dataset as ds

    if fmt == "csv":
        opts = None
        if text_columns is not None:
            import pyarrow.csv as pacsv

            opts = ds.CsvFileFormat(convert_options=pacsv.ConvertOptions(
                column_types={c: pa.string() for c in text_columns}, strings_can_be_null=False,
                quoted_strings_can_be_null=False))
        file_format = opts or "csv"
    else:
        file_format = "parquet"
    return ds.dataset(files, format=file_format, filesystem=filesystem, partitioning=partitioning), name, files


def _scan_options(data, chunk_rows: int) -> dict:
    """Scanner options that bound memory: batches of ``chunk_rows``, one batch and one file read ahead, no
    scanner threads (with threads, Arrow read ahead without bound while the consumer was busy: most of a
    264 MB file during a 3 s pause), Parquet pages read as a buffered stream rather than whole column
    chunks at once. Measured on a 3M-row, 11-column file with a consumer that pauses: about 100 MB
    above the imports (330 MB with threads), about 3M rows/s read."""
    opts = {"batch_size": chunk_rows, "batch_readahead": 1, "fragment_readahead": 1, "use_threads": False}
    if isinstance(data, _ParquetFiles):
        return opts
    import pyarrow.dataset as ds

    if isinstance(getattr(data, "format", None), ds.ParquetFileFormat):
        opts["fragment_scan_options"] = ds.ParquetFragmentScanOptions(pre_buffer=False, use_buffered_stream=True,
                                                                      buffer_size=1 << 20)
    return opts


class _TableError(ValueError):
    pass


def _where(name: str, files, fragment_path: str | None) -> str:
    """The name of the source in a message: the file when the log has several."""
    if files and len(files) > 1 and fragment_path:
        return fragment_path
    return name


def _first(mask) -> int:
    """The index of the first true value of a boolean Arrow array (nulls false)."""
    import pyarrow.compute as pc

    return int(pc.index(pc.fill_null(mask, False), True).as_py())


#: the numpy dtypes of the Arrow types the readers convert (after their casts)
_NUMPY_TYPES = {"double": np.float64, "int64": np.int64, "int32": np.int32, "uint64": np.uint64}


def _to_numpy(col) -> np.ndarray:
    """An Arrow array of `_NUMPY_TYPES` as a read-only numpy view of its values (nulls, floats only: NaN).
    ``Array.to_numpy`` would import pandas (about 50 MB) on first use."""
    import pyarrow.compute as pc

    dtype = np.dtype(_NUMPY_TYPES[str(col.type)])
    if col.null_count:
        col = pc.fill_null(col, float("nan"))
    return np.frombuffer(col.buffers()[1], dtype=dtype, count=len(col), offset=col.offset * dtype.itemsize)


def _numeric(col, where: str, name: str, what: str, row0: int):
    """A column as float64 numpy (nulls NaN); text cast by Arrow; a cell that is not a number raises
    naming the column and the data row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = col.type
    if pa.types.is_boolean(t) or not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
                                      or pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t)):
        i = 0
        raise _TableError(f"{where}: {what} column {name!r} holds {col[i].as_py()!r}, not a number, in data row "
                          f"{row0 + i}" + (" (pass features= to choose the feature columns)." if what == "feature"
                                           else "."))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        text = pc.utf8_trim_whitespace(col)
        empty = pc.equal(pc.utf8_length(text), 0)
        text = pc.if_else(empty, pa.scalar(None, text.type), text)
        try:
            col = pc.cast(text, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            for i, v in enumerate(text.to_pylist()):  # find the cell (error path only)
                if v is None:
                    continue
                try:
                    float(v)
                except ValueError:
                    raise _TableError(f"{where}: {what} column {name!r} holds {v!r}, not a number, in data row "
                                      f"{row0 + i}" + (" (pass features= to choose the feature columns)."
                                                       if what == "feature" else ".")) from None
            raise
    elif not pa.types.is_floating(t) or t != pa.float64():
        col = pc.cast(col, pa.float64())
    return _to_numpy(col)


def _actions(col, where: str, name: str, row0: int) -> np.ndarray:
    """0-based int64 actions in [0, 2**63): ints of any width, or text of decimal digits."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = col.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        text = pc.utf8_trim_whitespace(col)
        ok = pc.and_(pc.utf8_is_digit(text), pc.greater(pc.utf8_length(text), 0))
        bad = pc.invert(pc.fill_null(ok, False))
        if pc.any(bad).as_py():
            i = _first(bad)
            v = text[i].as_py()
            if v is not None and "," in v:
                raise _TableError(f"{where}: rewarded event {row0 + i} played the set {v!r}; read_log reads single "
                                  "actions.")
            if v is not None and v[:1] == "-" and v[1:].isascii() and v[1:].isdigit():
                raise _TableError(f"{where}: column {name!r} must hold 0-based actions >= 0; data row {row0 + i} "
                                  f"has {v}.")
            raise _TableError(f"{where}: column {name!r} must hold integer action indices; data row {row0 + i} has "
                              f"{v!r}.")
        try:
            a = pc.cast(text, pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            for i, v in enumerate(text.to_pylist()):
                if int(v) > _INT64_MAX:
                    raise _TableError(f"{where}: column {name!r}: the action {v} in data row {row0 + i} is not in "
                                      "[0, 2**63).") from None
            raise
        return _to_numpy(a)
    if not pa.types.is_integer(t):
        raise _TableError(f"{where}: column {name!r} must hold integer action indices; got dtype "
                          f"{t.to_pandas_dtype().__name__ if hasattr(t.to_pandas_dtype(), '__name__') else t}.")
    if col.null_count:
        i = _first(pc.is_null(col))
        raise _TableError(f"{where}: column {name!r} must hold integer action indices; data row {row0 + i} has None.")
    # checked in numpy (an Arrow comparison with a Python number imports pandas)
    if t == pa.uint64():
        u = _to_numpy(col)
        bad = u > _INT64_MAX
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise _TableError(f"{where}: column {name!r}: the action {int(u[i])} in data row {row0 + i} is not in "
                              "[0, 2**63).")
        return u.astype(np.int64)
    a = _to_numpy(col if t == pa.int64() else pc.cast(col, pa.int64()))
    bad = a < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _TableError(f"{where}: column {name!r} must hold 0-based actions >= 0; data row {row0 + i} has "
                          f"{int(a[i])}.")
    return a


def _check_rp(where: str, r: np.ndarray, p: np.ndarray, reward: str, propensity: str, row0: int) -> None:
    bad = ~np.isfinite(r)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _TableError(f"{where}: column {reward!r} must hold finite rewards; data row {row0 + i} has "
                          f"{float(r[i])!r}.")
    bad = ~((p > 0) & (p <= 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _TableError(f"{where}: column {propensity!r} must hold propensities in (0, 1]; data row {row0 + i} "
                          f"has {float(p[i])!r}.")


class _Chunker:
    """Collects rows of (X, a, r, p) pieces into chunks of exactly ``chunk_rows`` rows (copying each
    value once into the chunk's buffers)."""

    def __init__(self, chunk_rows: int, d: int, names: list[str]):
        self.chunk_rows, self.d, self.names = chunk_rows, d, names
        self.start = 0
        self._new()

    def _new(self) -> None:
        m = self.chunk_rows
        self.X = np.empty((m, self.d), dtype=np.float64)
        self.a = np.empty(m, dtype=np.int64)
        self.r = np.empty(m, dtype=np.float64)
        self.p = np.empty(m, dtype=np.float64)
        self.fill = 0

    def add(self, cols: list[np.ndarray] | np.ndarray, a, r, p) -> Iterator[LogChunk]:
        """Append n rows (``cols``: d feature columns, or an (n, d) array); yield each chunk filled."""
        n = a.shape[0]
        lo = 0
        while lo < n:
            take = min(n - lo, self.chunk_rows - self.fill)
            f, hi = self.fill, lo + take
            if isinstance(cols, np.ndarray):
                self.X[f:f + take] = cols[lo:hi]
            else:
                for j, c in enumerate(cols):
                    self.X[f:f + take, j] = c[lo:hi]
            self.a[f:f + take] = a[lo:hi]
            self.r[f:f + take] = r[lo:hi]
            self.p[f:f + take] = p[lo:hi]
            self.fill += take
            lo = hi
            if self.fill == self.chunk_rows:
                yield self._emit()

    def _emit(self) -> LogChunk:
        k = self.fill
        out = LogChunk(self.X[:k], self.a[:k], self.r[:k], self.p[:k], list(self.names), self.start)
        if k < self.chunk_rows:  # the last chunk: its own compact arrays
            out = LogChunk(np.ascontiguousarray(self.X[:k]), self.a[:k].copy(), self.r[:k].copy(),
                           self.p[:k].copy(), list(self.names), self.start)
        self.start += k
        self._new()
        return out

    def flush(self) -> Iterator[LogChunk]:
        if self.fill:
            yield self._emit()


def _table_stream(fmt: str):
    def reader(source: Any, chunk_rows: int, *, action: str = "action", reward: str = "reward",
               propensity: str = "propensity", features: Sequence[str] | None = None, filesystem=None,
               partitioning=None) -> Iterator[LogChunk]:
        data, name, files = _dataset(source, fmt, filesystem, partitioning)  # eager: a missing file raises here
        return _read_table(data, name, files, source, fmt, chunk_rows, action, reward, propensity, features,
                           filesystem, partitioning)
    reader.__doc__ = f"Stream a {fmt} log (see `noisyfeedback.datasets.streams`)."
    return reader


def _read_table(data, name, files, source, fmt, chunk_rows, action, reward, propensity, features, filesystem,
                partitioning):
    columns = list(data.schema.names)
    service = all(c in columns for c in _SERVICE_COLUMNS) and "propensity" not in columns \
        and (action, reward, propensity, features) == ("action", "reward", "propensity", None)
    if fmt == "csv" and files is not None:  # every used column as text, converted by Arrow below
        data, name, files = _dataset(source, fmt, filesystem, partitioning, text_columns=columns)
    if service:
        yield from _read_service(data, name, files, chunk_rows)
        return
    for col in (action, reward, propensity):
        if col not in columns:
            raise ValueError(f"{name}: no column named {col!r}; the columns are {columns}.")
    if features is None:
        features = [c for c in columns if c not in (action, reward, propensity)]
        if partitioning is not None and hasattr(data, "partitioning") and data.partitioning is not None:
            part = set(data.partitioning.schema.names)
            features = [c for c in features if c not in part]
    features = list(features)
    missing = [c for c in features if c not in columns]
    if missing:
        raise ValueError(f"{name}: feature column(s) {missing} not found.")
    chunker = _Chunker(chunk_rows, len(features), [str(c) for c in features])
    row0 = 0
    scanner = data.scanner(columns=[action, reward, propensity, *features], **_scan_options(data, chunk_rows))
    for tagged in scanner.scan_batches():
        batch = tagged.record_batch
        n = batch.num_rows
        if n == 0:
            continue
        where = _where(name, files, getattr(tagged.fragment, "path", None))
        try:
            cols = []
            for j, c in enumerate(features):
                x = _numeric(batch.column(3 + j), where, c, "feature", row0)
                bad = ~np.isfinite(x)
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    raise _TableError(f"{where}: feature column {c!r} is missing or not finite in data row {row0 + i}.")
                cols.append(x)
            a = _actions(batch.column(0), where, action, row0)
            r = _numeric(batch.column(1), where, reward, "reward", row0)
            p = _numeric(batch.column(2), where, propensity, "propensity", row0)
            _check_rp(where, r, p, reward, propensity, row0)
        except _TableError as e:
            raise ValueError(str(e)) from None
        yield from chunker.add(cols, a, r, p)
        row0 += n
    if row0 == 0:
        raise ValueError(f"{name}: the log holds no row.")
    yield from chunker.flush()


def _read_service(data, name, files, chunk_rows) -> Iterator[LogChunk]:
    """The service's export: rewarded events in event order; X from ``context``, columns ``0``…``d−1``."""
    import pyarrow.compute as pc

    chunker: _Chunker | None = None
    row0 = 0
    for tagged in data.scanner(columns=["context", "action", "probability", "reward"],
                               **_scan_options(data, chunk_rows)).scan_batches():
        batch = tagged.record_batch
        where = _where(name, files, getattr(tagged.fragment, "path", None))
        batch = batch.filter(pc.is_valid(batch.column(3)))
        n = batch.num_rows
        if n == 0:
            continue
        ctx = batch.column(0)
        lengths = _to_numpy(pc.fill_null(pc.list_value_length(ctx), -1))
        if chunker is None:
            d = int(lengths[0]) if lengths[0] >= 0 else 0
            chunker = _Chunker(chunk_rows, d, [str(j) for j in range(d)])
        d = chunker.d
        bad = lengths != d
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{where}: column 'context' has {max(int(lengths[i]), 0)} values in data row "
                             f"{row0 + i} of the rewarded events, {d} in the first.")
        flat = pc.list_flatten(ctx)
        X = _numeric(flat, where, "context", "feature", row0).reshape(n, d)
        bad = ~np.isfinite(X)
        if bad.any():
            i, j = (int(k[0]) for k in np.nonzero(bad))
            raise ValueError(f"{where}: column 'context' is not finite in rewarded event {row0 + i}, feature {j}.")
        try:
            a = _actions(batch.column(1), where, "action", row0)
            r = _numeric(batch.column(3), where, "reward", "reward", row0)
            p = _numeric(batch.column(2), where, "probability", "propensity", row0)
            _check_rp(where, r, p, "reward", "probability", row0)
        except _TableError as e:
            raise ValueError(str(e)) from None
        yield from chunker.add(X, a, r, p)
        row0 += n
    if chunker is None:
        raise ValueError(f"{name}: the export holds no rewarded event.")
    yield from chunker.flush()


register_format("parquet", _table_stream("parquet"), (".parquet", ".pq"),
                doc="Parquet tables (pyarrow.parquet): action, reward, propensity and feature columns.")
register_format("csv", _table_stream("csv"), (".csv",),
                doc="CSV tables (pyarrow.dataset): action, reward, propensity and feature columns.")


def concat_chunks(chunks: Iterator[LogChunk]) -> BanditLog:
    """One `BanditLog` from a stream of index chunks (their arrays concatenated)."""
    parts = list(chunks)
    if not parts:
        raise ValueError("the stream holds no chunk.")
    import scipy.sparse as sp

    Xs = [c.X for c in parts]
    X = sp.vstack(Xs, format="csr") if sp.issparse(Xs[0]) else (Xs[0] if len(Xs) == 1 else np.concatenate(Xs))
    return BanditLog(np.ascontiguousarray(X) if not sp.issparse(X) else X,
                     np.concatenate([c.actions for c in parts]), np.concatenate([c.rewards for c in parts]),
                     np.concatenate([c.propensities for c in parts]), parts[0].feature_names)

