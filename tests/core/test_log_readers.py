"""The log readers refuse garbage naming file and line (VW) or column and row (tables), and read the
decision service's own exports back to the same X."""

import numpy as np
import pytest

from noisyfeedback.datasets import read_log, read_vw_cb, write_log, write_vw_cb


# ------------------------------------------------------------------ VW text
@pytest.mark.parametrize("line,match", [
    ("1:0:0.5 |u:inf a", r"line 2: namespace scale 'inf' of 'u' is not finite"),
    ("1:0:0.5 |u:nan a", r"line 2: namespace scale 'nan' of 'u' is not finite"),
    ("1:0:0.5 |u:1e300 a:1e10", r"line 2: feature 'u\^a' times its namespace scale 1e\+300 overflows"),
    ("1:0:0.5 |u a:1e308 a:1e308", r"line 2: feature 'u\^a' times its namespace scale 1.0 overflows"),
    ("99999999999999999999999:0:0.5 |u a", r"line 2: the action 99999999999999999999999 is beyond int64"),
    ("9223372036854775809:0:0.5 |u a", r"line 2: the action 9223372036854775809 is beyond int64"),
    ("+3:0:0.5 |u a", r"line 2: the label '\+3:0:0.5' is not"),
    ("1:0:nan |u a", r"line 2: the probability must be in \(0, 1\]"),
    ("1:inf:0.5 |u a", r"line 2: the probability must be in \(0, 1\] and the cost finite"),
])
def test_vw_bad_values_name_the_file_and_line(tmp_path, line, match):
    path = tmp_path / "log.vw"
    path.write_text("1:0:0.5 |u a b:2\n" + line + "\n")
    with pytest.raises(ValueError, match=f"log.vw, {match}"):
        read_vw_cb(path)


def test_vw_largest_action_is_read():
    assert read_vw_cb("9223372036854775808:0:0.5 |u a\n").actions.tolist() == [2 ** 63 - 1]


@pytest.mark.parametrize("n_bits", [0, -1, 33, 64, 18.0, True, "18"])
def test_vw_n_bits_is_validated(n_bits):
    with pytest.raises(ValueError, match="n_bits must be an int in \\[1, 32\\]"):
        read_vw_cb("1:0:0.5 |u a\n", features="hash", n_bits=n_bits)
    assert read_vw_cb("1:0:0.5 |u a\n", features="hash", n_bits=32).X.shape == (1, 2 ** 32)


def test_vw_invalid_utf8_names_file_and_line_and_a_bom_is_skipped(tmp_path):
    path = tmp_path / "log.vw"
    path.write_bytes(b"1:0:0.5 |u a\n2:0:0.5 |u caf\xe9\n")
    with pytest.raises(ValueError, match=r"log.vw, line 2: not valid UTF-8"):
        read_vw_cb(path)
    path.write_bytes(b"\xef\xbb\xbf1:0:0.5 |u a\n2:-1:0.5 |u b\n")
    log = read_vw_cb(path)
    assert log.feature_names == ["u^a", "u^b"] and log.actions.tolist() == [0, 1]
    assert read_vw_cb("\ufeff1:0:0.5 |u a\n").feature_names == ["u^a"]


def test_vw_numbered_features_are_columns():
    text = "1:0:0.5 | 3:2.0 0:1.5\n2:-1:0.25 | 1\n"
    log = read_vw_cb(text)
    np.testing.assert_array_equal(log.X.toarray(), [[1.5, 0, 0, 2.0], [0, 1.0, 0, 0]])
    assert log.feature_names == ["0", "1", "2", "3"]
    assert read_vw_cb(text, n_features=6).X.shape == (2, 6)
    with pytest.raises(ValueError, match="line 1: feature column 3 is beyond n_features=2"):
        read_vw_cb(text, n_features=2)
    # named features (or a named namespace) keep the order of first appearance
    assert read_vw_cb("1:0:0.5 | b 3\n").feature_names == [" ^b", " ^3"]
    assert read_vw_cb("1:0:0.5 |f 3 1\n").feature_names == ["f^3", "f^1"]
    assert read_vw_cb(text, features="index").feature_names == [" ^3", " ^0", " ^1"]


# ------------------------------------------------------------------ tables
def _csv(tmp_path, text):
    path = tmp_path / "log.csv"
    path.write_text(text)
    return path


