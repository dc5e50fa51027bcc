"""Vowpal Wabbit text logs of any size, read in fixed-size chunks of rounds with bounded memory.

`stream_vw` reads ``--cb`` (one example a line, several ``action:cost[:probability]`` words
allowed, as VW's multi-cost lines), ``--cb_adf`` (blocks of lines) and ``--ccb_explore_adf`` text,
plain or gzip/bzip2/xz compressed (recognised by their first bytes), and yields `VWChunk`\\ s of
``chunk_rows`` examples (the last one shorter): the rounds in the catalogue learners' arrays (features
hashed as `noisyfeedback.hashing` hashes the dicts of `noisyfeedback.datasets.vw_adf`, so the
bits are those of ``CandidateRounds.from_features`` on the examples the Python readers return) and the
logged labels. cb and cb_adf are parsed by compiled code over the file's bytes
(`noisyfeedback.kernels.vwtext`), a block of at most ``BLOCK_BYTES`` at a time, on a thread of their
own one chunk ahead of the caller (as VW's parser thread: the next chunk is parsed while the caller
learns from or scores this one; the same chunks in the same order); ccb examples are
parsed by the Python reader one example at a time. Memory is a few blocks plus three chunks, whatever
the size of the file; the chunks are the same bits whatever ``chunk_rows`` is.

**Limits** (each refused with the file and line before anything is allocated for it):

- a line longer than ``max_line_bytes`` (default `MAX_LINE_BYTES`, 1 MiB) or a multi-line
  example longer than ``max_example_bytes`` (default `MAX_EXAMPLE_BYTES`, 8 MiB);
- a cb action number above the number of actions given (``n_actions``, VW's ``--cb K``), or when it
  is not given above ``max_actions`` (default `MAX_CB_ACTIONS`, 10,000): a cb example carries
  one candidate per action, so the largest action number sets what every example allocates;
- more than `MAX_NAMESPACES` distinct namespace names (the learners keep a table of namespace
  pairs for ``-q``).

**Labels.** cb_adf: ``0:cost:probability`` on the chosen action's line (index = its position in the
example). cb: the first ``action:cost:probability`` word is the logged choice (1-based action; 0-based
in the chunk); ``action:cost`` and ``action`` words (the costs VW's multi-cost lines carry for other
actions) are checked and otherwise ignored; a line without a probability is unlabelled (action -1).
ccb: per slot, the chosen action, its cost and probability.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import queue
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

__all__ = ["VWChunk", "stream_vw", "count_vw", "MAX_LINE_BYTES", "MAX_EXAMPLE_BYTES", "MAX_CB_ACTIONS",
           "MAX_NAMESPACES", "BLOCK_BYTES", "CHUNK_ROWS"]

#: the longest line accepted (bytes, without its end)
MAX_LINE_BYTES = 1 << 20
#: the longest multi-line (cb_adf, ccb) example accepted (bytes)
MAX_EXAMPLE_BYTES = 1 << 23
#: the largest cb action number accepted when the number of actions is not given
MAX_CB_ACTIONS = 10_000
#: the most distinct namespace names in one log
MAX_NAMESPACES = 1024
#: bytes read from the file at a time
BLOCK_BYTES = 1 << 20
#: examples per chunk by default
CHUNK_ROWS = 4096

_FORMATS = ("cb", "cb_adf", "ccb")


@dataclass
class VWChunk:
    """Consecutive examples of a VW log: ``rounds`` (CandidateRounds, hashed; ccb: the shared features
    and the actions), and per example the logged ``actions`` (index in the example's candidate list,
    0-based; −1 unlabelled), ``costs`` and ``probabilities`` (0 where unlabelled); ``start`` is the
    0-based number of the chunk's first example in the log. ccb chunks also hold ``slots``: per
    example (n, S) chosen actions, costs and probabilities (S the most slots of the chunk, −1/0 padding)
    and ``n_slots`` (n,)."""

    rounds: Any
    actions: np.ndarray
    costs: np.ndarray
    probabilities: np.ndarray
    start: int
    slots: tuple | None = None

    @property
    def n(self) -> int:
        return int(self.actions.shape[0])

    @property
    def labelled(self) -> np.ndarray:
        return self.actions >= 0


_MESSAGES = {
    1: "the line is longer than {max_line} bytes (the documented maximum; raise max_line_bytes to read it)",
    2: "the example starting here is longer than {max_example} bytes (the documented maximum; raise "
       "max_example_bytes to read it)",
    3: "no '|' before the features",
    4: "the 'shared' line must be the first line of an example",
    5: "a shared line carries no cost",
    6: "a 'ccb' line in a cb_adf file (read it as ccb)",
    7: "expected at most one label '0:cost:probability' before '|'",
    8: "a second labelled action line in one example (the first is action {s})",
    9: "the label {tok} is not 'action:cost:probability'",
    10: "the label {tok} does not start with a non-negative action number",
    11: "the label {tok} is not 'action:cost:probability' with numbers",
    12: "the cost in {tok} is not finite",
    13: "the probability in {tok} must be in (0, 1]",
    14: "a namespace name is empty before ':' in {tok}",
    15: "the namespace scale in {tok} is not a finite number",
    16: "the feature {tok} has no name (anonymous features are not supported)",
    17: "the value of feature {tok} times its namespace scale is not finite",
    18: "the value of feature {tok} is neither a finite number nor a string value",
    19: "a feature appears twice in one namespace with a string value, which a feature dict cannot hold",
    20: "an example with a shared line and no action lines",
    21: "a multi-line (cb_adf/ccb) line in a cb file",
    22: "the label {tok} must start with a 1-based action number",
    23: "the action in {tok} is beyond {limit}",
    24: "a second 'action:cost:probability' label on one cb line ({tok}); one logged choice per line",
    25: "more than {max_ns} distinct namespace names",
}


def _open_binary(path: Path):
    with open(path, "rb") as fh:
        head = fh.read(6)
    if head[:2] == b"\x1f\x8b":
        return gzip.open(path, "rb")
    if head[:3] == b"BZh":
        return bz2.open(path, "rb")
    if head[:6] == b"\xfd7zXZ\x00":
        return lzma.open(path, "rb")
    return open(path, "rb")


_READ_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)


class _Reader:
    """A file's bytes in blocks, with the line number of the first pending byte."""

    def __init__(self, path: Path, name: str):
        self.name = name
        self.fh = _open_binary(path)
        self.pending = b""
        self.eof = False
        self.line = 1
        self.first = True

    def more(self, nbytes: int) -> None:
        try:
            got = self.fh.read(nbytes)
        except _READ_ERRORS as exc:
            why = ("is truncated (the compressed stream ends early)"
                   if isinstance(exc, EOFError) or "end-of-stream" in str(exc) or "truncated" in str(exc).lower()
                   else f"cannot be read ({exc})")
            lineno = self.line + self.pending.count(b"\n")
            raise ValueError(f"{self.name}, line {lineno}: the file {why}.") from None
        if self.first:
            self.first = False
            if got.startswith(b"\xef\xbb\xbf"):
                got = got[3:]
        if not got:
            self.eof = True
        self.pending = self.pending + got if self.pending else got

    def consume(self, n: int) -> None:
        self.line += self.pending.count(b"\n", 0, n)
        self.pending = self.pending[n:]

    def where(self, offset: int) -> tuple[int, str]:
        """(line number, the line's text for a message) of the line starting at ``offset`` of pending."""
        lineno = self.line + self.pending.count(b"\n", 0, offset)
        end = self.pending.find(b"\n", offset, offset + 4096)
        text = self.pending[offset:end if end >= 0 else offset + 200].decode("utf-8", "replace")
        return lineno, text

    def close(self) -> None:
        self.fh.close()


