"""Readers for data files in standard formats.

Every loader returns ``(X, y)``: X float64 2-D (a dense C-contiguous ndarray, or a
scipy.sparse CSR matrix for LIBSVM files), y int64 class labels 0..K-1 (float64
targets where ``regression=True``). Malformed files raise ``ValueError`` naming the
file (and, for text formats, the line number).

Label conventions:

- idx (MNIST), USPS and letter: labels as the format defines them (digits 0..9,
  letters A..Z -> 0..25).
- LIBSVM/svmlight: always mapped to 0..K-1 in the sorted order of the original
  values (-1/+1 -> 0/1; 1..20 -> 0..19), unless ``classes`` fixes the order.
- npz, CSV, Parquet: non-negative integer labels are kept as they are; any other
  labels (negative numbers such as -1/+1, or strings) are mapped to 0..K-1 in
  sorted order, unless ``classes`` fixes the order (``classes[i]`` becomes ``i``).
"""

from __future__ import annotations

import bz2
import csv
import gzip
import lzma
import math
import os
import zlib
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from ._common import check_split, display, encode_labels

__all__ = [
    "read_idx",
    "load_idx",
    "load_usps",
    "load_letter",
    "load_libsvm",
    "load_npz",
    "load_csv",
    "load_parquet",
]

PathLike = str | os.PathLike

# ------------------------------------------------------------------ helpers


