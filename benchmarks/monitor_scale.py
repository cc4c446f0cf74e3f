"""The ``monitor`` command on a folder of Parquet files partitioned by month.

    .venv/bin/python -m benchmarks.monitor_scale [--rows 1000000] [--months 20] [--seed 0]
        [--folder /tmp/monitor-scale] [--resamples 100]

Writes ``--rows`` rows of ``core.monitor.drifting_stream`` (three groups, a logit shift of
0.5 for the group of share 0.2 from the middle row) as one Parquet file per month under
``FOLDER/month=YYYY-MM/``, then runs ``calibration-atlas monitor FOLDER --time day --prob p
--label y --group segment --period month --fail-on alarm`` in this process and prints its
wall time, its exit status and this process's peak memory.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from core.cli import main as cli_main
from core.monitor.simulate import drifting_stream


def write_folder(folder: Path, rows: int, months: int, seed: int) -> None:
    p, y, g = drifting_stream(rows, seed, onset=rows // 2, shift=0.5,
                              group_shares=(0.5, 0.3, 0.2), drift_group=2)
    start = pd.Timestamp("2025-01-01")
    days = np.sort(np.random.default_rng(seed + 1).integers(0, months * 30, rows))
    dates = start + pd.to_timedelta(days, unit="D")
    frame = pd.DataFrame({"day": dates.strftime("%Y-%m-%d"), "p": p, "y": y,
                          "segment": np.array(["A", "B", "C"])[g]})
    for month, part in frame.groupby(dates.strftime("%Y-%m")):
        target = folder / f"month={month}"
        target.mkdir(parents=True, exist_ok=True)
        part.to_parquet(target / "part.parquet", index=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--months", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/monitor-scale"))
    parser.add_argument("--resamples", type=int, default=100)
    options = parser.parse_args()
    data = options.folder / "data"
    if not data.exists():
        write_folder(data, options.rows, options.months, options.seed)
    start = time.perf_counter()
    status = cli_main(["monitor", str(data), "--time", "day", "--prob", "p", "--label", "y",
                       "--group", "segment", "--period", "month", "--fail-on", "alarm",
                       "--resamples", str(options.resamples), "--out",
                       str(options.folder / "report")])
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rows {options.rows:,}, {options.months} monthly partitions: exit {status}, "
          f"{seconds:.1f} s, peak memory {peak:,.0f} MiB", file=sys.stderr)


if __name__ == "__main__":
    main()