def _fail(reader: _Reader, offset: int, msg: str) -> ValueError:
    lineno, text = reader.where(offset)
    return ValueError(f"{reader.name}, line {lineno}: {msg} (in {text.strip()[:60]!r}).")


def _check_utf8(reader: _Reader, stop: int) -> None:
    try:
        reader.pending[:stop].decode("utf-8")
    except UnicodeDecodeError as e:
        lineno = reader.line + reader.pending.count(b"\n", 0, e.start)
        raise ValueError(f"{reader.name}, line {lineno}: the file is not UTF-8 text.") from None


def _source(source) -> tuple[Path, str]:
    from ._common import display
    from .loaders import _check_file

    return _check_file(source), display(source)


def detect_format(source: str | os.PathLike) -> str:
    """``"ccb"``, ``"cb_adf"`` or ``"cb"`` from the first lines of a (possibly compressed) VW file
    (`noisyfeedback.datasets.vw_adf.detect_vw_format` on at most 1 MiB)."""
    from .vw_adf import detect_vw_format

    path, name = _source(source)
    fh = _open_binary(path)
    try:
        head = fh.read(1 << 20)
    except _READ_ERRORS:
        head = b""
    finally:
        fh.close()
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    lines = head.decode("utf-8", "replace").split("\n")
    if len(head) == 1 << 20 and len(lines) > 1:
        lines = lines[:-1]
    try:
        return detect_vw_format(lines)
    except ValueError:
        raise ValueError(f"{name}: no examples.") from None


