"""stream_log: chunks of a table log, whatever its layout (a file, a directory, a glob, a list, a Dataset),
concatenate to the same bits as reading it whole; bad values name the file and the row of the log."""

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
ds = pytest.importorskip("pyarrow.dataset")

from noisyfeedback.datasets import read_log  # noqa: E402
from noisyfeedback.datasets.streams import FORMATS, LogChunk, log_files, stream_log  # noqa: E402


def _log(n=1000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d)), rng.integers(0, 5, n), rng.random(n), rng.uniform(0.05, 1, n))


def _write_parquet(path, X, a, r, p, row_group_size=97):
    cols = {"action": pa.array(a, pa.int64()), "reward": pa.array(r), "propensity": pa.array(p)}
    cols.update({f"x{j}": pa.array(X[:, j]) for j in range(X.shape[1])})
    pq.write_table(pa.table(cols), path, row_group_size=row_group_size)


def _split(tmp_path, n_files=5, n=1000):
    X, a, r, p = _log(n)
    edges = np.linspace(0, n, n_files + 1).astype(int)
    d = tmp_path / "logs"
    for k in range(n_files):
        lo, hi = edges[k], edges[k + 1]
        (d / f"day={k:02d}").mkdir(parents=True)
        _write_parquet(d / f"day={k:02d}" / "part.parquet", X[lo:hi], a[lo:hi], r[lo:hi], p[lo:hi])
    return d, (X, a, r, p)


def _same(chunks, X, a, r, p, chunk_rows):
    chunks = list(chunks)
    assert all(isinstance(c, LogChunk) and c.kind == "index" for c in chunks)
    assert [len(c) for c in chunks[:-1]] == [chunk_rows] * (len(chunks) - 1) and 0 < len(chunks[-1]) <= chunk_rows
    assert [c.start for c in chunks] == [k * chunk_rows for k in range(len(chunks))]
    np.testing.assert_array_equal(np.concatenate([c.X for c in chunks]), X)
    np.testing.assert_array_equal(np.concatenate([c.actions for c in chunks]), a)
    np.testing.assert_array_equal(np.concatenate([c.rewards for c in chunks]), r)
    np.testing.assert_array_equal(np.concatenate([c.propensities for c in chunks]), p)
    assert chunks[0].feature_names == [f"x{j}" for j in range(X.shape[1])]


@pytest.mark.parametrize("chunk_rows", [1, 64, 333, 5000])
def test_a_file_in_chunks_is_the_file(tmp_path, chunk_rows):
    X, a, r, p = _log()
    _write_parquet(tmp_path / "log.parquet", X, a, r, p)
    _same(stream_log(tmp_path / "log.parquet", chunk_rows=chunk_rows), X, a, r, p, chunk_rows)


def test_directory_glob_list_and_dataset_are_the_concatenated_files(tmp_path):
    d, (X, a, r, p) = _split(tmp_path)
    files = sorted(str(f) for f in d.rglob("*.parquet"))
    assert log_files(d) == files and log_files(str(d / "day=*" / "*.parquet")) == files
    for source in (d, str(d / "day=*" / "*.parquet"), files, ds.dataset(files, format="parquet")):
        _same(stream_log(source, chunk_rows=150), X, a, r, p, 150)
    # a list in another order is read in that order
    back = read_log(files[::-1])
    edges = np.linspace(0, 1000, 6).astype(int)
    order = np.concatenate([np.arange(lo, hi) for lo, hi in zip(edges[:-1], edges[1:])][::-1])
    np.testing.assert_array_equal(back.X, X[order])
    # hive partitioning: the partition column is there by name, not a feature by default
    log = read_log(d, partitioning="hive")
    np.testing.assert_array_equal(log.X, X)
    assert read_log(d, partitioning="hive", features=["x0", "day"]).X[-1, 1] == 4


def test_csv_stream_matches_whole_file_and_reads_text_in_later_blocks(tmp_path):
    X, a, r, p = _log(3000, d=2)
    import pandas as pd

    df = pd.DataFrame({"action": a, "reward": r, "propensity": p, "x0": X[:, 0], "x1": X[:, 1]})
    path = tmp_path / "log.csv"
    df.to_csv(path, index=False, float_format="%.17g")
    _same(stream_log(path, chunk_rows=256), X, a, r, p, 256)
    # a bad cell far into the file (another Arrow block) is named with its row of the log
    df["x1"] = df["x1"].map(repr).astype(object)
    df.loc[2900, "x1"] = "oops"
    df.to_csv(path, index=False, float_format="%.17g")
    assert path.stat().st_size > 2 ** 17
    with pytest.raises(ValueError, match=r"feature column 'x1' holds 'oops', not a number, in data row 2900"):
        list(stream_log(path, chunk_rows=256))


def test_a_bad_value_in_a_later_file_names_the_file_and_the_row_of_the_log(tmp_path):
    d, (X, a, r, p) = _split(tmp_path, n_files=4, n=400)
    bad = d / "day=02" / "part.parquet"
    t = pq.read_table(bad)
    props = t.column("propensity").to_numpy().copy()
    props[7] = 0.0
    pq.write_table(t.set_column(2, "propensity", pa.array(props)), bad)
    with pytest.raises(ValueError, match=r"day=02/part.parquet: column 'propensity' must hold propensities in "
                                         r"\(0, 1\]; data row 207 has 0.0"):
        list(stream_log(d, chunk_rows=64))


def test_refusals(tmp_path):
    X, a, r, p = _log(10)
    _write_parquet(tmp_path / "log.parquet", X, a, r, p)
    with pytest.raises(ValueError, match="chunk_rows"):
        stream_log(tmp_path / "log.parquet", chunk_rows=0)
    with pytest.raises(ValueError, match="unknown log format 'orc'"):
        stream_log(tmp_path / "log.parquet", format="orc")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="cannot tell the log format"):
        stream_log(tmp_path / "notes.txt")
    with pytest.raises(FileNotFoundError, match="matches no file"):
        stream_log(str(tmp_path / "*.pq"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no log file in the directory"):
        stream_log(tmp_path / "empty", format="parquet")
    assert {"parquet", "csv"} <= set(FORMATS)
