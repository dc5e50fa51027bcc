"""Streaming VW text (datasets.vw_stream, kernels.vwtext): the chunks are the Python readers' examples
hashed by CandidateRounds.from_features, bit for bit, whatever the chunk size, the block size or the
compression; limits and malformed lines are refused naming the file and line."""

import bz2
import gzip
import lzma
from pathlib import Path

import numpy as np
import pytest

from noisyfeedback.catalogue import CandidateRounds
from noisyfeedback.datasets import vw_stream
from noisyfeedback.datasets.vw_adf import detect_vw_format, read_vw_adf, read_vw_cb_as_adf, read_vw_ccb
from noisyfeedback.datasets.vw_stream import count_vw, stream_vw

DATA = Path(__file__).resolve().parents[1] / "data" / "vw"
CB_ADF = ["cb_adf_sm.data", "cb_test.ldf", "cb_test_medium.ldf", "cb_test_non_binary_costs.ldf",
          "cb_test_nonewline.ldf", "cb_test_with_empty_shared_feature.ldf", "cb_features_w_zero_vals.dat",
          "cb_load.dat"]
CB = ["cb_explore_cover.dat"]


def _canon(H):
    return H.indptr, H.hashes, H.values, [H.namespaces[i] for i in H.ns]


def _reference(path, fmt):
    if fmt == "cb":
        exs, _ = read_vw_cb_as_adf(path)
    else:
        exs = read_vw_adf(path)
    rounds = CandidateRounds.from_features([e.shared for e in exs], [e.actions for e in exs])
    labels = np.array([-1 if e.label is None else e.label.index for e in exs])
    costs = np.array([0.0 if e.label is None else e.label.cost for e in exs])
    return rounds, labels, costs


def _assert_same(path, fmt, **kw):
    ref, labels, costs = _reference(path, fmt)
    i0 = 0
    for c in stream_vw(path, fmt, **kw):
        sub = ref.take(np.arange(i0, i0 + c.n))
        for a, b in ((sub.context, c.rounds.context), (sub.items, c.rounds.items)):
            A, B = _canon(a), _canon(b)
            assert np.array_equal(A[0], B[0]) and np.array_equal(A[1], B[1]) and A[3] == B[3]
            assert np.array_equal(A[2], B[2]) and np.array_equal(np.signbit(A[2]), np.signbit(B[2]))
        assert np.array_equal(sub.offsets, c.rounds.offsets)
        assert np.array_equal(c.actions, labels[i0:i0 + c.n])
        assert np.array_equal(c.costs, costs[i0:i0 + c.n])
        i0 += c.n
    assert i0 == ref.n_rounds > 0


@pytest.mark.parametrize("name", CB_ADF + CB)
@pytest.mark.parametrize("chunk_rows", [1, 7, 100_000])
def test_chunks_are_the_python_readers_examples_hashed(name, chunk_rows):
    path = DATA / name
    _assert_same(path, detect_vw_format(path), chunk_rows=chunk_rows)


def test_examples_across_read_blocks_and_compression(tmp_path, monkeypatch):
    src = (DATA / "cb_load.dat").read_bytes()
    monkeypatch.setattr(vw_stream, "BLOCK_BYTES", 97)  # every example spans several reads
    _assert_same(DATA / "cb_load.dat", "cb_adf", chunk_rows=5)
    for opener, sfx in ((gzip.open, "gz"), (bz2.open, "bz2"), (lzma.open, "xz")):
        p = tmp_path / f"log.vw.{sfx}"
        with opener(p, "wb") as fh:
            fh.write(src)
        a = [c.rounds.items.hashes for c in stream_vw(p, chunk_rows=50)]
        b = [c.rounds.items.hashes for c in stream_vw(DATA / "cb_load.dat", chunk_rows=50)]
        assert len(a) == len(b) == 3 and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_numbers_strings_and_repeats_as_the_python_reader(tmp_path):
    p = tmp_path / "n.vw"
    p.write_text("shared |U a:1e-30 b:0.1234567890123456789 c:123456789012345678901 d:-0 e:7e300 |V:0.5 a a:2\n"
                 "0:-1:0.25 |I city:paris x:.5 x:+1.25E+2 0042 'tag\n|I y |U z:3\n\n"
                 "shared\t|W q\n1:2:1 |I y:1\n")
    _assert_same(p, "cb_adf", chunk_rows=1)
    c = next(stream_vw(p, "cb_adf"))
    assert c.costs.tolist() == [-1.0, 2.0] and c.probabilities.tolist() == [0.25, 1.0]


def test_cb_multi_cost_lines():
    chunks = list(stream_vw(DATA / "cb_multi_cost.dat"))
    c = chunks[0]
    assert c.actions.tolist() == [0, 1, 2, 3, 1] and c.costs.tolist() == [1.0, 2.0, 3.0, 4.0, 2.0]
    assert c.probabilities.tolist() == [1.0, 1.0, 1.0, 1.0, 0.7] and c.rounds.sizes.tolist() == [4] * 5


@pytest.mark.parametrize("name, n", [("ccb_test.dat", 24), ("ccb_test_interactions.dat", 8),
                                     ("ccb_zero_value_features.dat", 3), ("ccb_reuse_small.data", 4)])