def _stream_adf_cb(path: Path, name: str, adf: bool, chunk_rows: int, k: int, k_check: int, max_line: int,
                   max_example: int, top_out: list | None = None) -> Iterator[VWChunk]:
    from ..catalogue import CandidateRounds
    from ..hashing import HashedRows, feature_hash, namespace_hash
    from ..kernels.vwtext import new_ns_table, ns_count, ns_register, vw_parse, vw_scan

    reader = _Reader(path, name)
    ns_tab = new_ns_table()
    ns_new = np.zeros((MAX_NAMESPACES, 2), np.int64)
    names: list[str] = []
    scan = np.zeros(8, np.int64)
    err = np.zeros(4, np.int64)
    counts = np.zeros(3, np.int64)
    pieces: list[tuple] = []
    have = 0
    start = 0
    if not adf:
        a_id = ns_register(ns_tab, ns_new, namespace_hash("action"))
        names.append("action")
        a_hash = np.array([feature_hash(str(j), namespace_hash("action")) for j in range(k)], np.int64) \
            if k > 0 else np.zeros(0, np.int64)

    def emit(pcs: list[tuple], first: int) -> VWChunk:
        n = sum(p[0] for p in pcs)
        if len(pcs) == 1:
            _, ci, ch, cv, cn, off, ii, ih, iv, inn, la, lc, lp = pcs[0]
        else:
            ci = _cat_indptr([p[1] for p in pcs])
            ch, cv, cn = (np.concatenate([p[j] for p in pcs]) for j in (2, 3, 4))
            if adf:  # (cb: the items are the actions, made below)
                off = _cat_indptr([p[5] for p in pcs])
                ii = _cat_indptr([p[6] for p in pcs])
            ih, iv, inn, la, lc, lp = (np.concatenate([p[j] for p in pcs]) for j in (7, 8, 9, 10, 11, 12))
        ns_t = tuple(names)
        if not adf:
            ii = np.arange(n * k + 1, dtype=np.int64)
            ih = np.tile(a_hash, n)
            iv = np.ones(n * k)
            inn = np.full(n * k, a_id, np.int64)
            off = np.arange(0, n * k + 1, k, dtype=np.int64)
        rounds = CandidateRounds(HashedRows(ci, ch, cv, cn, ns_t), HashedRows(ii, ih, iv, inn, ns_t), off)
        return VWChunk(rounds, la, lc, lp, first)

    try:
        while True:
            want = chunk_rows - have
            if not reader.eof and len(reader.pending) < BLOCK_BYTES:
                reader.more(BLOCK_BYTES)
            buf = np.frombuffer(reader.pending, np.uint8)
            vw_scan(buf, 0, buf.shape[0], reader.eof, adf, want, max_line, max_example, scan)
            stop, n_ex, n_lines, n_tok, max_tok, code, at = (int(x) for x in scan[:7])
            if code:
                raise _fail(reader, at, _MESSAGES[code].format(max_line=max_line, max_example=max_example))
            if n_ex == 0:
                if reader.eof:
                    if stop:
                        reader.consume(stop)
                    break
                if len(reader.pending) >= BLOCK_BYTES:  # a long example: read more before parsing
                    reader.more(max(BLOCK_BYTES, len(reader.pending)))
                continue
            _check_utf8(reader, stop)
            nt = max(n_tok, 1)
            ci = np.empty(n_ex + 1, np.int64)
            ch, cv, cn = np.empty(nt, np.int64), np.empty(nt), np.empty(nt, np.int64)
            nl = n_lines if adf else 0
            ii = np.empty(nl + 1, np.int64)
            ih, iv, inn = (np.empty(nt if adf else 0, np.int64), np.empty(nt if adf else 0),
                           np.empty(nt if adf else 0, np.int64))
            off = np.empty(n_ex + 1, np.int64)
            la, lc, lp, ll = np.empty(n_ex, np.int64), np.empty(n_ex), np.empty(n_ex), np.empty(n_ex, np.int64)
            n_before = ns_count(ns_tab)
            got = vw_parse(buf, 0, stop, adf, k_check, max(max_tok, 1), ns_tab, ns_new, ci, ch, cv, cn, ii, ih, iv,
                           inn, off, la, lc, lp, ll, err, counts)
            if got < 0:
                code, at, s, e = (int(x) for x in err)
                tok = repr(bytes(reader.pending[s:e]).decode("utf-8", "replace")) if e > s else ""
                limit = (f"the {k} actions given" if k > 0 else
                         f"the {k_check} actions accepted when the number of actions is not given (max_actions)")
                raise _fail(reader, at, _MESSAGES[code].format(tok=tok, s=s, limit=limit, max_ns=MAX_NAMESPACES))
            for nid in range(n_before, ns_count(ns_tab)):
                s, e = int(ns_new[nid, 0]), int(ns_new[nid, 1])
                names.append(" " if s < 0 else reader.pending[s:e].decode("utf-8"))
            nc, ni = int(counts[0]), int(counts[1])
            have += n_ex
            reader.consume(stop)
            if top_out is not None:  # only the largest action is wanted
                have = 0
                continue
            pieces.append((n_ex, ci, ch[:nc].copy(), cv[:nc].copy(), cn[:nc].copy(), off,
                           ii[:int(off[n_ex]) + 1 if adf else 1], ih[:ni].copy(), iv[:ni].copy(), inn[:ni].copy(),
                           la, lc, lp))
            del ch, cv, cn, ih, iv, inn
            if have >= chunk_rows:
                yield emit(pieces, start)
                start += have
                pieces, have = [], 0
        if pieces:
            yield emit(pieces, start)
        if top_out is not None:
            top_out.append(int(counts[2]))
    finally:
        reader.close()


