"""Streamed audits read bounded batches: the batch boundaries, the file's row groups and the
folder's files never change a number; the memory budget gives the batches and refuses bad
values in a sentence."""

from __future__ import annotations

import datetime as dt
import functools
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from core import cli
from core.audit import AuditSettings
from core.data.mapping import ColumnMapping
from core.data.simulations import scale_table
from core.data.stream_sources import open_source, parquet_pieces
from core.kernels import memory
from core.kernels.rff import CHUNK_ROWS
from core.report.schema import report_document
from core.stream import run_stream_audit

BINARY = ColumnMapping(label="label", probs=("prob",), features=("age", "income", "tenure",
                                                                 "region"), groups=("region",))
#: Sums over rows added in another order: equal to this (the acceptance of issue 33).
TOLERANCE = 1e-10
SETTINGS = AuditSettings(part="all", n_bootstrap=10, grid_resamples=10, test_resamples=10,
                         computation="rff")


def document(streamed) -> dict:
    """results.json of a streamed audit, without how it was read (source, batches, times)."""
    found = report_document(streamed.result, streamed.sample,
                            created=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    found.pop("stream")
    found["notes"] = found["notes"][1:]  # the first says how the rows were read
    return json.loads(json.dumps(found, default=str))


def assert_same(a, b, path: str = "", rtol: float = 0.0) -> None:
    """Two JSON documents equal: the same keys, strings and counts; numbers to TOLERANCE
    (and ``rtol`` of their size: the random features' float32 chunk products)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for key in a:
            assert_same(a[key], b[key], f"{path}.{key}", rtol)
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{k}]", rtol)
    elif isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            assert math.isnan(a) and math.isnan(b), path
        else:
            assert abs(a - b) <= TOLERANCE + rtol * abs(b), (path, a, b)
    elif isinstance(a, str) and a.startswith("Streamed from"):
        assert b.startswith("Streamed from"), path  # how the rows were read: its own test
    else:
        assert a == b, path


@functools.cache
def small_table() -> pd.DataFrame:
    return scale_table(1200, seed=11)


@functools.cache
def whole() -> dict:
    """The audit of the small table read as one batch."""
    return document(run_stream_audit(open_source(small_table()), BINARY, SETTINGS,
                                     sample_rows=1000, batch_rows=10**6))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.generate])  # no shrinking: each example is an audit
@given(batch_rows=st.integers(min_value=97, max_value=1300))
def test_batch_boundaries_never_change_a_result(batch_rows: int) -> None:
    streamed = run_stream_audit(open_source(small_table()), BINARY, SETTINGS, sample_rows=1000,
                                batch_rows=batch_rows)
    assert streamed.result.stream.partitions == -(-1200 // batch_rows)
    # every number of results.json to 1e-10: the sums over rows, the Poisson bootstrap, the
    # slices, and the random-feature sums (a chunk a batch boundary cuts is summed whole)
    assert_same(document(streamed), whole())


def test_one_row_group_a_pandas_file_and_a_folder_give_the_same_results(tmp_path) -> None:
    n = 3 * CHUNK_ROWS + 1000  # batches of two chunks: the last one short
    frame = scale_table(n, seed=12)
    frame.to_parquet(tmp_path / "one.parquet", index=False, row_group_size=n)
    frame.to_parquet(tmp_path / "groups.parquet", index=False, row_group_size=3001)
    folder = tmp_path / "folder"
    folder.mkdir()
    for k, (a, b) in enumerate([(0, 7000), (7000, 7001), (7001, 20000), (20000, n)]):
        frame.iloc[a:b].to_parquet(folder / f"part-{k}.parquet", index=False)
    found = {}
    for name in ("one.parquet", "groups.parquet", "folder"):
        source = open_source(tmp_path / name, name="table")
        streamed = run_stream_audit(source, BINARY, SETTINGS, sample_rows=1000,
                                    batch_rows=2 * CHUNK_ROWS)
        assert streamed.result.stream.partitions == 2
        found[name] = (document(streamed), streamed.result.fingerprint)
    assert "1 row group," in open_source(tmp_path / "one.parquet").describe()
    assert "4 Parquet files" in open_source(folder).describe()
    for name in ("groups.parquet", "folder"):
        assert found[name][1] == found["one.parquet"][1]  # the table's fingerprint
        assert_same(found[name][0], found["one.parquet"][0])  # every number, to 1e-10


def test_a_row_group_is_decoded_a_batch_at_a_time(tmp_path) -> None:
    frame = scale_table(5000, seed=13)
    frame.to_parquet(tmp_path / "one.parquet", index=False, row_group_size=5000)
    [unit] = open_source(tmp_path / "one.parquet").partitions
    pieces = list(parquet_pieces(unit, ["prob", "label"], 1234, 4321, 1000))
    assert all(len(piece) <= 1000 for _, piece in pieces)
    assert pieces[0][0] == 1234
    rows = pd.concat([piece for _, piece in pieces], ignore_index=True)
    pd.testing.assert_frame_equal(rows, frame[["prob", "label"]].iloc[1234:4321]
                                  .reset_index(drop=True))
    source = open_source(tmp_path / "one.parquet").batched(700)
    assert [p.rows for p in source.partitions] == [700] * 7 + [100]
    got = pd.concat([f for _, f in source.batches(["prob"])], ignore_index=True)
    np.testing.assert_array_equal(got["prob"], frame["prob"])


def test_a_dask_frame_partition_is_cut_into_batches() -> None:
    dd = pytest.importorskip("dask.dataframe")
    frame = scale_table(900, seed=14)
    source = open_source(dd.from_pandas(frame, npartitions=2)).batched(200, across_units=False)
    assert len({p.unit_index for p in source.partitions}) == 2
    assert max(p.rows for p in source.partitions) == 200
    got = pd.concat([f for _, f in source.batches(["income"])], ignore_index=True)
    np.testing.assert_array_equal(got["income"], frame["income"])


def test_the_memory_budget_gives_the_batches() -> None:
    small = memory.batch_plan(int(1.5 * memory.GIB), 2, 4, 50, 15, 200, 1024)
    large = memory.batch_plan(4 * memory.GIB, 2, 4, 50, 15, 200, 1024)
    assert small.batch_rows % CHUNK_ROWS == 0 and small.batch_rows < large.batch_rows
    assert large.batch_rows <= memory.MAX_BATCH_ROWS
    assert small.target <= small.budget and "batches of" in small.describe()
    wide = memory.batch_plan(3 * memory.GIB, 2, 4, 1000, 15, 200, 1024)
    assert wide.batch_rows < memory.batch_plan(3 * memory.GIB, 2, 4, 50, 15, 200,
                                               1024).batch_rows  # more resamples, fewer rows
    with pytest.raises(ValueError, match=r"below what a streamed audit needs.*--memory"):
        memory.batch_plan(int(0.5 * memory.GIB), 2, 4, 200, 15, 200, 1024)
    assert 0 < memory.default_budget() <= memory.DEFAULT_CAP_BYTES
    assert memory.budget_bytes("1.5") == int(1.5 * memory.GIB)
    for bad, sentence in (("lots", "must be a number of gigabytes"), ("0.01", "too small"),
                          ("nan", "too small"), ("1e6", "more than this machine's")):
        with pytest.raises(ValueError, match=sentence):
            memory.budget_bytes(bad)
    assert memory.fits_in_memory(10**5, memory.GIB)
    assert not memory.fits_in_memory(10**8, memory.GIB)


def test_the_audit_command_streams_within_its_memory_budget(tmp_path, capsys) -> None:
    path = tmp_path / "table.parquet"
    scale_table(3000, seed=15).to_parquet(path, index=False, row_group_size=3000)
    arguments = ["audit", str(path), "--label", "label", "--prob", "prob", "--features", "age",
                 "--out", str(tmp_path / "out"), "--formats", "svg", "--resamples", "20"]
    with pytest.raises(SystemExit) as stopped:  # argparse: the usage line and the sentence
        cli.main([*arguments, "--memory", "lots"])
    assert stopped.value.code == 2
    assert "must be a number of gigabytes" in capsys.readouterr().err
    assert cli.main([*arguments, "--stream", "--memory", "1.5"]) == 0
    err = capsys.readouterr().err
    assert "Read in batches of" in err and "of a 1.5 GB budget" in err
    assert "Peak memory of this process" in err
    record = json.loads((tmp_path / "out" / "results.json").read_text())["stream"]
    assert record["batch_rows"] % CHUNK_ROWS == 0
    assert 0 < record["memory_target_bytes"] <= record["memory_budget_bytes"]
