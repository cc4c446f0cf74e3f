"""Streamed audits: equal to the in-memory path, the level of the streamed random-feature
tests, the coverage of the Poisson bootstrap, and the large runs (10⁷ rows from Parquet on
this machine, 10⁸ through a Dask cluster of `dask scheduler` / `dask worker` processes).

    .venv/bin/python -m benchmarks.streaming equality [--rows 1000000]
    .venv/bin/python -m benchmarks.streaming level [--reps 300] [--rows 100000]
    .venv/bin/python -m benchmarks.streaming slices-level [--reps 300] [--rows 100000]
        [--sample-rows 20000] [--resamples 200]
    .venv/bin/python -m benchmarks.streaming coverage [--reps 200] [--rows 20000]
    .venv/bin/python -m benchmarks.streaming large --rows 1000000 --single-file
    .venv/bin/python -m benchmarks.streaming large --rows 1000000 --single-file --formats '' \
        --before /tmp/main [--rounds 2]
    .venv/bin/python -m benchmarks.streaming large --rows 10000000 [--folder DIR]
    .venv/bin/python -m benchmarks.streaming large --rows 100000000 --workers 3 [--folder DIR]
    .venv/bin/python -m benchmarks.streaming profile [--rows 1000000]
    .venv/bin/python -m benchmarks.streaming lanes [--rows 1000000]
    .venv/bin/python -m benchmarks.streaming calibrate

``equality`` writes :func:`core.data.simulations.scale_table` to Parquet (row groups of
131,072 rows), audits it in memory and streamed, and prints the largest difference of every
streamed statistic (the acceptance: 1e-10 for the sums over rows). ``level`` streams
calibrated tables (``scale_table(local_bias=0)``: calibrated, locally too) and counts how
often the KLCE grid's aggregated test and the SKCE consistency test reject at α = 0.05
(binomial standard error √(0.05·0.95/R)). ``slices-level`` counts how often a streamed
audit's findings flag a slice of a calibrated table (exact sums over all rows, the max-|T|
null from a sample of them). ``coverage`` draws tables of the same model,
computes the in-memory (multinomial) and streamed (Poisson) bootstrap intervals of every
metric, and counts how often each holds the metric's value on 4,000,000 rows of the model
(its population value, to about 1e-4). ``large`` writes the table chunk by chunk (never all
in memory) as a folder of Parquet files of 1,000,000 rows, runs ``calibration-atlas audit`` on
it in a child process (with ``--workers N``: a `dask scheduler` and N `dask worker
--nthreads 1` processes on this machine, and ``--dask``), polls the resident memory of the
command and of every worker, prints the wall time, the peak memory of each and the load
average, and deletes the data and the report; with ``--before DIR`` (another copy of the code,
e.g. ``git archive main | tar -x -C DIR``) it runs that code's command and this one's one
after the other, ``--rounds`` times, and prints each one's wall time, CPU seconds and ratio
to the baseline, then the before/after ratios. ``calibrate`` times random-feature passes,
label draws and the exact tile sum on this machine (best of three, on its threads) and prints
the seconds per unit that ``core.kernels.computation`` fixes as RFF_PRODUCT_SECONDS,
RFF_FEATURE_SECONDS, RFF_DRAW_SECONDS and EXACT_PAIR_SECONDS.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import tomllib

from benchmarks.common import load, print_level_table
from core.audit import AuditSettings, run_audit
from core.data import AuditData
from core.data.mapping import ColumnMapping
from core.data.simulations import SCALE_FEATURES, scale_table
from core.data.stream_sources import open_source
from core.stream import run_stream_audit, stream_tests

MAPPING = ColumnMapping(label="label", probs=("prob",), features=SCALE_FEATURES,
                        groups=("region",))
ALPHA = 0.05
ROW_GROUP = 131_072  # a multiple of the random features' 8,192-row chunks
FILE_ROWS = 1_000_000


# --------------------------------------------------------------------------- equality


def equality(rows: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scale.parquet"
        frame = scale_table(rows)
        frame.to_parquet(path, index=False, row_group_size=ROW_GROUP)
        settings = AuditSettings(part="all", n_bootstrap=50)
        print(f"n = {rows:,}; {load()}", flush=True)
        start = time.perf_counter()
        memory = run_audit(AuditData.from_mapping(frame, MAPPING), settings)
        in_memory = time.perf_counter() - start
        start = time.perf_counter()
        streamed = run_stream_audit(open_source(path), MAPPING, settings).result
        seconds = time.perf_counter() - start
    R, M = streamed.reliability, memory.reliability
    rows_out = []

    def add(name: str, mine, theirs, kind: str = "sum over rows") -> None:
        mine, theirs = np.asarray(mine, float), np.asarray(theirs, float)
        diff = float(np.nanmax(np.abs(mine - theirs))) if mine.size else 0.0
        rows_out.append({"statistic": name, "kind": kind, "max |streamed − in memory|": diff,
                         "≤ 1e-10": "yes" if diff <= 1e-10 else "NO"})

    columns = ["count", "mean_confidence", "frequency", "ci_low", "ci_high", "gap"]
    add("reliability table (15 bins: counts, means, Wilson intervals)",
        R.table[columns].to_numpy(float), M.table[columns].to_numpy(float))
    mine = R.metrics.set_index("metric")["value"]
    theirs = M.metrics.set_index("metric")["value"]
    for name in ("Accuracy", "Brier score", "NLL", "ECE (L1)", "ECE (L2)", "MCE",
                 "ACE (classwise)", "ACE (top-label)", "Debiased squared ECE (L2²)"):
        add(name, mine[name], theirs[name])
    for key, name in (("hosmer-lemeshow", "Hosmer–Lemeshow statistic"),
                      ("spiegelhalter", "Spiegelhalter z")):
        add(name, R.tests[key].statistic, M.tests[key].statistic)
    for group, (summary, tables) in M.groups.items():
        numeric = summary.select_dtypes("number").columns
        add(f"group table ({group}: rows, means, ECE, MCE, Brier, HL p)",
            R.groups[group][0][numeric].to_numpy(float), summary[numeric].to_numpy(float))
        add(f"group reliability tables ({group})",
            np.concatenate([R.groups[group][1][k][columns].to_numpy(float) for k in tables]),
            np.concatenate([t[columns].to_numpy(float) for t in tables.values()]))
    kind = "random features (float32 products)"
    add("SKCE consistency statistic", R.tests["consistency"].statistic,
        M.tests["consistency"].statistic, kind)
    add("SKCE consistency p-value", R.tests["consistency"].p_value,
        M.tests["consistency"].p_value, kind)
    add("SKCE value (D = 1,024)", mine["SKCE (unbiased)"], theirs["SKCE (unbiased)"], kind)
    add("KLCE grid statistics (25)", streamed.klce_grid.statistics,
        memory.klce_grid.statistics, kind)
    add("KLCE grid p-values (25 and aggregated)",
        np.append(streamed.klce_grid.p_values.ravel(), streamed.klce_grid.aggregated.p_value),
        np.append(memory.klce_grid.p_values.ravel(), memory.klce_grid.aggregated.p_value), kind)
    mine_slices, their_slices = (r.slices.table.sort_values(["slice", "class"])
                                 for r in (streamed, memory))
    same = list(mine_slices["slice"]) == list(their_slices["slice"])
    rows_out.append({"statistic": f"slice family ({memory.slices.n_slices} slices: names, "
                                  "parents, left out)", "kind": "enumeration",
                     "max |streamed − in memory|": 0.0 if same and
                     streamed.slices.family.parents == memory.slices.family.parents and
                     streamed.slices.family.describe() == memory.slices.family.describe()
                     else float("nan"), "≤ 1e-10": "yes" if same else "NO"})
    if same:
        add("slice rows", mine_slices["rows"], their_slices["rows"])
        for column, name in (("observed", "slice Σy / rows"), ("predicted", "slice Σp / rows"),
                             ("gap", "slice gap"), ("statistic", "slice T = Σ(y − p)/√Σp(1 − p)")):
            add(name, mine_slices[column], their_slices[column])
    table = pd.DataFrame(rows_out)
    pd.set_option("display.width", 160)
    print(table.to_string(index=False))
    print(f"in memory {in_memory:.1f} s, streamed {seconds:.1f} s "
          f"({streamed.stream.partitions} partitions); {load()}")


# --------------------------------------------------------------------------- level


def level(reps: int, rows: int, start: int) -> None:
    settings = AuditSettings(part="all")
    grid_rejections = skce_rejections = 0
    began = time.perf_counter()
    print(f"n = {rows:,}, {reps} calibrated tables (seeds {start}…{start + reps - 1}); "
          f"{load()}", flush=True)
    for rep in range(start, start + reps):
        frame = scale_table(rows, seed=10_000 + rep, local_bias=0.0)
        source = open_source(frame, partition_rows=ROW_GROUP // 4)
        grid, skce = stream_tests(source, MAPPING, AuditSettings(part="all", seed=rep))
        grid_rejections += grid.aggregated.p_value <= ALPHA
        skce_rejections += skce.p_value <= ALPHA
        done = rep - start + 1
        if done % 25 == 0 or done == reps:
            print(f"  {done} tables: grid {grid_rejections / done:.3f}, SKCE "
                  f"{skce_rejections / done:.3f} ({time.perf_counter() - began:.0f} s)",
                  flush=True)
    print(f"KLCE grid {grid.aggregated.parameters['computation']}, B = {grid.n_resamples}; "
          f"SKCE {skce.parameters['computation']}, B = {skce.n_resamples}")
    se = np.sqrt(ALPHA * (1 - ALPHA) / reps)
    print("| test | tables | rejections at α = 0.05 | SE | within 0.05 ± 2 SE |")
    print("|---|---:|---:|---:|---|")
    for name, count in (("KLCE grid, aggregated (consistency-combined)", grid_rejections),
                        ("SKCE consistency", skce_rejections)):
        rate = count / reps
        print(f"| {name} | {reps} | {rate:.3f} | {se:.4f} | "
              f"{'yes' if abs(rate - ALPHA) <= 2 * se else 'NO'} |")
    print(f"{time.perf_counter() - began:.0f} s in all; {load()}; settings {settings}")


# --------------------------------------------------------------------------- slice findings


def slices_level(reps: int, rows: int, sample_rows: int, resamples: int, start: int) -> None:
    """How often a streamed audit flags a slice of a calibrated model: every slice's exact
    sums over all rows, the max-|T| null from ``sample_rows`` of them (what
    :func:`core.local.slice_streamed.streamed_discovery` does after the passes, whose sums
    equal the in-memory ones: ``equality``), FWER and FDR at α = 0.05."""
    from dataclasses import replace

    from core.audit.rows import slice_frame
    from core.kernels.resampling import row_sample
    from core.local.slice_discovery import finish_discovery, slice_targets
    from core.local.slice_space import enumerate_slices
    from core.local.slice_streamed import row_targets, sample_parts

    flagged = {"fwer": 0, "fdr": 0}
    began = time.perf_counter()
    print(f"n = {rows:,}, null from a sample of {sample_rows:,}, B = {resamples}, {reps} "
          f"calibrated tables (seeds {start}…); {load()}", flush=True)
    names = (*SCALE_FEATURES, "region")
    for rep in range(start, start + reps):
        frame = scale_table(rows, seed=30_000 + rep, local_bias=0.0)
        data = AuditData.from_mapping(frame, MAPPING)
        family = enumerate_slices(slice_frame(data, tuple(dict.fromkeys(names))))
        classes = data.classes
        sums = family.incidence() @ row_targets(data.probs, data.y, "positive", classes)
        sample = row_sample(rows, sample_rows, rep)
        sample_family = replace(family, codes=family.codes[sample])
        scores, targets = slice_targets(data.probs[sample], data.y[sample], "positive",
                                        classes, resamples)
        parts, null = sample_parts(sample_family, sums, scores, targets, resamples, rep)
        for rate in flagged:
            found = finish_discovery(sample_family, [dict(p) for p in parts], null, ALPHA,
                                     rate, "positive", resamples, rep)
            flagged[rate] += found.rejects()
        done = rep - start + 1
        if done % 25 == 0 or done == reps:
            print(f"  {done} tables: FWER {flagged['fwer'] / done:.3f}, FDR "
                  f"{flagged['fdr'] / done:.3f} ({time.perf_counter() - began:.0f} s)",
                  flush=True)
    print(f"{family.n_slices} slices ({family.describe()})")
    print_level_table(flagged, reps, ALPHA)
    print(f"{time.perf_counter() - began:.0f} s in all; {load()}")


# --------------------------------------------------------------------------- coverage


COVERED = ("Accuracy", "Brier score", "NLL", "ECE (L1)", "ECE (L2)", "MCE", "ACE (classwise)",
           "ACE (top-label)", "Debiased squared ECE (L2²)")


def coverage(reps: int, rows: int, resamples: int) -> None:
    from core import metrics

    truth_frame = scale_table(4_000_000, seed=99)
    data = AuditData.from_mapping(truth_frame, MAPPING)
    truth = metrics.metrics_table(data.probs, data.y, n_resamples=0).set_index("metric")[
        "value"]
    del truth_frame, data
    settings = AuditSettings(part="all", n_bootstrap=resamples, grid_features=2,
                             grid_resamples=1, test_resamples=1)
    hits = {name: np.zeros(2) for name in COVERED}
    widths = {name: np.zeros(2) for name in COVERED}
    began = time.perf_counter()
    print(f"n = {rows:,}, B = {resamples}, {reps} tables; {load()}", flush=True)
    for rep in range(reps):
        frame = scale_table(rows, seed=20_000 + rep)
        data = AuditData.from_mapping(frame, MAPPING)
        table = metrics.metrics_table(data.probs, data.y, n_resamples=resamples, seed=rep)
        streamed = run_stream_audit(open_source(frame), MAPPING,
                                    AuditSettings(**{**settings.__dict__, "seed": rep}),
                                    sample_rows=1000).result.reliability.metrics
        for k, frame_ in enumerate((table.set_index("metric"), streamed.set_index("metric"))):
            for name in COVERED:
                low, high = frame_.loc[name, "ci_low"], frame_.loc[name, "ci_high"]
                hits[name][k] += low <= truth[name] <= high
                widths[name][k] += high - low
        if (rep + 1) % 25 == 0:
            print(f"  {rep + 1} tables ({time.perf_counter() - began:.0f} s)", flush=True)
    print("| metric | population value | coverage, in-memory bootstrap | coverage, Poisson "
          "bootstrap (streamed) | mean width, in memory | mean width, Poisson |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in COVERED:
        rates = hits[name] / reps
        se = np.sqrt(rates * (1 - rates) / reps)
        print(f"| {name} | {truth[name]:.5f} | {rates[0]:.3f} ± {se[0]:.3f} | "
              f"{rates[1]:.3f} ± {se[1]:.3f} | {widths[name][0] / reps:.5f} | "
              f"{widths[name][1] / reps:.5f} |")
    print(f"95% basic intervals; ± one binomial SE √(r(1 − r)/R). "
          f"{time.perf_counter() - began:.0f} s; {load()}")


# --------------------------------------------------------------------------- large runs


def write_folder(folder: Path, rows: int) -> None:
    """The scale table, ``rows`` rows, as Parquet files of :data:`FILE_ROWS` rows written
    one at a time (row groups of :data:`ROW_GROUP` rows): never more than a file in memory."""
    folder.mkdir(parents=True, exist_ok=True)
    for k, start in enumerate(range(0, rows, FILE_ROWS)):
        size = min(FILE_ROWS, rows - start)
        scale_table(size, seed=1_000 + k).to_parquet(folder / f"part-{k:05d}.parquet",
                                                     index=False, row_group_size=ROW_GROUP)


def write_single(path: Path, rows: int, layout: str) -> None:
    """One table of :func:`scale_table` rows: ``"benchmark"`` one Parquet file of row groups
    of :data:`ROW_GROUP` rows, ``"pandas"`` ``DataFrame.to_parquet`` with no options (pyarrow's
    default row groups, 1,048,576 rows), ``"one-group"`` a single row group of every row,
    ``"folder"`` the same rows as a folder of :data:`FILE_ROWS`-row files of
    :data:`ROW_GROUP`-row groups (the layout of :func:`write_folder`, the same table as the
    single files)."""
    frame = scale_table(rows)
    if layout == "folder":
        path.mkdir(parents=True, exist_ok=True)
        for k, start in enumerate(range(0, rows, FILE_ROWS)):
            frame.iloc[start:start + FILE_ROWS].to_parquet(
                path / f"part-{k:05d}.parquet", index=False, row_group_size=ROW_GROUP)
    elif layout == "pandas":
        frame.to_parquet(path, index=False)
    else:
        frame.to_parquet(path, index=False,
                         row_group_size=ROW_GROUP if layout == "benchmark" else rows)


#: Rows and resamples of the in-run baseline that :func:`large` times the command against.
BASELINE_ROWS, BASELINE_RESAMPLES = 1_000_000, 10


def baseline_seconds(data: Path) -> float:
    """The in-run baseline of :func:`large`: read the first :data:`BASELINE_ROWS` rows of the
    table (its first file) and compute the binned ECE with a bootstrap of
    :data:`BASELINE_RESAMPLES` resamples, on one thread — a fixed amount of reading and
    arithmetic that puts the command's time on any machine as a ratio."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from threadpoolctl import threadpool_limits

    from core.metrics.binned import ece
    from core.metrics.global_metrics import bootstrap_ci

    first = data if data.is_file() else sorted(data.rglob("*.parquet"))[0]
    start = time.perf_counter()
    with threadpool_limits(1):
        batches, held = [], 0
        for batch in pq.ParquetFile(first).iter_batches(batch_size=1 << 16,
                                                        columns=["label", "prob"]):
            batches.append(batch)
            held += batch.num_rows
            if held >= BASELINE_ROWS:
                break
        frame = pa.Table.from_batches(batches).to_pandas().iloc[:BASELINE_ROWS]
        probs, y = frame["prob"].to_numpy(), frame["label"].to_numpy().astype(int)
        ece(probs, y)
        bootstrap_ci(ece, probs, y, n_resamples=BASELINE_RESAMPLES, seed=0)
    return time.perf_counter() - start