def _cat_indptr(parts: list[np.ndarray]) -> np.ndarray:
    out = [parts[0]]
    base = parts[0][-1]
    for p in parts[1:]:
        out.append(p[1:] + base)
        base = base + p[-1]
    return np.concatenate(out)


def _ccb_lines(path: Path, name: str, max_line: int) -> Iterator[tuple[int, str]]:
    fh = _open_binary(path)
    try:
        lineno = 0
        while True:
            try:
                raw = fh.readline(max_line + 2)
            except _READ_ERRORS as exc:
                raise ValueError(f"{name}, line {lineno + 1}: the file cannot be read ({exc}).") from None
            if not raw:
                return
            lineno += 1
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            body = raw.rstrip(b"\r\n")
            if len(body) > max_line:
                text = body[:60].decode("utf-8", "replace")
                raise ValueError(f"{name}, line {lineno}: {_MESSAGES[1].format(max_line=max_line)} (in {text!r}).")
            try:
                yield lineno, body.decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"{name}, line {lineno}: the file is not UTF-8 text.") from None
    finally:
        fh.close()


def _stream_ccb(path: Path, name: str, chunk_rows: int, max_line: int, max_example: int) -> Iterator[VWChunk]:
    from ..catalogue import CandidateRounds
    from ..hashing import FeatureHasher
    from .vw_adf import read_vw_ccb

    hasher = FeatureHasher()
    start = 0
    batch: list = []

    def blocks():
        block: list[str] = []
        size = 0
        first = 0
        for lineno, line in _ccb_lines(path, name, max_line):
            if line.strip():
                if not block:
                    first = lineno
                block.append(line)
                size += len(line) + 1
                if size > max_example:
                    raise ValueError(f"{name}, line {first}: {_MESSAGES[2].format(max_example=max_example)}.")
            elif block:
                yield first, block
                block, size = [], 0
        if block:
            yield first, block

    def emit(exs: list) -> VWChunk:
        rounds = CandidateRounds.from_features([e.shared for e in exs], [e.actions for e in exs], hasher=hasher)
        rounds = CandidateRounds(rounds.context, rounds.items, rounds.offsets)
        S = max(len(e.slots) for e in exs)
        n = len(exs)
        sa = np.full((n, S), -1, np.int64)
        sc = np.zeros((n, S))
        sp_ = np.zeros((n, S))
        ns = np.zeros(n, np.int64)
        for i, e in enumerate(exs):
            ns[i] = len(e.slots)
            for s, slot in enumerate(e.slots):
                if slot.label is not None:
                    sa[i, s], sc[i, s], sp_[i, s] = slot.label.action, slot.label.cost, slot.label.probability
        return VWChunk(rounds, sa[:, 0].copy(), sc[:, 0].copy(), sp_[:, 0].copy(), start, (sa, sc, sp_, ns))

    for first, block in blocks():
        try:
            ex = read_vw_ccb(block)[0]
        except ValueError as exc:  # '<lines>, line k: ...' -> the file's line
            msg = str(exc)
            head, _, rest = msg.partition(": ")
            k = int(head.rsplit(" ", 1)[-1]) if head.startswith("<lines>, line ") else 1
            raise ValueError(f"{name}, line {first + k - 1}: {rest}") from None
        batch.append(ex)
        if len(batch) == chunk_rows:
            yield emit(batch)
            start += len(batch)
            batch = []
    if batch:
        yield emit(batch)