def _read_bytes(path: PathLike) -> bytes:
    """The bytes of a file, decompressed if it is gzip, bzip2 or xz (detected from its content)."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        if raw[:2] == b"\x1f\x8b":
            return gzip.decompress(raw)
        if raw[:3] == b"BZh":
            return bz2.decompress(raw)
        if raw[:6] == b"\xfd7zXZ\x00":
            return lzma.decompress(raw)
    except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as exc:
        raise ValueError(f"{display(path)}: corrupt compressed file ({exc}).") from None
    return raw


def _open_text(path: PathLike) -> "_Text":
    """Open a text file for reading, transparently decompressing .gz/.bz2/.xz content; a truncated
    or corrupt archive or text that is not UTF-8 raises a ValueError naming the file and line."""
    with open(path, "rb") as fh:
        head = fh.read(6)
    if head[:2] == b"\x1f\x8b":
        fh = gzip.open(path, "rb")
    elif head[:3] == b"BZh":
        fh = bz2.open(path, "rb")
    elif head[:6] == b"\xfd7zXZ\x00":
        fh = lzma.open(path, "rb")
    else:
        fh = open(path, "rb")
    return _Text(fh, display(path))


#: what reading a damaged compressed or non-UTF-8 text file raises
_READ_ERRORS = (UnicodeDecodeError, EOFError, OSError, zlib.error, lzma.LZMAError)


class _Text:
    """A UTF-8 text file read line by line from a binary stream (lines end at b"\\n", ends kept), whose
    read errors (not UTF-8, a truncated or corrupt archive) become one ValueError naming the file
    and the line."""

    def __init__(self, fh, name: str):
        self._fh, self._name, self._line = fh, name, 0

    def _fail(self, exc: Exception):
        if isinstance(exc, UnicodeDecodeError):
            why = "is not UTF-8 text"
        elif isinstance(exc, EOFError) or "end-of-stream" in str(exc) or "truncated" in str(exc).lower():
            why = "is truncated (the compressed stream ends early)"
        else:
            why = f"cannot be read ({exc})"
        raise ValueError(f"{self._name}, line {self._line + 1}: the file {why}.") from None

    def __iter__(self):
        return self

    def __next__(self) -> str:
        try:
            line = next(self._fh).decode("utf-8")
        except _READ_ERRORS as exc:
            self._fail(exc)
        self._line += 1
        return line

    def read(self, *args) -> str:
        try:
            return self._fh.read(*args).decode("utf-8")
        except _READ_ERRORS as exc:
            self._fail(exc)

    def readline(self, *args) -> str:
        try:
            line = self._fh.readline(*args).decode("utf-8")
        except _READ_ERRORS as exc:
            self._fail(exc)
        self._line += 1
        return line

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


def _check_file(path: PathLike) -> Path:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"No such file: {display(path)}")
    return p


def _dense_features(X: Any, source: str) -> np.ndarray:
    """float64 C-contiguous 2-D array with finite values, or ValueError naming ``source`` and the row."""
    X = np.asarray(X)
    if X.dtype == object or not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
        raise ValueError(f"{source}: features must be numbers; got dtype {X.dtype}.")
    if np.issubdtype(X.dtype, np.complexfloating):
        raise ValueError(f"{source}: features must be real numbers; got dtype {X.dtype}.")
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    elif X.ndim > 2:
        X = X.reshape(X.shape[0], -1)
    X = np.ascontiguousarray(X, dtype=np.float64)
    finite = np.isfinite(X)
    if not finite.all():
        row = int(np.flatnonzero(~finite.all(axis=1))[0])
        raise ValueError(f"{source}: row {row} contains NaN or infinity.")
    return X


# ---------------------------------------------------------------------- idx

_IDX_TYPES = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def read_idx(path: PathLike) -> np.ndarray:
    """Read one idx file (the MNIST format; gzip-compressed or not) into an array.

    The header (magic number: two zero bytes, a type code, the number of dimensions;
    then one big-endian uint32 per dimension) is checked against the file size.
    Returns an ndarray with the stored element type (native byte order) and shape.
    Raises ValueError naming the file if the header or size is wrong.
    """
    path = _check_file(path)
    name = display(path)
    data = _read_bytes(path)
    if len(data) < 4:
        raise ValueError(f"{name}: not an idx file (only {len(data)} bytes).")
    magic = int.from_bytes(data[:4], "big")
    if data[0] != 0 or data[1] != 0 or data[2] not in _IDX_TYPES or data[3] == 0:
        raise ValueError(
            f"{name}: not an idx file (bad magic number 0x{magic:08x}; expected 0x0000TTNN with type "
            "code TT in {08,09,0b,0c,0d,0e} and NN >= 1 dimensions)."
        )
    dtype = _IDX_TYPES[data[2]]
    ndim = data[3]
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError(f"{name}: truncated idx header ({len(data)} bytes, {header} needed).")
    dims = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    expected = math.prod(dims) * dtype.itemsize
    actual = len(data) - header
    if actual != expected:
        raise ValueError(
            f"{name}: idx size mismatch: the header (magic 0x{magic:08x}) declares shape {dims}, "
            f"i.e. {expected} bytes of data, but the file holds {actual}."
        )
    arr = np.frombuffer(data, dtype=dtype, offset=header).reshape(dims)
    return arr.astype(dtype.newbyteorder("="))  # a writable copy in native byte order


def load_idx(images: PathLike, labels: PathLike, scale: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Load an idx image file and its idx label file (MNIST, Fashion-MNIST layout).

    ``images`` must have magic 0x00000803 (unsigned bytes, 3 dimensions: n x rows x
    cols), ``labels`` magic 0x00000801 (unsigned bytes, 1 dimension: n); files may be
    gzip-compressed or not. Images are flattened row-major to rows*cols features
    (784 for MNIST), and with ``scale=True`` (default) pixel values 0..255 are
    divided by 255, so features lie in [0, 1].

    Returns ``(X, y)``: X float64 (n, rows*cols), y int64 (the stored labels, 0..9 for MNIST).
    Raises ValueError naming the file on a wrong magic number, size or count mismatch.
    """
    Xi = read_idx(images)
    yi = read_idx(labels)
    if Xi.dtype != np.uint8 or Xi.ndim != 3:
        raise ValueError(
            f"{display(images)}: expected an idx image file with magic 0x00000803 (unsigned bytes, "
            f"3 dimensions); found {Xi.dtype} data with {Xi.ndim} dimension(s)."
        )
    if yi.dtype != np.uint8 or yi.ndim != 1:
        raise ValueError(
            f"{display(labels)}: expected an idx label file with magic 0x00000801 (unsigned bytes, "
            f"1 dimension); found {yi.dtype} data with {yi.ndim} dimension(s)."
        )
    if Xi.shape[0] != yi.shape[0]:
        raise ValueError(
            f"{display(images)} holds {Xi.shape[0]} images but {display(labels)} holds {yi.shape[0]} labels."
        )
    X = Xi.reshape(Xi.shape[0], -1).astype(np.float64)
    if scale:
        X /= 255.0
    return X, yi.astype(np.int64)


# --------------------------------------------------------------------- USPS