def run_command(command: list[str], log_path: Path, workers: list, env: dict | None = None,
                cwd: Path | None = None) -> dict:
    """Run the command in a child process, its output into ``log_path`` (a pipe read only at
    the end fills, about 650 progress lines, and blocks the command writing to it), polling
    the resident memory of the command and of every worker process of ``workers``: its wall
    time, CPU seconds, peak memory by process and output.

    The CPU seconds are user + system time of the command and of every process it started
    (the figure browser's processes, the PDF printer), each process's own time as last seen
    by the polling (every 0.2 s): the figure browser's processes are not all waited for by
    the command, so the operating system's count of waited-for children misses most of
    their time."""
    import psutil

    start = time.perf_counter()
    own: dict[tuple[int, float], float] = {}  # (pid, start time) → own CPU seconds seen

    def sample(process) -> None:
        try:
            times = process.cpu_times()
            own[process.pid, process.create_time()] = times.user + times.system
        except psutil.Error:
            pass

    with open(log_path, "w+") as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, text=True,
                                 env=env, cwd=cwd)
        watched = {"command": psutil.Process(child.pid)}
        for k, process in enumerate(workers):
            watched[f"worker {k + 1}"] = psutil.Process(process.pid)
        peaks = dict.fromkeys(watched, 0)
        while child.poll() is None:
            for name, process in watched.items():
                try:
                    family = [process, *process.children(recursive=True)]
                    if name == "command":
                        for member in family:
                            sample(member)
                        family = [process]
                    rss = sum(p.memory_info().rss for p in family)
                    peaks[name] = max(peaks[name], rss)
                except psutil.Error:
                    continue
            time.sleep(0.2)
        wall = time.perf_counter() - start
        log.seek(0)
        lines = log.read().splitlines()
    return {"wall": wall, "cpu": sum(own.values()), "peaks": peaks, "lines": lines,
            "returncode": child.returncode}