@pytest.mark.parametrize("body,match", [
    ("0,1,0.5,1,2\n1,0,0.5,abc,3\n", r"feature column 'x0' holds 'abc', not a number, in data row 1"),
    ("0,1,0.5,1,2\n99999999999999999999,0,0.5,1,3\n", r"the action 99999999999999999999 in data row 1 is not in"),
    ("0,1,0.5,1,2\n9223372036854775808,0,0.5,1,3\n", r"the action 9223372036854775808 in data row 1 is not in"),
    ("0,1,0.5,1,2\n-1,0,0.5,1,3\n", r"0-based actions >= 0; data row 1 has -1"),
    ("0,1,0.5,1,2\n1,0,0,1,3\n", r"'propensity' must hold propensities in \(0, 1\]; data row 1 has 0.0"),
    ("0,1,0.5,1,2\n1,0,1.5,1,3\n", r"'propensity' must hold propensities in \(0, 1\]; data row 1 has 1.5"),
    ("0,1,0.5,1,2\n1,0,nan,1,3\n", r"'propensity' must hold propensities in \(0, 1\]; data row 1 has nan"),
    ("0,1,0.5,1,2\n1,nan,0.5,1,3\n", r"'reward' must hold finite rewards; data row 1 has nan"),
    ("0,1,0.5,1,2\n1,inf,0.5,1,3\n", r"'reward' must hold finite rewards; data row 1 has inf"),
    ("0,1,0.5,1,2\n1,0,0.5,1,\n", r"feature column 'x1' is missing or not finite in data row 1"),
    ("0,1,0.5,1,2\n1,yes,0.5,1,2\n", r"reward column 'reward' holds 'yes', not a number, in data row 1"),
])
def test_table_bad_values_name_column_and_row(tmp_path, body, match):
    with pytest.raises(ValueError, match=match):
        read_log(_csv(tmp_path, "action,reward,propensity,x0,x1\n" + body))


def test_table_a_text_column_can_be_left_out_by_name(tmp_path):
    path = _csv(tmp_path, "action,reward,propensity,user,x0\n0,1,0.5,ann,1\n1,0,0.25,bob,2\n")
    with pytest.raises(ValueError, match="feature column 'user' holds 'ann'.*pass features="):
        read_log(path)
    log = read_log(path, features=["x0"])
    assert log.X.tolist() == [[1.0], [2.0]] and log.actions.tolist() == [0, 1]


def test_table_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    a, r, p = rng.integers(0, 4, 20), rng.random(20), rng.uniform(0.1, 1, 20)
    for suffix in ("csv", "parquet"):
        log = read_log(write_log(tmp_path / f"l.{suffix}", X, a, r, p, ["u", "v", "w"]))
        np.testing.assert_array_equal(log.X, X)
        assert log.feature_names == ["u", "v", "w"] and log.actions.tolist() == a.tolist()
    back = read_vw_cb(write_vw_cb(tmp_path / "l.vw", X, a, r, p))
    np.testing.assert_array_equal(back.X.toarray(), X)


# ------------------------------------------------------- the service's exports
def test_service_export_reads_back_to_the_same_X(tmp_path):
    """export-log -o log.parquet and -o log.vw, read back by read_log and read_vw_cb: the same rewarded
    rows, the same X (same columns, same order; zero columns included), actions, rewards, propensities."""
    pytest.importorskip("pyarrow")
    import asyncio

    from noisyfeedback.service import Engine, ServiceConfig
    from noisyfeedback.service.export import export_parquet, export_vw

    d = 8
    cfg = ServiceConfig(db=tmp_path / "s.db", learner="SquareCB", n_classes=4, n_features=d,
                        params={"seed": 0}, synchronous="NORMAL")
    engine = Engine(cfg)
    rng = np.random.default_rng(1)
    contexts, ranked = [], []

    async def drive():
        engine.start(asyncio.get_running_loop())
        for t in range(40):
            x = rng.normal(size=d)
            x[[2, 7]] = 0.0  # never set: the export still has these columns
            x[rng.random(d) < 0.2] = 0.0
            res = await engine.rank(x.tolist())
            if t % 4 != 3:  # every fourth event is never rewarded
                await engine.reward(res["event_id"], float(rng.random() < 0.5))
                contexts.append(x)
                ranked.append(res)
        engine.stop()

    asyncio.run(drive())
    X = np.array(contexts)
    pq = read_log(export_parquet(cfg.db, tmp_path / "log.parquet"))
    np.testing.assert_array_equal(pq.X, X)
    assert pq.feature_names == [str(j) for j in range(d)]
    assert pq.actions.tolist() == [r["action"] for r in ranked]
    np.testing.assert_array_equal(pq.propensities, [r["probability"] for r in ranked])
    vw = read_vw_cb(export_vw(cfg.db, tmp_path / "log.vw"), n_features=d)
    np.testing.assert_array_equal(vw.X.toarray(), X)
    assert vw.feature_names == pq.feature_names
    np.testing.assert_array_equal(vw.actions, pq.actions)
    np.testing.assert_array_equal(vw.rewards, pq.rewards)
    np.testing.assert_array_equal(vw.propensities, pq.propensities)