def load_usps(path: PathLike, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Load USPS digits from an HDF5 file ``usps.h5`` (groups ``train``/``test``, datasets ``data``/``target``).

    Needs h5py (``pip install h5py`` or the ``h5`` extra). ``split`` is "train"
    (7291 images in the usual file), "test" (2007) or "all" (train then test).
    Feature values are returned as stored (the common usps.h5 holds 16x16 images
    scaled to [0, 1], 256 features); images stored as 3-D arrays are flattened.

    Returns ``(X, y)``: X float64 (n, 256), y int64 in 0..9.
    """
    check_split(split, owner="load_usps")
    path = _check_file(path)
    try:
        import h5py
    except ImportError:
        raise ImportError(
            "Reading USPS (usps.h5) needs the h5py package: pip install h5py "
            "(or install noisyfeedback with the 'h5' extra: pip install 'noisyfeedback[h5]')."
        ) from None
    name = display(path)
    groups = ["train", "test"] if split == "all" else [split]
    Xs, ys = [], []
    try:
        fh = h5py.File(path, "r")
    except OSError as exc:
        raise ValueError(f"{name}: not a readable HDF5 file ({exc}).") from None
    with fh:
        for g in groups:
            if g not in fh or "data" not in fh[g] or "target" not in fh[g]:
                raise ValueError(
                    f"{name}: expected datasets '{g}/data' and '{g}/target'; the file holds "
                    f"{sorted(_h5_names(fh))}."
                )
            X = _dense_features(fh[g]["data"][()], f"{name} ({g}/data)")
            y = np.asarray(fh[g]["target"][()]).reshape(-1)
            if y.shape[0] != X.shape[0]:
                raise ValueError(f"{name}: {g}/data has {X.shape[0]} rows but {g}/target has {y.shape[0]}.")
            Xs.append(X)
            ys.append(encode_labels(y, f"{name} ({g}/target)"))
    if len(Xs) == 1:
        return Xs[0], ys[0]
    if Xs[0].shape[1] != Xs[1].shape[1]:
        raise ValueError(f"{name}: train has {Xs[0].shape[1]} features but test has {Xs[1].shape[1]}.")
    return np.concatenate(Xs), np.concatenate(ys)


def _h5_names(fh) -> list[str]:
    names: list[str] = []
    fh.visit(names.append)
    return names


# ------------------------------------------------------------------- letter

LETTER_N_TRAIN = 16000


def load_letter(path: PathLike, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Load UCI Letter Recognition (``letter-recognition.data``).

    Each line: a capital letter A..Z, then 16 integer features, comma-separated,
    no header. There is no official split file; following the UCI description,
    ``split="train"`` is the first 16000 rows, ``"test"`` the last 4000 (all rows
    after the first 16000), ``"all"`` every row (20000 in the UCI file). Features
    are returned unscaled (integers 0..15).

    Returns ``(X, y)``: X float64 (n, 16), y int64 in 0..25 (A -> 0, ..., Z -> 25).
    Raises ValueError naming the file and line number for a malformed line.
    """
    check_split(split, owner="load_letter")
    path = _check_file(path)
    name = display(path)
    rows: list[list[int]] = []
    labels: list[int] = []
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            text = line.strip()
            if not text:
                continue
            fields = text.split(",")
            if len(fields) != 17:
                raise ValueError(
                    f"{name}, line {lineno}: expected 17 comma-separated fields (a letter and 16 "
                    f"features), found {len(fields)}."
                )
            label = fields[0].strip()
            if len(label) != 1 or not ("A" <= label <= "Z"):
                raise ValueError(f"{name}, line {lineno}: label {label!r} is not a capital letter A-Z.")
            try:
                rows.append([int(f) for f in fields[1:]])
            except ValueError:
                col = next(j for j, f in enumerate(fields) if j > 0 and not _is_int(f))
                raise ValueError(
                    f"{name}, line {lineno}, field {col + 1}: {fields[col].strip()!r} is not an integer."
                ) from None
            labels.append(ord(label) - ord("A"))
    if not rows:
        raise ValueError(f"{name}: the file holds no data.")
    X = np.array(rows, dtype=np.float64).reshape(-1, 16)
    y = np.array(labels, dtype=np.int64)
    if split == "train":
        X, y = X[:LETTER_N_TRAIN], y[:LETTER_N_TRAIN]
    elif split == "test":
        X, y = X[LETTER_N_TRAIN:], y[LETTER_N_TRAIN:]
    return np.ascontiguousarray(X), np.ascontiguousarray(y)


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


# ------------------------------------------------------------------- LIBSVM


def load_libsvm(
    path: PathLike | Sequence[PathLike],
    n_features: int | None = None,
    classes: Sequence[Any] | None = None,
    zero_based: bool | str = "auto",
    regression: bool = False,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Load a LIBSVM/svmlight text file (optionally .gz/.bz2) as sparse CSR.

    ``path`` may also be a list of files (e.g. train and test), which are read with
    one consistent feature count and label mapping and stacked in order.
    ``n_features`` fixes the number of columns (default: the largest index seen).
    Labels are mapped to 0..K-1 in the sorted order of the original values
    (binary -1/+1 -> 0/1, multiclass 1..K -> 0..K-1), or by position in ``classes``
    if given; ``regression=True`` returns the raw float targets instead.

    Returns ``(X, y)``: X scipy.sparse CSR float64 (sorted indices, int64 index arrays),
    y int64. Raises ValueError naming the file and line of a malformed line.
    """
    from sklearn.datasets import load_svmlight_files

    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    for p in paths:
        _check_file(p)
    names = ", ".join(display(p) for p in paths)
    try:
        out = load_svmlight_files(
            [os.fspath(p) for p in paths], n_features=n_features, dtype=np.float64, zero_based=zero_based
        )
    except (ValueError, OSError, EOFError, zlib.error) as exc:
        for p in paths:
            _scan_svmlight(p)
        raise ValueError(f"{names}: not a valid LIBSVM/svmlight file ({exc}).") from None
    Xs, ys = list(out[0::2]), list(out[1::2])
    X = Xs[0] if len(Xs) == 1 else sp.vstack(Xs, format="csr")
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sort_indices()
    # scipy's constructor would downcast the index arrays to int32; set them directly
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    y_raw = np.concatenate(ys) if len(ys) > 1 else ys[0]
    if X.shape[0] == 0:
        raise ValueError(f"{names}: the file holds no data.")
    if not np.isfinite(X.data).all():
        pos = int(np.flatnonzero(~np.isfinite(X.data))[0])
        row = int(np.searchsorted(X.indptr, pos, side="right") - 1)
        raise ValueError(f"{names}: row {row} contains NaN or infinity.")
    y = encode_labels(y_raw, names, classes=classes, always_remap=True, regression=regression)
    return X, y


def _scan_svmlight(path: PathLike) -> None:
    """Find the first malformed line of an svmlight file and raise a ValueError naming it."""
    name = display(path)
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            tokens = text.split()
            try:
                for lab in tokens[0].split(","):
                    float(lab)
            except ValueError:
                raise ValueError(f"{name}, line {lineno}: label {tokens[0]!r} is not a number.") from None
            last = -1
            for tok in tokens[1:]:
                key, sep, val = tok.partition(":")
                if key == "qid":
                    continue
                try:
                    idx = int(key)
                    float(val)
                    if not sep:
                        raise ValueError
                except ValueError:
                    raise ValueError(
                        f"{name}, line {lineno}: {tok!r} is not an 'index:value' pair."
                    ) from None
                if idx <= last:
                    raise ValueError(
                        f"{name}, line {lineno}: feature indices must be strictly increasing ({tok!r})."
                    )
                last = idx


# ---------------------------------------------------------------------- npz


def load_npz(
    path: PathLike, classes: Sequence[Any] | None = None, regression: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Load a NumPy ``.npz`` archive holding arrays ``X`` (n x d) and ``y`` (n).

    Returns ``(X, y)``: X float64 C-contiguous (n, d), y int64 0..K-1 (labels mapped
    as the module docstring says), or float64 targets with ``regression=True``.
    """
    path = _check_file(path)
    name = display(path)
    try:
        archive = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"{name}: not a readable .npz archive ({exc}).") from None
    with archive:
        keys = list(archive.files)
        if "X" not in keys or "y" not in keys:
            raise ValueError(f"{name}: expected arrays 'X' and 'y'; the archive holds {keys}.")
        try:
            X_raw, y_raw = archive["X"], archive["y"]
        except ValueError as exc:  # object arrays need pickle
            raise ValueError(f"{name}: cannot read X/y without pickle ({exc}).") from None
    X = _dense_features(X_raw, f"{name} (X)")
    y = encode_labels(y_raw, f"{name} (y)", classes=classes, regression=regression)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"{name}: X has {X.shape[0]} rows but y has {y.shape[0]} entries.")
    return X, y