def script_code(tree: Path) -> str:
    """What the tree's ``calibration-atlas`` console script runs (its ``pyproject.toml``'s
    ``module:function``), as ``python -c`` code: each tree's command as installed."""
    with open(tree / "pyproject.toml", "rb") as file:
        target = tomllib.load(file)["project"]["scripts"]["calibration-atlas"]
    module, function = target.split(":")
    return f"import sys; from {module} import {function}; sys.exit({function}())"


def large(rows: int, workers: int, folder: Path | None, keep: bool, single: bool = False,
          formats: str | None = "png,html", layout: str = "benchmark", stream: bool = False,
          memory: str | None = None, before: Path | None = None, rounds: int = 1) -> None:
    """The command-line audit of a generated table (module doc). With ``before`` (a copy of
    the code to compare with, e.g. ``git archive main | tar -x -C /tmp/main``), the command
    runs ``rounds`` times with that tree's ``core`` and this one's, one after the other
    (the tree's console script, :func:`script_code`, with the tree first on
    ``PYTHONPATH``, the in-run baseline measured before each round), and each run's wall
    time, CPU seconds and ratio to the baseline are printed, then the ratios before/after."""
    base = Path(folder) if folder else Path(tempfile.mkdtemp(prefix="ca-stream-"))
    base.mkdir(parents=True, exist_ok=True)
    data = base / (f"scale-{rows}-{layout}" + (".parquet" if layout != "folder" else "")
                   if single else f"scale-{rows}")
    out = base / "report"
    began = time.perf_counter()
    if not data.exists():
        if single:  # one file: audited in memory while it fits the memory budget
            write_single(data, rows, layout)
        else:
            write_folder(data, rows)
    files = list(data.iterdir()) if data.is_dir() else [data]
    print(f"wrote {rows:,} rows to {data} in {time.perf_counter() - began:.0f} s "
          f"({sum(f.stat().st_size for f in files) / 2**30:.2f} GiB); {load()}",
          flush=True)
    options = ["audit", str(data), "--label", "label", "--prob", "prob", "--features",
               ",".join(SCALE_FEATURES), "--groups", "region", "--out", str(out),
               *(["--formats", formats] if formats else []), *(["--stream"] if stream else []),
               *(["--memory", memory] if memory else [])]
    processes = []
    command = [str(Path(sys.executable).parent / "calibration-atlas"), *options]
    try:
        if workers:
            port = 8786 + (os.getpid() % 1000)
            dask = str(Path(sys.executable).parent / "dask")
            scheduler = subprocess.Popen([dask, "scheduler", "--port", str(port),
                                          "--dashboard-address", ":0", "--no-show"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            processes.append(scheduler)
            time.sleep(3)
            for _ in range(workers):
                processes.append(subprocess.Popen(
                    [dask, "worker", f"tcp://127.0.0.1:{port}", "--nthreads", "1",
                     "--nworkers", "1", "--memory-limit", "3GiB", "--no-dashboard"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(5)
            command += ["--dask", f"tcp://127.0.0.1:{port}"]
            options += ["--dask", f"tcp://127.0.0.1:{port}"]
        if before is not None:
            compare_trees(options, Path(before), rounds, data, out, base)
            return
        baseline = baseline_seconds(data)
        print(f"baseline (read {BASELINE_ROWS:,} rows, binned ECE with "
              f"{BASELINE_RESAMPLES} bootstrap resamples, one thread): {baseline:.1f} s",
              flush=True)
        print("running:", " ".join(command), flush=True)
        load_before = load()
        run = run_command(command, base / "command.log", processes[1:])
        wall = run["wall"]
        for line in run["lines"]:
            if line.startswith(("audit  [", "report [")):
                continue  # progress lines: the passes' times follow
            print(" ", line)
        print(f"exit status {run['returncode']}; wall time {wall:.1f} s ({wall / 60:.1f} min) "
              f"= {wall / baseline:.1f} × the baseline; CPU {run['cpu']:.1f} s")
        for name, peak in run["peaks"].items():
            print(f"peak resident memory, {name}: {peak / 2**20:,.0f} MiB")
        print(f"{load_before} before, {load()} after")
        if out.exists():
            sizes = {f.name: f.stat().st_size for f in out.rglob("*") if f.is_file()}
            html, total = sizes.get("report.html", 0), sum(sizes.values())
            print(f"report.html {html:,} bytes ({html / 1e6:.2f} MB); output folder "
                  f"{total:,} bytes ({total / 1e6:.2f} MB) in {len(sizes)} files")
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        if not keep:
            if single and not data.is_dir():
                data.unlink(missing_ok=True)
            shutil.rmtree(base if folder is None else data, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)


def compare_trees(options: list[str], before: Path, rounds: int, data: Path, out: Path,
                  base: Path) -> None:
    """:func:`large` with ``before``: the command with the ``before`` tree's code and with
    this one's, one after the other, ``rounds`` times; a table of every run, then the
    before/after ratios of the wall times (by round and of the sums), of the CPU seconds and
    of the ratios to the baselines."""
    here = Path(__file__).resolve().parents[1]
    trees = {"before": before.resolve(), "after": here}
    check = "import core, pathlib; print(pathlib.Path(core.__file__).parents[1])"
    for name, tree in trees.items():  # each tree's command imports its own code
        found = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=str(tree)), cwd=tree)
        if Path(found.stdout.strip()).resolve() != tree:
            raise SystemExit(f"the {name} tree's command imports core from "
                             f"{found.stdout.strip() or found.stderr}, not from {tree}")
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    print("| round | code | baseline (s) | wall (s) | × baseline | CPU (s) | exit | load "
          "before → after |")
    print("|---:|---|---:|---:|---:|---:|---:|---|")
    for r in range(1, rounds + 1):
        baseline = baseline_seconds(data)
        for name, tree in trees.items():
            shutil.rmtree(out, ignore_errors=True)
            env = dict(os.environ, PYTHONPATH=str(tree))
            one = load().removeprefix("load average ")
            # in the tree's folder: ``python -c`` puts the working folder first on the path
            run = run_command([sys.executable, "-c", script_code(tree), *options],
                              base / f"{name}.log",
                              [], env, cwd=tree)
            run["baseline"] = baseline
            runs[name].append(run)
            print(f"| {r} | {name} | {baseline:.2f} | {run['wall']:.1f} | "
                  f"{run['wall'] / baseline:.1f} | {run['cpu']:.1f} | {run['returncode']} | "
                  f"{one} → {load().removeprefix('load average ')} |", flush=True)
    walls = [b["wall"] / a["wall"] for b, a in zip(runs["before"], runs["after"], strict=True)]
    total = {name: sum(run["wall"] for run in done) for name, done in runs.items()}
    cpu = {name: sum(run["cpu"] for run in done) for name, done in runs.items()}
    scaled = {name: sum(run["wall"] / run["baseline"] for run in done) / len(done)
              for name, done in runs.items()}
    print(f"before/after: wall {', '.join(f'{w:.2f}' for w in walls)} by round, "
          f"{total['before'] / total['after']:.2f} in all ({total['before']:.1f} s / "
          f"{total['after']:.1f} s); CPU {cpu['before'] / cpu['after']:.2f} "
          f"({cpu['before']:.1f} s / {cpu['after']:.1f} s); × baseline "
          f"{scaled['before']:.1f} → {scaled['after']:.1f} "
          f"({scaled['before'] / scaled['after']:.2f})")
    print(f"trees: before {trees['before']}, after {trees['after']}")


def lane_timeline(rows: int) -> None:
    """The 10⁶-row command run in this process as the command line runs it (its two lanes
    side by side, then the report), with every piece's start and end: where the wall time
    goes, and how well the lanes are balanced."""
    import threading

    from core import cli
    from core.audit.store import SectionStore

    began, log = time.perf_counter(), []
    original = SectionStore.section

    def timed(store, section, data, settings, progress=None):
        start = time.perf_counter()
        value = original(store, section, data, settings, progress)
        log.append((section.__name__, start - began, time.perf_counter() - began,
                    threading.current_thread().name))
        return value

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scale.parquet"
        scale_table(rows).to_parquet(path, index=False, row_group_size=ROW_GROUP)
        print(f"n = {rows:,}; {load()}", flush=True)
        try:
            SectionStore.section = timed
            began = time.perf_counter()
            cli.main(["audit", str(path), "--label", "label", "--prob", "prob", "--features",
                      ",".join(SCALE_FEATURES), "--groups", "region", "--out",
                      str(Path(folder) / "report"), "--formats", "png,html"])
            ended = time.perf_counter() - began
        finally:
            SectionStore.section = original
    lanes = {thread: f"lane {k + 1}" for k, thread in
             enumerate(dict.fromkeys(row[3] for row in sorted(log, key=lambda r: r[1])))}
    print("| piece | lane | start (s) | end (s) | seconds |")
    print("|---|---|---:|---:|---:|")
    for name, start, end, thread in sorted(log, key=lambda r: r[1]):
        print(f"| {name} | {lanes[thread]} | {start:.1f} | {end:.1f} | {end - start:.1f} |")
    print(f"command (loading, audit, report) {ended:.1f} s; {load()}")


def profile_audit(rows: int, top: int) -> None:
    """The 10⁶-row command's work, one piece after another (the command runs the Reliability
    page's numbers beside the local pages'), under pyinstrument: what takes the time."""
    from pyinstrument import Profiler

    from core.audit import SectionStore
    from core.cli import audit as audit_command
    from core.cli import entry
    from core.report import build_report

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scale.parquet"
        scale_table(rows).to_parquet(path, index=False, row_group_size=ROW_GROUP)
        options = entry.build_parser().parse_args(
            ["audit", str(path), "--label", "label", "--prob", "prob", "--features",
             ",".join(SCALE_FEATURES), "--groups", "region", "--formats", "png,html"])
        print(f"n = {rows:,}; {load()}", flush=True)
        profiler = Profiler()
        profiler.start()
        data = audit_command.load_audit(options)
        settings = audit_command.audit_settings_from_options(options, data)
        result = run_audit(data, settings, store=SectionStore())
        build_report(result, data, formats=("png", "html"), shared_plotly=True)
        profiler.stop()
    text = profiler.output_text(unicode=True, color=False, show_all=False)
    print("\n".join(text.splitlines()[:top]))
    print(load())


def calibrate() -> None:
    from core.kernels import computation
    from core.kernels.resampling import row_bernoulli_residuals
    from core.kernels.rff import FourierMap, accumulate_maps

    rng = np.random.default_rng(0)
    n, d = 200_000, 4
    points, p = rng.standard_normal((n, d)), rng.random(n)
    residuals = (rng.random(n) < p) - p

    def best(call) -> float:
        call()
        times = []
        for _ in range(3):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        return min(times)

    def columns_of(width: int):
        E = np.column_stack([residuals, rng.standard_normal((n, width - 1))])
        return lambda rows: E[rows]

    print(f"{load()}", flush=True)
    exact = computation.measured_seconds_per_pair_column("threads")
    maps = np.ones((1, d))
    fourier = FourierMap.draw(d, 256, 0)
    wide = best(lambda: accumulate_maps(points, columns_of(201), fourier, maps))
    narrow = best(lambda: accumulate_maps(points, columns_of(1), fourier, maps))
    product = (wide - narrow) / (n * 256 * 200)
    feature = narrow / (n * 256)
    draws = best(lambda: [row_bernoulli_residuals(p[s:s + 8192], s, 200, 0)
                          for s in range(0, n, 8192)]) / (n * 200)
    print("| unit | measured (s) | fixed in core.kernels.computation (s) |")
    print("|---|---:|---:|")
    for name, value, fixed in (
            ("row · feature · column of a chunk product", product,
             computation.RFF_PRODUCT_SECONDS),
            ("row · feature (cosine and sine)", feature, computation.RFF_FEATURE_SECONDS),
            ("row · resample (a label draw, one thread; the plan halves it: two threads)",
             draws, computation.RFF_DRAW_SECONDS),
            ("pair · column of the exact tile sum (both threads)", exact,
             computation.EXACT_PAIR_SECONDS)):
        print(f"| {name} | {value:.2e} | {fixed:.1e} |")
    print(f"{load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    equal = commands.add_parser("equality")
    equal.add_argument("--rows", type=int, default=1_000_000)
    lev = commands.add_parser("level")
    lev.add_argument("--reps", type=int, default=300)
    lev.add_argument("--rows", type=int, default=100_000)
    lev.add_argument("--start", type=int, default=0)
    sl = commands.add_parser("slices-level")
    sl.add_argument("--reps", type=int, default=300)
    sl.add_argument("--rows", type=int, default=100_000)
    sl.add_argument("--sample-rows", type=int, default=20_000)
    sl.add_argument("--resamples", type=int, default=200)
    sl.add_argument("--start", type=int, default=0)
    cov = commands.add_parser("coverage")
    cov.add_argument("--reps", type=int, default=200)
    cov.add_argument("--rows", type=int, default=20_000)
    cov.add_argument("--resamples", type=int, default=200)
    big = commands.add_parser("large")
    big.add_argument("--rows", type=int, default=10_000_000)
    big.add_argument("--workers", type=int, default=0)
    big.add_argument("--folder", type=Path, default=None)
    big.add_argument("--keep", action="store_true", help="keep the generated data")
    big.add_argument("--formats", default="png,html",
                     help="the command's --formats ('' for its default, all four)")
    big.add_argument("--layout", choices=("benchmark", "pandas", "one-group", "folder"),
                     default="benchmark",
                     help="with --single-file: one file of row groups of 131,072 rows "
                          "(benchmark), pandas' default (1,048,576) or one row group of every "
                          "row; or the same table as a folder of 1,000,000-row files")
    big.add_argument("--stream", action="store_true", help="pass --stream to the command")
    big.add_argument("--memory", default=None, help="pass --memory GB to the command")
    big.add_argument("--single-file", action="store_true",
                     help="one table generated at once: one Parquet file (audited in memory "
                          "up to 2,000,000 rows), or with --layout folder its rows as a folder")
    big.add_argument("--before", type=Path, default=None,
                     help="a copy of the code to compare with (git archive main | tar -x -C "
                          "DIR): its command and this one's, one after the other")
    big.add_argument("--rounds", type=int, default=2,
                     help="with --before: how many times each runs (alternating)")
    prof = commands.add_parser("profile")
    prof.add_argument("--rows", type=int, default=1_000_000)
    prof.add_argument("--top", type=int, default=70)
    lanes = commands.add_parser("lanes")
    lanes.add_argument("--rows", type=int, default=1_000_000)
    commands.add_parser("calibrate")
    args = parser.parse_args()
    if args.command == "equality":
        equality(args.rows)
    elif args.command == "level":
        level(args.reps, args.rows, args.start)
    elif args.command == "slices-level":
        slices_level(args.reps, args.rows, args.sample_rows, args.resamples, args.start)
    elif args.command == "coverage":
        coverage(args.reps, args.rows, args.resamples)
    elif args.command == "profile":
        profile_audit(args.rows, args.top)
    elif args.command == "lanes":
        lane_timeline(args.rows)
    elif args.command == "calibrate":
        calibrate()
    else:
        large(args.rows, args.workers, args.folder, args.keep, args.single_file, args.formats,
              args.layout, args.stream, args.memory, args.before, args.rounds)


if __name__ == "__main__":
    main()
