"""``calibration-atlas monitor``: the drifting demo fails the gate and the calibrated one
passes, results.json and the HTML report, a folder of Parquet files partitioned by month,
and bad input as one sentence with exit status 2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.data.census_demo import census_stream_simulation
from core.monitor import drifting_stream

OPTIONS = ["--time", "decision_date", "--prob", "p_default", "--label", "defaulted",
           "--group", "race", "--group", "sex", "--resamples", "0"]


@pytest.fixture(scope="module")
def demo_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("monitor")
    drifting, calm = folder / "drifting.csv", folder / "calm.csv"
    census_stream_simulation().to_csv(drifting, index=False)
    census_stream_simulation(shift=0.0).to_csv(calm, index=False)
    return drifting, calm


def test_fail_on_alarm_exits_1_on_the_drifting_demo_and_0_on_the_calibrated_one(
        demo_files, tmp_path, capsys):
    drifting, calm = demo_files
    out = tmp_path / "drifting"
    assert main(["monitor", str(drifting), *OPTIONS, "--challenger", "p_challenger",
                 "--fail-on", "alarm", "--out", str(out)]) == 1
    assert "alarm raised in month 2026-06 for race = Black" in capsys.readouterr().err
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert document["alarm"]["who"] == "race = Black"
    assert document["alarm"]["period"] == "2026-06"
    assert document["eprocess"]["threshold"] == 20
    assert len(document["eprocess"]["series"]["row"]) <= 3_002
    assert {row["period"] for row in document["periods"]} >= {"2025-01", "2026-12"}
    assert document["groups"]["race"]["threshold"] == pytest.approx(140)
    assert document["comparison"]["cs_high"] < 0  # the challenger is worse
    html = (out / "monitor.html").read_text(encoding="utf-8")
    assert "race = Black" in html and 'src="http' not in html
    periods = pd.read_csv(out / "tables" / "periods.csv")
    assert {"e_value", "p_value", "gap_low"} <= set(periods.columns)
    assert main(["monitor", str(calm), *OPTIONS, "--fail-on", "alarm",
                 "--out", str(tmp_path / "calm")]) == 0
    assert "No alarm through 2026-12" in capsys.readouterr().err


def test_monitor_reads_a_parquet_folder_partitioned_by_month(tmp_path, capsys):
    p, y, g = drifting_stream(24_000, 0)
    dates = pd.date_range("2025-01-01", periods=24_000, freq="30min")
    frame = pd.DataFrame({"when": dates, "p": p, "y": y, "unused": 0.0})
    for month, part in frame.groupby(dates.strftime("%Y-%m")):
        (tmp_path / "data" / f"month={month}").mkdir(parents=True)
        part.to_parquet(tmp_path / "data" / f"month={month}" / "part.parquet", index=False)
    status = main(["monitor", str(tmp_path / "data"), "--time", "when", "--prob", "p",
                   "--label", "y", "--period", "week", "--resamples", "0",
                   "--out", str(tmp_path / "out")])
    assert status == 0
    document = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert document["rows"] == 24_000
    assert document["periods"][0]["period"] == "2025-W01"


def test_bad_input_is_one_sentence_with_status_2(demo_files, tmp_path, capsys):
    drifting, _ = demo_files
    assert main(["monitor", str(drifting), "--time", "decision_dat", "--prob", "p_default",
                 "--label", "defaulted", "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "Column 'decision_dat' (time) is not in the table" in error
    assert "Did you mean 'decision_date'?" in error and "Traceback" not in error
    assert main(["monitor", str(drifting), "--time", "race", "--prob", "p_default",
                 "--label", "defaulted", "--out", str(tmp_path)]) == 2
    assert "holds labels, not dates" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["monitor", str(drifting), "--time", "decision_date", "--prob", "p_default",
              "--label", "defaulted", "--period", "fortnight"])


def test_klce_resamples_adds_each_periods_klce_test(tmp_path, capsys):
    p, y, _ = drifting_stream(3_000, 0)
    frame = pd.DataFrame({"when": pd.date_range("2025-01-01", periods=3_000, freq="h"),
                          "p": p, "y": y})
    frame.to_csv(tmp_path / "small.csv", index=False)
    common = ["monitor", str(tmp_path / "small.csv"), "--time", "when", "--prob", "p",
              "--label", "y", "--period", "1000", "--resamples", "0"]
    assert main([*common, "--klce-resamples", "20", "--out", str(tmp_path / "klce")]) == 0
    assert main([*common, "--out", str(tmp_path / "plain")]) == 0
    tested = json.loads((tmp_path / "klce" / "results.json").read_text(encoding="utf-8"))
    plain = json.loads((tmp_path / "plain" / "results.json").read_text(encoding="utf-8"))
    assert tested["settings"]["klce_resamples"] == 20
    assert all(0 < row["klce_p"] <= 1 for row in tested["periods"] if row["group"] == "all")
    assert all(row["klce_p"] is None for row in plain["periods"])


def test_a_parquet_file_is_streamed_to_the_results_of_its_csv(demo_files, tmp_path, capsys):
    """The drifting demo as Parquet (row groups of 5,000 rows, read in batches sized to
    --memory) and as CSV (read in memory): the same verdict, alarm and per-period table."""
    drifting, _ = demo_files
    table = tmp_path / "drifting.parquet"
    pd.read_csv(drifting).to_parquet(table, index=False, row_group_size=5_000)
    common = [*OPTIONS[:-1], "5", "--challenger", "p_challenger", "--feature", "age",
              "--klce-resamples", "20", "--period", "quarter"]
    assert main(["monitor", str(table), *common, "--memory", "1", "--out",
                 str(tmp_path / "parquet")]) == 0
    err = capsys.readouterr().err
    assert "Read drifting.parquet (1 Parquet file, " in err and "Peak memory" in err
    assert main(["monitor", str(drifting), *common, "--out", str(tmp_path / "csv")]) == 0
    streamed, memory = (json.loads((tmp_path / name / "results.json").read_text("utf-8"))
                        for name in ("parquet", "csv"))
    assert streamed["read"][0].startswith("Read drifting.parquet") and memory["read"] == []
    assert streamed["verdict"] == memory["verdict"] and streamed["alarm"] == memory["alarm"]
    a, b = pd.DataFrame(streamed["periods"]), pd.DataFrame(memory["periods"])
    assert a[["period", "group", "klce_computation"]].equals(
        b[["period", "group", "klce_computation"]])
    numbers = a.select_dtypes("number").columns
    assert np.allclose(a[numbers], b[numbers], rtol=1e-10, atol=1e-12, equal_nan=True)
    assert a.loc[a["group"] == "all", "klce_p"].between(0, 1).all()
