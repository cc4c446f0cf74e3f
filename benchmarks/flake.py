"""The flake rate: the browser and cluster tests run N times in a row, failures per test.

Each run is one ``pytest`` process over the given paths with ``make test``'s own selection
(the ``-m 'not scale'`` of pyproject.toml), its results read back from a JUnit XML file. A
test that fails in any run is a failing test (STYLE: a flaky test is a failing test); the
table names each test that failed and in how many runs, and the command exits 1 when any
did. The runs stop after ``--runs`` or once ``--minutes`` have passed, whichever comes
first (a run already started finishes), so the loop is bounded.

``--busy N`` keeps N processes spinning on the CPU during every run: a slow, contended
machine (a cold CI runner) widens every race between the browser and the server, and the
race that dropped uploads (a file chosen while the Data page's tabs reran) failed one run
in two this way and passed every run on a quiet machine.

    .venv/bin/python -m benchmarks.flake --runs 10                # e2e and cluster tests
    .venv/bin/python -m benchmarks.flake --runs 3 tests/test_cluster.py   # one file
    .venv/bin/python -m benchmarks.flake --runs 5 --busy 3 tests/e2e/test_browser_team.py
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATHS = ("tests/e2e", "tests/test_cluster.py", "tests/test_cluster_tls.py")


def outcomes(report: Path) -> dict[str, str]:
    """``{test id: "passed" | "failed" | "skipped"}`` from one JUnit XML report (an error in
    a fixture counts as a failure)."""
    results = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        kinds = {child.tag for child in case}
        results[name] = ("failed" if kinds & {"failure", "error"} else
                         "skipped" if "skipped" in kinds else "passed")
    return results


def run_once(paths: list[str], report: Path, log: Path) -> tuple[int, dict[str, str]]:
    """One pytest process over ``paths``; its exit status and each test's outcome."""
    with log.open("w") as sink:
        status = subprocess.call(
            [sys.executable, "-m", "pytest", *paths, "-q", "-p", "no:cacheprovider",
             f"--junitxml={report}"], cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
    return status, (outcomes(report) if report.is_file() else {})


def _spin() -> None:
    while True:
        pass


@contextlib.contextmanager
def busy(processes: int):
    """``processes`` processes spinning on the CPU for the duration of the block."""
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(processes)]
    for spinner in spinners:
        spinner.start()
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.terminate()
            spinner.join()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=list(DEFAULT_PATHS),
                        help="test files or folders (default: the browser and cluster tests)")
    parser.add_argument("--runs", type=int, default=10, help="runs in a row (default 10)")
    parser.add_argument("--minutes", type=float, default=240.0,
                        help="start no run after this many minutes (default 240)")
    parser.add_argument("--busy", type=int, default=0,
                        help="processes kept spinning on the CPU during each run, to find "
                             "races a slow machine shows (default 0)")
    parser.add_argument("--logs", type=Path, default=None,
                        help="folder for each run's pytest output (default: a temporary one)")
    options = parser.parse_args(argv)
    logs = options.logs or Path(tempfile.mkdtemp(prefix="atlas-flake-"))
    logs.mkdir(parents=True, exist_ok=True)
    failures: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    start, done, broken_runs = time.monotonic(), 0, 0
    for k in range(1, options.runs + 1):
        if time.monotonic() - start > options.minutes * 60:
            break
        began = time.monotonic()
        with busy(options.busy):
            status, results = run_once(options.paths, logs / f"run-{k}.xml",
                                       logs / f"run-{k}.log")
        done += 1
        failed = sorted(name for name, outcome in results.items() if outcome == "failed")
        for name, outcome in results.items():
            seen[name] += outcome != "skipped"
        failures.update(failed)
        if status != 0 and not failed:  # pytest itself failed (collection, an internal error)
            failed = [f"pytest exited {status} (see {logs / f'run-{k}.log'})"]
            failures[failed[0]] += 1
        broken_runs += bool(failed)
        counts = Counter(results.values())
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        load += f", {options.busy} busy" if options.busy else ""
        print(f"run {k}: {counts['passed']} passed, {counts['failed']} failed, "
              f"{counts['skipped']} skipped in {time.monotonic() - began:.0f} s "
              f"(load average {load})" + "".join(f"\n  FAILED {name}" for name in failed),
              flush=True)
    print(f"\n{done} runs of {' '.join(options.paths)}: {broken_runs} with a failure; "
          f"{len(seen)} tests, {len(failures)} failed at least once; logs in {logs}")
    if failures:
        print("| test | runs | failed |\n|---|---:|---:|")
        for name, count in failures.most_common():
            print(f"| {name} | {seen.get(name, done)} | {count} |")
    return 1 if failures or done == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
