"""The ``monitor`` command on a folder of Parquet files partitioned by month, streamed.

    .venv/bin/python -m benchmarks.monitor_scale [--rows 1000000] [--months 20] [--seed 0]
        [--folder /tmp/monitor-scale] [--resamples 100] [--memory GB] [--period month]

Writes ``--rows`` rows of ``core.monitor.drifting_stream`` (three segments of shares 0.5, 0.3,
0.2; a logit shift of 0.5 for the segment of share 0.2 from the first row of the middle
month) as one Parquet file per month under ``FOLDER/data/month=YYYY-MM/``, a month at a time
(so 10⁸ rows are written in the memory of one month), with a text date column ``day``
(sorted within each month). Then runs ``calibration-atlas monitor FOLDER/data --time day
--prob p --label y --group segment --period month --fail-on alarm`` in a child process —
the table read batch by batch (:func:`core.monitor.monitor_stream`) — and prints the
command's own lines (how the table was read, the verdict), its exit status, its wall time
and the child's peak resident memory (``ru_maxrss``), which is the monitor's alone.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from core.monitor.simulate import drifting_stream

SHARES = (0.5, 0.3, 0.2)


def write_folder(folder: Path, rows: int, months: int, seed: int) -> None:
    """One Parquet file per month, a month generated at a time; the last segment drifts from
    the middle month on."""
    start = pd.Timestamp("2025-01-01")
    per_month = np.full(months, rows // months)
    per_month[: rows % months] += 1
    for m in range(months):
        first = start + pd.DateOffset(months=m)
        days = (first + pd.DateOffset(months=1) - first).days
        n = int(per_month[m])
        p, y, g = drifting_stream(n, seed + m, onset=0 if m >= months // 2 else None,
                                  shift=0.5, group_shares=SHARES, drift_group=2)
        offsets = np.sort(np.random.default_rng(seed + 10_000 + m).integers(0, days, n))
        dates = (first + pd.to_timedelta(offsets, unit="D")).strftime("%Y-%m-%d")
        frame = pd.DataFrame({"day": dates, "p": p, "y": y,
                              "segment": np.array(["A", "B", "C"])[g]})
        target = folder / f"month={first:%Y-%m}"
        target.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(target / "part.parquet", index=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--months", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/monitor-scale"))
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--memory", type=float, default=None)
    parser.add_argument("--period", default="month")
    options = parser.parse_args()
    data = options.folder / "data"
    if not data.exists():
        begun = time.perf_counter()
        write_folder(data, options.rows, options.months, options.seed)
        print(f"wrote {options.rows:,} rows in {time.perf_counter() - begun:.0f} s",
              file=sys.stderr)
    command = [sys.executable, "-m", "core.cli", "monitor", str(data), "--time", "day",
               "--prob", "p", "--label", "y", "--group", "segment", "--period",
               options.period, "--fail-on", "alarm", "--resamples", str(options.resamples),
               "--out", str(options.folder / "report")]
    if options.memory is not None:
        command += ["--memory", str(options.memory)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    lines = [line for line in (done.stdout + done.stderr).splitlines()
             if not line.startswith("monitor ")]  # the progress bar's lines
    print("\n".join(lines))
    print(f"rows {options.rows:,}, {options.months} monthly partitions, --resamples "
          f"{options.resamples}: exit {done.returncode}, {seconds:.1f} s, peak memory of the "
          f"monitor process {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