def test_ccb_streams_every_example(name, n):
    assert count_vw(DATA / name, chunk_rows=5)[0] == n == len(read_vw_ccb(DATA / name))


@pytest.mark.parametrize("text, fmt, line, words", [
    ("shared |u a\n|a x\n0:-1:2 |a y\n", "cb_adf", 3, "probability in '0:-1:2'"),
    ("shared |u a\n0:-1:0.5 |a x\n0:-1:0.5 |a y\n", "cb_adf", 3, "second labelled"),
    ("|a x\n\n|a x:1e999\n", "cb_adf", 3, "value of feature 'x:1e999'"),
    ("|a x:s:2 y:inf\n", "cb_adf", 1, "'y:inf'"),
    ("|a :1\n", "cb_adf", 1, "no name"),
    ("1:0:0.5 |a x\n2:0:0.5 |a x x:s\n", "cb", 2, "string value"),
    ("1:0:0.5 |a x\n0:0:0.5 |a x\n", "cb", 2, "1-based"),
    ("1:0:0.5 |a x\n1:0:0.5 2:1:0.5 |a x\n", "cb", 2, "second"),
    ("1:0:0.5 a x\n", "cb", 1, "no '|'"),
    ("shared |u a\n\n", "cb_adf", 1, "no action lines"),
])
def test_malformed_lines_name_file_and_line(tmp_path, text, fmt, line, words):
    p = tmp_path / "bad.vw"
    p.write_text(text)
    with pytest.raises(ValueError) as e:
        list(stream_vw(p, fmt, chunk_rows=1))
    assert f"bad.vw, line {line}:" in str(e.value) and words in str(e.value)


def test_limits_refused_before_allocating(tmp_path, monkeypatch):
    p = tmp_path / "f.vw"
    p.write_bytes(b"1000000000:-1:0.5 | a b\n")
    with pytest.raises(ValueError, match=r"f.vw, line 1: the action in '1000000000:-1:0.5' is beyond"):
        list(stream_vw(p))
    with pytest.raises(ValueError, match="beyond the 4 actions given"):
        list(stream_vw(p, "cb", n_actions=4))
    monkeypatch.setattr(vw_stream, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(vw_stream, "BLOCK_BYTES", 256)
    p.write_text("1:0:0.5 |a x\n1:0:0.5 |a " + "y " * 5000 + "\n")
    with pytest.raises(ValueError, match="f.vw, line 2: the line is longer than 1000 bytes"):
        list(stream_vw(p, "cb", n_actions=1))
    monkeypatch.setattr(vw_stream, "MAX_EXAMPLE_BYTES", 2000)
    p.write_text("|a x\n\n" + "|a y\n" * 1000)
    with pytest.raises(ValueError, match="f.vw, line 3: the example starting here is longer than 2000"):
        list(stream_vw(p, "cb_adf"))
    p.write_bytes(b"|a x\n\n|a \xff\n")
    with pytest.raises(ValueError, match="f.vw, line 3: the file is not UTF-8"):
        list(stream_vw(p, "cb_adf"))


def test_the_common_stream_interface_reads_vw_text():
    from noisyfeedback.datasets import stream_log

    chunks = list(stream_log([DATA / "cb_test.ldf", DATA / "cb_load.dat"], format="vw", chunk_rows=50))
    assert [(c.start, c.n) for c in chunks] == [(0, 3), (3, 50), (53, 50), (103, 13)]
    assert [c.n for c in stream_log(DATA / "cb_multi_cost.dat", format="vw_cb", chunk_rows=2)] == [2, 2, 1]


def test_too_many_namespaces_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(vw_stream, "MAX_NAMESPACES", 3)
    p = tmp_path / "ns.vw"
    p.write_text("|a x |b y\n\n|a x |c y |d z\n")
    with pytest.raises(ValueError, match="ns.vw, line 3: more than 3 distinct namespace names"):
        list(stream_vw(p, "cb_adf"))


def test_read_ahead_keeps_the_order_raises_in_place_and_stops_with_its_caller():
    """The parser's thread (read_ahead) changes nothing a caller sees: the same items in order, an error
    after the items before it, and a caller that stops early stops the thread and closes the reader."""
    import threading
    import time

    from noisyfeedback.datasets.vw_stream import read_ahead

    closed = []

    def numbers(n, fail_at=-1):
        try:
            for i in range(n):
                if i == fail_at:
                    raise ValueError(f"bad item {i}")
                yield i
        finally:
            closed.append(n)

    assert list(read_ahead(numbers(50))) == list(range(50)) and closed == [50]
    got = []
    with pytest.raises(ValueError, match="bad item 3"):
        for i in read_ahead(numbers(10, fail_at=3)):
            got.append(i)
    assert got == [0, 1, 2]
    early = read_ahead(numbers(1000), poll=0.01)
    assert next(early) == 0
    early.close()
    for _ in range(500):
        if 1000 in closed and not any(t.name == "nf-vw-reader" for t in threading.enumerate()):
            break
        time.sleep(0.01)
    assert 1000 in closed and not any(t.name == "nf-vw-reader" for t in threading.enumerate())
