"""export-log writes the service's log a chunk at a time (the same file as the whole log at once) and
keeps the events between --since and --until (a sequence number or an ISO 8601 time)."""

import asyncio
import datetime as dt

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    from noisyfeedback.service import Engine, ServiceConfig

    tmp = tmp_path_factory.mktemp("export")
    cfg = ServiceConfig(db=tmp / "s.db", learner="SquareCB", n_classes=3, n_features=4, params={"seed": 0},
                        synchronous="NORMAL")
    engine = Engine(cfg)
    rng = np.random.default_rng(0)

    async def drive():
        engine.start(asyncio.get_running_loop())
        for t in range(30):
            res = await engine.rank(rng.normal(size=4).tolist())
            if t % 3:
                await engine.reward(res["event_id"], float(rng.random() < 0.5))
        engine.stop()

    asyncio.run(drive())
    return cfg.db


def test_chunked_parquet_export_is_the_log(db, tmp_path):
    from noisyfeedback.service.export import COLUMNS, export_parquet
    from noisyfeedback.service.stores import open_storage

    rows = list(open_storage(db, create=False).log())
    t = pq.read_table(export_parquet(db, tmp_path / "a.parquet", chunk_rows=7))
    assert t.num_rows == 30 == len(rows) and t.column_names == list(COLUMNS)
    assert pq.ParquetFile(tmp_path / "a.parquet").metadata.num_row_groups == 5  # written 7 events at a time
    for j, c in enumerate(COLUMNS):
        col = t.column(c).to_pylist()
        want = [np.frombuffer(r[j], dtype=np.float64).tolist() if c in ("context", "distribution") else r[j]
                for r in rows]
        assert col == want, c
    whole = pq.read_table(export_parquet(db, tmp_path / "b.parquet"))
    assert whole.equals(t)
    from noisyfeedback.datasets import read_log

    log = read_log(tmp_path / "a.parquet")
    assert log.X.shape == (20, 4)


def test_since_and_until_by_sequence_and_time(db, tmp_path):
    from noisyfeedback.service.export import export_log

    seq = pq.read_table(export_log(db, tmp_path / "s.parquet", since="5", until=12)).column("event_seq").to_pylist()
    assert seq == list(range(5, 13))
    full = pq.read_table(export_log(db, tmp_path / "all.parquet"))
    times = full.column("ranked_at").to_pylist()
    iso = dt.datetime.fromtimestamp(times[10], tz=dt.timezone.utc).isoformat()
    later = pq.read_table(export_log(db, tmp_path / "t.parquet", since=iso)).column("event_seq").to_pylist()
    bound = dt.datetime.fromisoformat(iso).timestamp()
    assert later == [s for s, x in zip(full.column("event_seq").to_pylist(), times) if x >= bound]
    assert 15 <= len(later) <= 20
    import pandas as pd

    csv = pd.read_csv(export_log(db, tmp_path / "s.csv", since=5, until="12"))
    assert csv["event_seq"].tolist() == list(range(5, 13)) and {f"x{j}" for j in range(4)} <= set(csv.columns)
    with pytest.raises(ValueError, match="neither an event sequence number nor an ISO 8601 time"):
        export_log(db, tmp_path / "x.parquet", since="yesterday")
    with pytest.raises(ValueError, match="the VW export is in reward order"):
        export_log(db, tmp_path / "x.vw", until=3)
    from typer.testing import CliRunner

    from noisyfeedback.cli import app

    res = CliRunner().invoke(app, ["export-log", "--db", str(db), "-o", str(tmp_path / "c.parquet"), "--since", "29"])
    assert res.exit_code == 0, res.output
    assert pq.read_table(tmp_path / "c.parquet").column("event_seq").to_pylist() == [29, 30]