def stream_vw(source: str | os.PathLike, format: str | None = None, *, chunk_rows: int = CHUNK_ROWS,
              n_actions: int | None = None, max_actions: int | None = None, max_line_bytes: int | None = None,
              max_example_bytes: int | None = None) -> Iterator[VWChunk]:
    """Chunks of ``chunk_rows`` examples of a VW text file (module doc). ``format``: cb, cb_adf or ccb
    (None: detected from the first lines). cb: ``n_actions`` (VW's ``--cb K``) gives the number of
    actions; without it the file is read twice, first for its largest action number (at most
    ``max_actions``).

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "log.vw")
    >>> _ = open(p, "w").write("shared |u a\\n|i x\\n0:1:0.5 |i y\\n\\n|i z\\n")
    >>> [(c.n, c.actions.tolist(), c.costs.tolist()) for c in stream_vw(p, chunk_rows=1)]
    [(1, [1], [1.0]), (1, [-1], [0.0])]
    """
    path, name = _source(source)
    max_actions = MAX_CB_ACTIONS if max_actions is None else max_actions
    max_line_bytes = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
    max_example_bytes = MAX_EXAMPLE_BYTES if max_example_bytes is None else max_example_bytes
    for label, v in (("chunk_rows", chunk_rows), ("max_line_bytes", max_line_bytes),
                     ("max_example_bytes", max_example_bytes), ("max_actions", max_actions)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"The '{label}' parameter of stream_vw must be an int >= 1. Got {v!r} instead.")
    fmt = detect_format(path) if format is None else format
    if fmt not in _FORMATS:
        raise ValueError(f"The 'format' parameter of stream_vw must be one of {_FORMATS} or None. Got {fmt!r} "
                         "instead.")
    if fmt == "ccb":
        return _stream_ccb(path, name, int(chunk_rows), int(max_line_bytes), int(max_example_bytes))
    if fmt == "cb_adf":
        return read_ahead(_stream_adf_cb(path, name, True, int(chunk_rows), 0, 0, int(max_line_bytes),
                                         int(max_example_bytes)))
    if n_actions is None:
        n_actions = cb_actions(path, max_actions=max_actions, max_line_bytes=max_line_bytes)
    elif isinstance(n_actions, bool) or not isinstance(n_actions, (int, np.integer)) or n_actions < 1:
        raise ValueError(f"The 'n_actions' parameter of stream_vw must be an int >= 1. Got {n_actions!r} instead.")
    return read_ahead(_stream_adf_cb(path, name, False, int(chunk_rows), int(n_actions), int(n_actions),
                                     int(max_line_bytes), int(max_example_bytes)))


