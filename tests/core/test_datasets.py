"""Tests of nf.datasets: generators, bundled sets, file loaders, load() and catalog().

Everything runs on tiny files written to tmp_path; nothing here reads ../shared.
"""

from __future__ import annotations

import gzip
import os
import struct
import urllib.error
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import noisyfeedback as nf

D = nf.datasets


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path, monkeypatch):
    """No real ~/.cache or $NOISYFEEDBACK_DATA leaks into a test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv(D.ENV_VAR, raising=False)
    return home


# ----------------------------------------------------------------- helpers


def write_idx(path: Path, arr: np.ndarray, compress: bool = True, magic: bytes | None = None) -> Path:
    arr = np.asarray(arr, dtype=np.uint8)
    header = magic if magic is not None else bytes([0, 0, 0x08, arr.ndim])
    header += b"".join(struct.pack(">I", n) for n in arr.shape)
    data = header + arr.tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    if compress:
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


def write_mnist(directory: Path, n_train=5, n_test=3, seed=0, compress=True, shape=(4, 3)):
    rng = np.random.default_rng(seed)
    out = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        imgs = rng.integers(0, 256, size=(n, *shape), dtype=np.uint8)
        labs = rng.integers(0, 10, size=n, dtype=np.uint8)
        sfx = ".gz" if compress else ""
        write_idx(directory / f"{prefix}-images-idx3-ubyte{sfx}", imgs, compress)
        write_idx(directory / f"{prefix}-labels-idx1-ubyte{sfx}", labs, compress)
        out[prefix] = (imgs, labs)
    return out


def assert_xy(X, y, n=None, d=None, sparse=False):
    if sparse:
        assert sp.issparse(X) and X.format == "csr"
    else:
        assert isinstance(X, np.ndarray) and X.flags.c_contiguous
    assert X.dtype == np.float64 and X.ndim == 2
    assert isinstance(y, np.ndarray) and y.dtype == np.int64 and y.ndim == 1
    assert X.shape[0] == y.shape[0]
    if n is not None:
        assert X.shape[0] == n
    if d is not None:
        assert X.shape[1] == d
    if y.size:
        assert y.min() >= 0


# -------------------------------------------------------------- generators


def test_synsep_is_deterministic_and_keeps_its_output():
    X1, y1 = D.synsep(n_samples=300, seed=5)
    X2, y2 = D.synsep(n_samples=300, seed=5)
    X3, y3 = D.synsep(n_samples=300, seed=6)
    assert np.array_equal(X1, X2) and np.array_equal(y1, y2)
    assert not np.array_equal(X1, X3)
    assert_xy(X1, y1, 300, 400)
    # pinned output for seed 0: other modules and recorded results rely on it
    X, y = D.synsep(n_samples=50, seed=0)
    assert y[:12].tolist() == [1, 6, 8, 2, 2, 6, 5, 5, 7, 0, 2, 3]
    assert np.flatnonzero(X[0])[:8].tolist() == [6, 9, 23, 27, 30, 32, 33, 35]
    assert X.sum() == 2287.0


def test_synsep_structure_matches_spec():
    X, y = D.synsep(n_samples=2000, seed=11)
    assert set(np.unique(X).tolist()) == {0.0, 1.0}
    assert set(y.tolist()) == set(range(9))
    # exactly 20 common words (features 120..399) on in every example
    assert (X[:, 120:].sum(axis=1) == 20).all()
    rare = X[:, :120]
    for k in range(9):
        rows = rare[y == k]
        keywords = np.flatnonzero(rows.any(axis=0))  # ~220 rows: every keyword shows up
        assert 20 <= keywords.size <= 40  # n_k ~ U{20..40}
        # exactly n_k - 5 of the class's keywords on, none outside the keyword set
        assert (rows.sum(axis=1) == keywords.size - 5).all()


def test_synnonsep_is_synsep_with_exactly_5_percent_relabelled():
    for n, seed in ((2000, 3), (1000, 0), (999, 8)):
        X0, y0 = D.synsep(n_samples=n, seed=seed)
        X1, y1 = D.synnonsep(n_samples=n, seed=seed)
        assert np.array_equal(X0, X1)
        assert int((y0 != y1).sum()) == round(0.05 * n)
        assert y1.min() >= 0 and y1.max() <= 8
    Xa, ya = D.synnonsep(n_samples=500, seed=4)
    Xb, yb = D.synnonsep(n_samples=500, seed=4)
    assert np.array_equal(Xa, Xb) and np.array_equal(ya, yb)


def test_generators_through_load():
    X, y = D.load("synsep", n_samples=100, seed=2, normalize=True)
    X0, y0 = D.synsep(n_samples=100, seed=2)
    assert np.array_equal(y, y0)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    np.testing.assert_allclose(X * np.linalg.norm(X0, axis=1, keepdims=True), X0)
    X, y = D.load("SynNonSep", split="all", n_samples=40, seed=1)
    assert_xy(X, y, 40, 400)
    with pytest.raises(ValueError, match="no test split"):
        D.load("synsep", split="test")


# ----------------------------------------------------------------- bundled


@pytest.mark.parametrize(
    "name,shape,k", [("iris", (150, 4), 3), ("digits", (1797, 64), 10), ("wine", (178, 13), 3),
                     ("breast_cancer", (569, 30), 2)]
)
def test_bundled(name, shape, k):
    X, y = getattr(D, name)()
    assert_xy(X, y, *shape)
    assert sorted(set(y.tolist())) == list(range(k))
    X2, y2 = D.load(name)
    X3, _ = D.load(name, split="all")
    assert np.array_equal(X, X2) and np.array_equal(y, y2) and np.array_equal(X, X3)
    Xn, _ = D.load(name, normalize=True)
    np.testing.assert_allclose(np.linalg.norm(Xn, axis=1), 1.0)
    with pytest.raises(ValueError, match="no test split"):
        D.load(name, split="test")
    with pytest.raises(TypeError, match="unexpected keyword"):
        D.load(name, seed=0)


def test_alias_names():
    X, y = D.load("breast-cancer")
    assert X.shape == (569, 30)


# --------------------------------------------------------------------- idx


def test_idx_gz_and_plain(tmp_path):
    data = write_mnist(tmp_path / "gz", compress=True)
    X, y = D.load_idx(tmp_path / "gz/train-images-idx3-ubyte.gz", tmp_path / "gz/train-labels-idx1-ubyte.gz")
    imgs, labs = data["train"]
    assert_xy(X, y, 5, 12)
    np.testing.assert_array_equal(X, imgs.reshape(5, -1) / 255.0)
    np.testing.assert_array_equal(y, labs)
    assert 0.0 <= X.min() and X.max() <= 1.0
    write_mnist(tmp_path / "plain", compress=False)
    Xp, yp = D.load_idx(tmp_path / "plain/train-images-idx3-ubyte", tmp_path / "plain/train-labels-idx1-ubyte")
    np.testing.assert_array_equal(Xp, X)
    Xr, _ = D.load_idx(tmp_path / "gz/train-images-idx3-ubyte.gz", tmp_path / "gz/train-labels-idx1-ubyte.gz",
                       scale=False)
    np.testing.assert_array_equal(Xr, imgs.reshape(5, -1))
    assert D.read_idx(tmp_path / "gz/t10k-images-idx3-ubyte.gz").shape == (3, 4, 3)


@pytest.mark.parametrize("layout", ["subdir", "flat", "plain"])
def test_load_mnist_layouts_and_splits(tmp_path, layout):
    root = tmp_path / "data"
    target = root if layout == "flat" else root / "mnist"
    data = write_mnist(target, compress=layout != "plain")
    X, y = D.load("mnist", data_dir=root)
    assert_xy(X, y, 5, 12)
    np.testing.assert_array_equal(y, data["train"][1])
    Xt, yt = D.load("mnist", split="test", data_dir=root)
    np.testing.assert_array_equal(yt, data["t10k"][1])
    Xa, ya = D.load("mnist", split="all", data_dir=str(root))
    np.testing.assert_array_equal(Xa, np.vstack([X, Xt]))
    np.testing.assert_array_equal(ya, np.concatenate([y, yt]))
    Xn, _ = D.load("mnist", data_dir=root, normalize=True)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    np.testing.assert_allclose(Xn, X / np.where(norms == 0, 1, norms))


def test_fashion_mnist_names(tmp_path):
    data = write_mnist(tmp_path / "fashion-mnist", seed=3)
    for name in ("fashion-mnist", "fashion_mnist", "Fashion-MNIST"):
        X, y = D.load(name, data_dir=tmp_path)
        np.testing.assert_array_equal(y, data["train"][1])
    # MNIST is not taken from the fashion-mnist folder
    with pytest.raises(FileNotFoundError):
        D.load("mnist", data_dir=tmp_path)


def test_idx_malformed(tmp_path):
    imgs = np.zeros((2, 4, 3), np.uint8)
    labs = np.array([1, 2], np.uint8)
    good_i = write_idx(tmp_path / "i.gz", imgs)
    good_l = write_idx(tmp_path / "l.gz", labs)
    bad_magic = write_idx(tmp_path / "badmagic.gz", imgs, magic=b"\x01\x02\x08\x03")
    with pytest.raises(ValueError, match=r"badmagic\.gz.*magic"):
        D.load_idx(bad_magic, good_l)
    # header says 3 images, data holds 2
    trunc = tmp_path / "trunc.gz"
    trunc.write_bytes(gzip.compress(bytes([0, 0, 8, 3]) + struct.pack(">III", 3, 4, 3) + imgs.tobytes()))
    with pytest.raises(ValueError, match=r"trunc\.gz.*size"):
        D.load_idx(trunc, good_l)
    # labels file given as images
    with pytest.raises(ValueError, match=r"l\.gz.*0x00000803"):
        D.load_idx(good_l, good_l)
    three = write_idx(tmp_path / "three.gz", np.array([1, 2, 3], np.uint8))
    with pytest.raises(ValueError, match=r"2 images.*three\.gz.*3 labels"):
        D.load_idx(good_i, three)
    corrupt = tmp_path / "corrupt-images.gz"
    corrupt.write_bytes(gzip.compress(b"x" * 100)[:30])
    with pytest.raises(ValueError, match="corrupt-images"):
        D.read_idx(corrupt)
    short = tmp_path / "short"
    short.write_bytes(b"\x00\x00")
    with pytest.raises(ValueError, match="short"):
        D.read_idx(short)


# -------------------------------------------------------------------- USPS


def write_usps(path: Path, n_train=6, n_test=4, seed=0):
    h5py = pytest.importorskip("h5py")
    rng = np.random.default_rng(seed)
    arrays = {}
    with h5py.File(path, "w") as fh:
        for g, n in (("train", n_train), ("test", n_test)):
            Xg = rng.random((n, 256)).astype(np.float32)
            yg = rng.integers(0, 10, n)
            grp = fh.create_group(g)
            grp["data"] = Xg
            grp["target"] = yg
            arrays[g] = (Xg, yg)
    return arrays


def test_usps(tmp_path):
    (tmp_path / "usps").mkdir()
    arrays = write_usps(tmp_path / "usps" / "usps.h5")
    X, y = D.load("usps", data_dir=tmp_path)
    assert_xy(X, y, 6, 256)
    np.testing.assert_array_equal(X, arrays["train"][0].astype(np.float64))
    np.testing.assert_array_equal(y, arrays["train"][1])
    Xt, yt = D.load("usps", split="test", data_dir=tmp_path)
    assert_xy(Xt, yt, 4, 256)
    Xa, ya = D.load_usps(tmp_path / "usps" / "usps.h5", split="all")
    assert_xy(Xa, ya, 10, 256)
    np.testing.assert_array_equal(ya, np.concatenate([y, yt]))
    # a .h5 path goes through load too
    Xp, _ = D.load(str(tmp_path / "usps" / "usps.h5"), split="test")
    np.testing.assert_array_equal(Xp, Xt)


def test_usps_malformed_and_missing_h5py(tmp_path, monkeypatch):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "usps.h5"
    with h5py.File(path, "w") as fh:
        fh.create_group("train")["data"] = np.zeros((2, 256))
    with pytest.raises(ValueError, match=r"usps\.h5.*train/target"):
        D.load_usps(path)
    monkeypatch.setitem(__import__("sys").modules, "h5py", None)
    with pytest.raises(ImportError, match="pip install h5py"):
        D.load_usps(path)


# ------------------------------------------------------------------ letter


def write_letter(path: Path, n=20_000, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 26, n)
    feats = rng.integers(0, 16, (n, 16))
    lines = [",".join([chr(65 + lab)] + [str(v) for v in f]) for lab, f in zip(labels, feats)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return feats, labels


def test_letter_splits(tmp_path):
    feats, labels = write_letter(tmp_path / "letter" / "letter-recognition.data")
    X, y = D.load("letter", split="all", data_dir=tmp_path)
    assert_xy(X, y, 20_000, 16)
    np.testing.assert_array_equal(X, feats)
    np.testing.assert_array_equal(y, labels)
    assert y.max() <= 25
    Xtr, ytr = D.load("letter", data_dir=tmp_path)
    Xte, yte = D.load("letter", split="test", data_dir=tmp_path)
    assert Xtr.shape == (16_000, 16) and Xte.shape == (4_000, 16)
    np.testing.assert_array_equal(np.vstack([Xtr, Xte]), X)
    np.testing.assert_array_equal(yte, labels[16_000:])


def test_letter_malformed(tmp_path):
    good = "A," + ",".join(["1"] * 16)
    cases = {
        "fields": ([good, good, "B,1,2,3"], r"line 3.*17"),
        "number": ([good, "C," + ",".join(["1"] * 15) + ",x"], r"line 2, field 17.*'x'"),
        "label": (["7," + ",".join(["1"] * 16)], r"line 1.*'7'"),
    }
    for key, (lines, pattern) in cases.items():
        path = tmp_path / f"letter-{key}.data"
        path.write_text("\n".join(lines) + "\n")
        with pytest.raises(ValueError, match=rf"letter-{key}\.data.*{pattern}"):
            D.load_letter(path, split="all")


# ------------------------------------------------------------------ LIBSVM


def test_libsvm_binary_and_multiclass(tmp_path):
    p = tmp_path / "tiny.svm"
    p.write_text("+1 1:0.5 3:2\n-1 2:1\n+1 4:-1.5 # comment\n-1\n")
    X, y = D.load_libsvm(p)
    assert_xy(X, y, 4, sparse=True)
    assert X.indices.dtype == np.int64 and X.has_sorted_indices
    assert y.tolist() == [1, 0, 1, 0]
    np.testing.assert_array_equal(X.toarray()[0], [0.5, 0, 2, 0])
    X2, y2 = D.load(str(p), normalize=True)
    assert sp.issparse(X2)
    norms = np.sqrt(np.asarray(X2.multiply(X2).sum(axis=1))).ravel()
    np.testing.assert_allclose(norms, [1, 1, 1, 0])
    m = tmp_path / "multi.libsvm"
    m.write_text("9 1:1\n2 2:1\n5 1:1 2:1\n2 3:1\n")
    X, y = D.load(m)
    assert y.tolist() == [2, 0, 1, 0]
    Xf, yf = D.load_libsvm(m, n_features=10, classes=[9, 5, 2])
    assert Xf.shape == (4, 10) and yf.tolist() == [0, 2, 1, 2]
    with pytest.raises(ValueError, match="not an integer"):
        r = tmp_path / "reg.txt"
        r.write_text("0.5 1:1\n1.5 2:1\n")
        D.load_libsvm(r)
    Xr, yr = D.load_libsvm(tmp_path / "reg.txt", regression=True)
    assert yr.dtype == np.float64 and yr.tolist() == [0.5, 1.5]


def test_libsvm_malformed(tmp_path):
    p = tmp_path / "bad.svm"
    p.write_text("1 1:1\n-1 2:1\n1 3:abc\n")
    with pytest.raises(ValueError, match=r"bad\.svm, line 3.*3:abc"):
        D.load_libsvm(p)


def test_libsvm_registry(tmp_path):
    d = tmp_path / "rcv1"
    d.mkdir()
    (d / "rcv1_train.binary").write_text("1 5:0.5 47236:1\n-1 3:1\n")
    with open(d / "rcv1_test.binary.bz2", "wb") as fh:
        import bz2

        fh.write(bz2.compress(b"-1 1:1\n-1 2:1\n1 7:1\n"))
    X, y = D.load("rcv1", data_dir=tmp_path)
    assert_xy(X, y, 2, 47_236, sparse=True)
    assert y.tolist() == [1, 0]
    Xt, yt = D.load("rcv1", split="test", data_dir=tmp_path)
    assert Xt.shape == (3, 47_236) and yt.tolist() == [0, 0, 1]
    Xa, ya = D.load("rcv1", split="all", data_dir=tmp_path)
    assert Xa.shape == (5, 47_236) and ya.tolist() == [1, 0, 0, 0, 1]
    # news20 labels 1..20 -> 0..19 even if a split lacks some classes
    (tmp_path / "news20.scale").write_text("3 1:1\n20 2:1\n")
    (tmp_path / "news20.t.scale").write_text("1 1:1\n")
    X, y = D.load("news20", split="all", data_dir=tmp_path)
    assert X.shape == (3, 62_061) and y.tolist() == [2, 19, 0]
    # a LIBSVM file without a known suffix is recognised by its content
    X, y = D.load(tmp_path / "news20.t.scale")
    assert y.tolist() == [0]


# --------------------------------------------------------------- npz / csv


def test_npz(tmp_path):
    rng = np.random.default_rng(0)
    X0 = rng.random((6, 3)).astype(np.float32)
    p = tmp_path / "a.npz"
    np.savez(p, X=X0, y=np.array([0, 2, 1, 2, 0, 1]))
    X, y = D.load(p)
    assert_xy(X, y, 6, 3)
    np.testing.assert_array_equal(X, X0.astype(np.float64))
    assert y.tolist() == [0, 2, 1, 2, 0, 1]
    np.savez(tmp_path / "pm.npz", X=X0, y=np.array([-1, 1, 1, -1, 1, 1]))
    assert D.load_npz(tmp_path / "pm.npz")[1].tolist() == [0, 1, 1, 0, 1, 1]
    np.savez(tmp_path / "s.npz", X=X0, y=np.array(["b", "a", "c", "a", "b", "c"]))
    assert D.load_npz(tmp_path / "s.npz")[1].tolist() == [1, 0, 2, 0, 1, 2]
    assert D.load_npz(tmp_path / "s.npz", classes=["c", "b", "a"])[1].tolist() == [1, 2, 0, 2, 1, 0]
    np.savez(tmp_path / "nokey.npz", data=X0)
    with pytest.raises(ValueError, match=r"nokey\.npz.*'X' and 'y'"):
        D.load_npz(tmp_path / "nokey.npz")
    np.savez(tmp_path / "len.npz", X=X0[:5], y=np.zeros(6, int))
    with pytest.raises(ValueError, match="5 rows"):
        D.load_npz(tmp_path / "len.npz")
    X0[3, 1] = np.nan
    np.savez(tmp_path / "nan.npz", X=X0, y=np.zeros(6, int))
    with pytest.raises(ValueError, match=r"nan\.npz.*row 3"):
        D.load_npz(tmp_path / "nan.npz")


def test_csv(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text("1,2.5,0\n3,4,1\n\n5,6.25,2\n")
    X, y = D.load(p)
    assert_xy(X, y, 3, 2)
    np.testing.assert_array_equal(X, [[1, 2.5], [3, 4], [5, 6.25]])
    assert y.tolist() == [0, 1, 2]
    X, y = D.load_csv(p, label_column=0)
    assert y.tolist() == [1, 3, 5] and X.shape == (3, 2)
    with pytest.raises(ValueError, match=r"a\.csv: label 2\.5 in row 0 is not an integer"):
        D.load_csv(p, label_column=1)
    h = tmp_path / "h.csv"
    h.write_text("label,f1,f2\ncat,1,2\ndog,3,4\ncat,5,6\n")
    X, y = D.load(h)
    assert y.tolist() == [0, 1, 0]
    np.testing.assert_array_equal(X, [[1, 2], [3, 4], [5, 6]])
    with pytest.raises(ValueError, match=r"h\.csv, line 2, column 1: 'cat'"):
        D.load_csv(h, label_column="f2")  # then 'label' is a feature column
    h.write_text("a,b,c\n1,2,3\n4,5,6\n")
    X, y = D.load_csv(h, label_column="b")
    assert y.tolist() == [2, 5]
    np.testing.assert_array_equal(X, [[1, 3], [4, 6]])
    t = tmp_path / "a.tsv"
    t.write_text("1\t2\t-1\n3\t4\t1\n")
    assert D.load(t)[1].tolist() == [0, 1]
    g = tmp_path / "a.csv.gz"
    g.write_bytes(gzip.compress(b"1,2,0\n3,4,1\n"))
    assert D.load(g)[0].shape == (2, 2)


@pytest.mark.parametrize(
    "text,pattern",
    [
        ("1,2,0\n3,4,1\n5,6,7,1\n", r"line 3: expected 3 fields, found 4"),
        ("1,2,0\n3,4\n", r"line 2: expected 3 fields, found 2"),
        ("1,2,0\n3,4,1\n\n3,abc,1\n", r"line 4, column 2: 'abc' is not a finite number"),
        ("a,b,label\n1,2,0\n1,,1\n", r"line 3, column 2: '' is not a finite number"),
        ("1,2,0\n1,nan,1\n", r"line 2, column 2: 'nan'"),
        ("1,2,0\n1,2,\n", r"line 2, column 3: the label is missing"),
    ],
)
def test_csv_malformed_names_file_and_line(tmp_path, text, pattern):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(ValueError, match=rf"bad\.csv, {pattern}"):
        D.load(p)


def test_parquet(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "y": [5, 7, 5], "b": [0, 1, 0]})
    p = tmp_path / "t.parquet"
    df.to_parquet(p)
    X, y = D.load(p)
    assert_xy(X, y, 3, 2)
    np.testing.assert_array_equal(X, [[1, 0], [2, 1], [3, 0]])
    assert y.tolist() == [5, 7, 5]
    df.assign(label=["x", "z", "x"]).to_parquet(p)
    X, y = D.load_parquet(p)
    assert X.shape == (3, 3) and y.tolist() == [0, 1, 0]
    pd.DataFrame({"a": [1.0, 2.0], "c": [3, 4]}).to_parquet(p)
    assert D.load_parquet(p)[1].tolist() == [3, 4]
    pd.DataFrame({"a": ["u", "v"], "label": [0, 1]}).to_parquet(p)
    with pytest.raises(ValueError, match=r"t\.parquet.*'a' is not numeric"):
        D.load_parquet(p)


def test_path_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.npz"):
        D.load(tmp_path / "missing.npz")
    odd = tmp_path / "data.xyz"
    odd.write_text("hello\n")
    with pytest.raises(ValueError, match="unknown file type"):
        D.load(odd)
    odd.write_text("1,2,3\n")  # numbers, but not LIBSVM
    with pytest.raises(ValueError, match="unknown file type"):
        D.load(odd)
    empty = tmp_path / "empty.csv"
    empty.write_text("a,b,label\n")
    with pytest.raises(ValueError, match=r"empty\.csv: the file holds no data rows"):
        D.load(empty)
    # relative file names are looked for in the data directories
    (tmp_path / "d").mkdir()
    np.savez(tmp_path / "d" / "rel.npz", X=np.ones((2, 2)), y=np.array([0, 1]))
    X, _ = D.load("rel.npz", data_dir=tmp_path / "d")
    assert X.shape == (2, 2)


# ---------------------------------------------------- load(): names, dirs


def test_unknown_name_lists_known_names():
    with pytest.raises(ValueError) as err:
        D.load("mnsit")
    msg = str(err.value)
    for name in ("synsep", "iris", "digits", "mnist", "fashion-mnist", "usps", "letter", "rcv1", "news20"):
        assert name in msg
    assert "Did you mean 'mnist'" in msg
    with pytest.raises(ValueError, match="split"):
        D.load("iris", split="validation")


def test_missing_file_message(tmp_path, monkeypatch, _isolated_dirs):
    env_dir = tmp_path / "envdir"
    monkeypatch.setenv(D.ENV_VAR, str(env_dir))
    with pytest.raises(FileNotFoundError) as err:
        D.load("mnist", data_dir=tmp_path / "arg")
    msg = str(err.value)
    assert "train-images-idx3-ubyte.gz" in msg and "train-labels-idx1-ubyte.gz" in msg
    for d in (tmp_path / "arg" / "mnist", tmp_path / "arg", env_dir / "mnist", env_dir,
              _isolated_dirs / ".cache" / "noisyfeedback" / "mnist", _isolated_dirs / ".cache" / "noisyfeedback"):
        assert f"  {d}\n" in msg
    assert "http" in msg and "NOISYFEEDBACK_DATA" in msg and "--data-dir" in msg and "download=True" in msg
    with pytest.raises(FileNotFoundError) as err:
        D.load("letter", split="all", data_dir=tmp_path)
    assert "letter-recognition.data" in str(err.value) and "archive.ics.uci.edu" in str(err.value)
    if not Path("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz").exists():
        with pytest.raises(FileNotFoundError, match="apt-get install dataset-fashion-mnist"):
            D.load("fashion-mnist", data_dir=tmp_path)
    # only the test split missing: named as such
    write_mnist(tmp_path / "only" / "mnist")
    for f in (tmp_path / "only" / "mnist").glob("t10k*"):
        f.unlink()
    D.load("mnist", data_dir=tmp_path / "only")
    with pytest.raises(FileNotFoundError, match=r"split 'test'.*\n  t10k-images"):
        D.load("mnist", split="test", data_dir=tmp_path / "only")


def test_data_dir_resolution_order(tmp_path, monkeypatch, _isolated_dirs):
    arg, env = tmp_path / "arg", tmp_path / "env"
    cache = _isolated_dirs / ".cache" / "noisyfeedback"
    labels = {}
    for i, d in enumerate((arg, env, cache)):
        labels[d] = write_mnist(d / "mnist", seed=10 + i, n_train=30)["train"][1]
    monkeypatch.setenv(D.ENV_VAR, str(env))
    assert D.data_dirs(arg) == [arg, env, cache]
    np.testing.assert_array_equal(D.load("mnist", data_dir=arg)[1], labels[arg])
    np.testing.assert_array_equal(D.load("mnist")[1], labels[env])
    assert D.locate("mnist")[0] == env / "mnist" / "train-images-idx3-ubyte.gz"
    monkeypatch.delenv(D.ENV_VAR)
    np.testing.assert_array_equal(D.load("mnist")[1], labels[cache])
    assert D.data_dirs() == [cache]
    # a data_dir without the files falls back to the next directory
    np.testing.assert_array_equal(D.load("mnist", data_dir=tmp_path / "empty")[1], labels[cache])


def test_catalog(tmp_path):
    rows = D.catalog(data_dir=tmp_path)
    names = [r["name"] for r in rows]
    assert names == D.known_names()
    assert {"synsep", "synnonsep", "iris", "digits", "wine", "breast_cancer", "mnist", "fashion-mnist",
            "usps", "letter", "rcv1", "news20"} <= set(names)
    for r in rows:
        assert {"name", "kind", "n_samples", "n_features", "n_classes", "available", "path"} <= set(r)
        assert r["kind"] in ("generated", "bundled", "file")
        assert r["available"] is (r["kind"] != "file")
        assert r["path"] is None
    write_mnist(tmp_path / "mnist")
    write_letter(tmp_path / "letter-recognition.data", n=3)
    by = {r["name"]: r for r in D.catalog(data_dir=tmp_path)}
    assert by["mnist"]["available"] and by["mnist"]["path"] == str(tmp_path / "mnist")
    assert by["letter"]["available"] and by["letter"]["path"] == str(tmp_path)
    assert (by["mnist"]["n_samples"], by["mnist"]["n_features"], by["mnist"]["n_classes"]) == (70_000, 784, 10)
    assert by["letter"]["splits"] == {"train": 16_000, "test": 4_000}
    assert not by["usps"]["available"]


# ------------------------------------------------------------------ OpenML


def test_download_offline_fails_gracefully(tmp_path, monkeypatch):
    import sklearn.datasets

    def offline(*args, **kwargs):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", offline)
    with pytest.raises(FileNotFoundError, match=r"(?s)train-images.*OpenML failed.*no network"):
        D.load("mnist", data_dir=tmp_path, download=True)
    with pytest.raises(FileNotFoundError):
        D.load("usps", data_dir=tmp_path, download=True)  # no OpenML source: the plain message


def test_download_converts_openml_layout(tmp_path, monkeypatch):
    import sklearn.datasets
    from sklearn.utils import Bunch

    calls = {}

    def fake(name, version, data_home, as_frame):
        calls.update(name=name, data_home=data_home)
        if name == "letter":
            return Bunch(data=np.arange(20_000 * 16).reshape(20_000, 16) % 16,
                         target=np.array([chr(65 + i % 26) for i in range(20_000)], dtype=object))
        return Bunch(data=np.full((70_000, 784), 255.0), target=np.array([str(i % 10) for i in range(70_000)]))

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", fake)
    X, y = D.load("mnist", split="test", data_dir=tmp_path, download=True)
    assert_xy(X, y, 10_000, 784)
    assert X.max() == 1.0 and y[:3].tolist() == [0, 1, 2]
    assert calls == {"name": "mnist_784", "data_home": os.fspath(tmp_path / "openml")}
    X, y = D.load("letter", split="train", data_dir=tmp_path, download=True)
    assert_xy(X, y, 16_000, 16)
    assert y[:3].tolist() == [0, 1, 2] and y.max() == 25