# ---------------------------------------------------------------------- CSV


def _numeric_dtype(dt: Any) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(dt)) and not pd.api.types.is_bool_dtype(dt)


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _label_index(label_column: int | str | None, header: list[str] | None, n_cols: int, name: str) -> int:
    if label_column is None:
        if header is not None:
            for cand in ("label", "y"):
                if cand in header:
                    return header.index(cand)
        return n_cols - 1
    if isinstance(label_column, str):
        if header is None:
            raise ValueError(
                f"{name}: label_column={label_column!r} names a column, but the file has no header row."
            )
        if label_column not in header:
            raise ValueError(f"{name}: no column named {label_column!r}; the header has {header}.")
        return header.index(label_column)
    if isinstance(label_column, bool) or not isinstance(label_column, (int, np.integer)):
        raise TypeError(f"label_column must be an int, a column name or None; got {label_column!r}.")
    idx = int(label_column)
    if not -n_cols <= idx < n_cols:
        raise ValueError(f"{name}: label_column={idx} is out of range for {n_cols} columns.")
    return idx % n_cols


def load_csv(
    path: PathLike,
    label_column: int | str | None = None,
    header: bool | str = "auto",
    delimiter: str = ",",
    classes: Sequence[Any] | None = None,
    regression: bool = False,
    return_classes: bool = False,
) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Load a CSV file (optionally gzip/bz2/xz compressed): one example a line, one label column.

    ``label_column``: an int position (negative counts from the end), a column name
    (needs a header) or None: the column named "label" or "y" if the header has one,
    else the last column. ``header``: True, False, or "auto" (the first line is a
    header when none of its fields is a number). Every other column is a feature and
    must hold finite numbers; labels may be numbers or strings (mapped as the module
    docstring says).

    Returns ``(X, y)``: X float64 C-contiguous (n, d), y int64 0..K-1; with
    ``return_classes=True`` ``(X, y, classes)``, where ``classes[k]`` is the label as written
    in the file for code k (so ``classes[learner.predict(X)]`` maps predictions back).
    Raises ValueError naming the file and line number of the first bad line (wrong
    field count, non-numeric or missing feature, missing label).
    """
    import pandas as pd

    path = _check_file(path)
    name = display(path)
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter=delimiter)
        first, first_line = None, 0
        for row in reader:
            if any(f.strip() for f in row):
                first, first_line = row, reader.line_num
                break
    if first is None:
        raise ValueError(f"{name}: the file holds no data.")
    if header == "auto":
        has_header = not any(_is_number(f) for f in first)
    elif isinstance(header, bool):
        has_header = header
    else:
        raise ValueError(f"header must be True, False or 'auto'; got {header!r}.")
    names = [f.strip() for f in first] if has_header else None
    n_cols = len(first)
    lab = _label_index(label_column, names, n_cols, name)
    try:
        with _open_text(path) as fh:
            df = pd.read_csv(
                fh,
                sep=delimiter,
                header=None,
                skiprows=first_line if has_header else first_line - 1,
                skip_blank_lines=True,
                dtype={lab: str},
                keep_default_na=False,
                na_values=[""],
                engine="c",
                low_memory=False,
            )
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError):
        df = None
    ok = df is not None and df.shape[1] == n_cols
    if ok:
        feat = df.drop(columns=df.columns[lab])
        ok = all(_numeric_dtype(dt) for dt in feat.dtypes) and df.shape[0] > 0
    if ok:
        X = feat.to_numpy(dtype=np.float64)
        y_text = df.iloc[:, lab]
        ok = np.isfinite(X).all() and not y_text.isna().any()
    if not ok:
        n_rows = _scan_csv(path, delimiter, n_cols, lab, has_header)
        if n_rows == 0:
            raise ValueError(f"{name}: the file holds no data rows.")
        raise ValueError(f"{name}: could not parse the file as CSV.")  # pragma: no cover
    y_str = y_text.str.strip().to_numpy(dtype=str)
    if regression:
        try:
            y_raw: np.ndarray = y_str.astype(np.float64)
        except ValueError:
            raise ValueError(f"{name}: the target column holds non-numeric values.") from None
    else:
        try:
            y_raw = y_str.astype(np.int64)
        except ValueError:
            try:
                y_raw = y_str.astype(np.float64)
            except ValueError:
                y_raw = y_str
    y = encode_labels(y_raw, name, classes=classes, regression=regression)
    if return_classes:
        return np.ascontiguousarray(X), y, label_names(y_raw, y, classes, regression)
    return np.ascontiguousarray(X), y


def label_names(y_raw: np.ndarray, y: np.ndarray, classes: Sequence[Any] | None, regression: bool) -> np.ndarray:
    """The original label of each code 0..K-1 (``classes`` if given; a code never seen names itself)."""
    if regression:
        return np.zeros(0)
    if classes is not None:
        return np.asarray(list(classes))
    K = int(y.max()) + 1 if y.size else 0
    first = np.unique(y, return_index=True)[1]
    names = np.empty(K, dtype=y_raw.dtype if y_raw.dtype != object else object)
    if np.issubdtype(names.dtype, np.number):
        names[:] = np.arange(K)
    names[y[first]] = y_raw[first]
    return names


def _scan_csv(path: Path, delimiter: str, n_cols: int, lab: int, has_header: bool) -> int:
    """Walk a CSV file line by line and raise a ValueError at the first malformed line.

    Returns the number of data rows if none is malformed.
    """
    name = display(path)
    seen_header = not has_header
    n_rows = 0
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter=delimiter)
        for row in reader:
            lineno = reader.line_num
            if not any(f.strip() for f in row):
                continue
            if not seen_header:
                seen_header = True
                continue
            if len(row) != n_cols:
                raise ValueError(f"{name}, line {lineno}: expected {n_cols} fields, found {len(row)}.")
            for j, field in enumerate(row):
                if j == lab:
                    if not field.strip():
                        raise ValueError(f"{name}, line {lineno}, column {j + 1}: the label is missing.")
                    continue
                if not _is_number(field):
                    raise ValueError(
                        f"{name}, line {lineno}, column {j + 1}: {field.strip()!r} is not a finite number."
                    )
            n_rows += 1
    return n_rows


# ------------------------------------------------------------------ Parquet


def load_parquet(
    path: PathLike,
    label_column: str | int | None = None,
    classes: Sequence[Any] | None = None,
    regression: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Load a Parquet table (pandas + pyarrow): one example a row, one label column.

    ``label_column``: a column name or position; None picks the column named
    "label", else "y", else the last column. All other columns are features and
    must be numeric (bool allowed) and finite.

    Returns ``(X, y)``: X float64 C-contiguous (n, d), y int64 0..K-1 (labels mapped
    as the module docstring says). Raises ValueError naming the file and the bad
    column or row.
    """
    import pandas as pd

    path = _check_file(path)
    name = display(path)
    try:
        df = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several exception types for bad files
        raise ValueError(f"{name}: not a readable Parquet file ({exc}).") from None
    cols = [str(c) for c in df.columns]
    if len(cols) < 2:
        raise ValueError(f"{name}: expected feature columns and a label column; found columns {cols}.")
    if label_column is None:
        lab = cols.index("label") if "label" in cols else cols.index("y") if "y" in cols else len(cols) - 1
    elif isinstance(label_column, str):
        if label_column not in cols:
            raise ValueError(f"{name}: no column named {label_column!r}; the columns are {cols}.")
        lab = cols.index(label_column)
    else:
        lab = _label_index(int(label_column), None, len(cols), name)
    feat = df.drop(columns=df.columns[lab])
    for col, dt in feat.dtypes.items():
        if not (_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt)):
            raise ValueError(f"{name}: feature column {str(col)!r} is not numeric (dtype {dt}).")
    X = _dense_features(feat.to_numpy(dtype=np.float64, na_value=np.nan), name)
    y_col = df.iloc[:, lab]
    if y_col.isna().any():
        row = int(np.flatnonzero(y_col.isna().to_numpy())[0])
        raise ValueError(f"{name}: the label in row {row} is missing.")
    y = encode_labels(y_col.to_numpy(), name, classes=classes, regression=regression)
    return X, y