def read_ahead(items: Iterator[Any], poll: float = 0.1) -> Iterator[Any]:
    """The items of the generator ``items``, produced one ahead on a thread of their own (the compiled
    parser releases the GIL): the same items in the same order, an error raised after the items before
    it, and the thread stopped (``items`` closed) when the caller stops early.

    >>> list(read_ahead(iter(range(3))))
    [0, 1, 2]
    """
    box: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()

    def put(entry: tuple) -> bool:
        while not stop.is_set():
            try:
                box.put(entry, timeout=poll)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put(("item", item)):
                    return
            put(("end", None))
        except BaseException as exc:  # handed to the caller, raised there
            put(("error", exc))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name="nf-vw-reader", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = box.get()
            if kind == "item":
                yield value
            elif kind == "error":
                raise value
            else:
                return
    finally:
        stop.set()


def cb_actions(source: str | os.PathLike, *, max_actions: int | None = None,
               max_line_bytes: int | None = None) -> int:
    """The largest action number of a cb file (one pass; actions above ``max_actions``, default
    `MAX_CB_ACTIONS`, refused)."""
    path, name = _source(source)
    max_actions = MAX_CB_ACTIONS if max_actions is None else max_actions
    max_line_bytes = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
    top: list[int] = []
    for _ in _stream_adf_cb(path, name, False, 1 << 16, 0, int(max_actions), int(max_line_bytes), 1,
                            top_out=top):
        pass
    K = top[-1] if top else 0
    if K < 1:
        raise ValueError(f"{name}: no labelled line, so the number of actions is unknown.")
    return K


def count_vw(source: str | os.PathLike, format: str | None = None, **options: Any) -> tuple[int, int]:
    """(examples, labelled examples) of a VW file, streamed."""
    n = lab = 0
    for c in stream_vw(source, format, **options):
        n += c.n
        lab += int(c.labelled.sum())
    return n, lab


# ------------------------------------------------------------------ the common streaming interface
def _format_reader(fmt: str | None):
    def read(source: Any, chunk_rows: int, **options: Any) -> Iterator[VWChunk]:
        from .streams import log_files

        start = 0
        for f in log_files(source, (".vw",)):
            n = 0
            for chunk in stream_vw(f, fmt, chunk_rows=chunk_rows, **options):
                chunk.start += start
                n += chunk.n
                yield chunk
            start += n
    return read


def _register_formats() -> None:
    from .streams import register_format

    register_format("vw", _format_reader(None), (".vw",), "vw",
                    "Vowpal Wabbit text: cb, cb_adf or ccb detected from the content (datasets.vw_stream)")
    for fmt in _FORMATS:
        register_format(f"vw_{fmt}", _format_reader(fmt), (), "vw", f"Vowpal Wabbit --{fmt} text")


_register_formats()
