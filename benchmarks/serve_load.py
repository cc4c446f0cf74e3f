"""Five people at once: concurrent Chromium sessions on one served app, each with its own
10⁵-row table, through Reliability, the Trust test and the Export page's report.

Starts ``streamlit run`` on a free loopback port (stored tables in a temporary folder),
generates one table per session (:func:`core.data.simulations.scale_table`, a different
seed each, written as Parquet), and drives every session in its own browser context at the
same time: upload, validate, Reliability (waits for the calibration tests), Trust test (the
aggregated verdict), Export (run the audit, build the report, read the report's fingerprint
back). Checks that every session completed, that each report names its own table and
fingerprint and no other session's, and prints the time per session, the server process's peak
resident memory and the peak PSS of it with its children, and the load average.

The server process's peak resident memory is held to a bound (``--bound-gib``, default 2 GiB
at 5 sessions × 10⁵ rows); the exporter's Chromium children are stated separately (their PSS
with the server's), as they are separate processes the operator sizes apart. The command
exits 1 when the bound is passed, a session did not complete, or results crossed sessions.

Soak (``--soak``): sessions come and go in waves — each wave the same number of new
browser sessions, each uploading one of the tables and running the whole walk, the contexts
closed at the wave's end — until ``--waves`` waves or ``--minutes`` minutes (a started wave
finishes), then the server's resident memory after the last wave is compared with its value
after the first: more than ``--growth`` (10 %) above it exits 1, as a leak across sessions.
Each reading comes ``--settle`` (45) seconds after the wave, past the served app's 30 s
release of freed heap (:mod:`dashboard.memory_release`), so it measures what the sessions
left behind rather than the allocator's free pages.
Every wave reuses the first wave's tables (people coming back with their tables); the
results caches are bounded by entry counts, so new tables each wave would fill them first.
Only loopback traffic: the server listens on 127.0.0.1 and Chromium reaches nothing else.

    .venv/bin/python -m benchmarks.serve_load                # 5 sessions × 100,000 rows
    .venv/bin/python -m benchmarks.serve_load --sessions 2 --rows 20000   # a quick look
    .venv/bin/python -m benchmarks.serve_load --soak --minutes 10         # the soak
    .venv/bin/python -m benchmarks.serve_load --soak --sessions 2 --rows 20000 --minutes 3
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from core.data.simulations import scale_table
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, serve


class PeakMemory:
    """Peak memory of the server, sampled every 0.5 s: the resident memory of the Streamlit
    process itself, and the proportional set size (PSS) of it and its children together (the
    static-figure exporter runs Chromium processes; PSS shares their common pages out once
    instead of counting them in every process, as a sum of resident sizes would)."""

    def __init__(self, pid: int) -> None:
        self.process, self.server, self.tree = psutil.Process(pid), 0, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                server = self.process.memory_full_info()
                tree = server.pss
                for child in self.process.children(recursive=True):
                    with contextlib.suppress(psutil.Error):  # a child that ended meanwhile
                        tree += child.memory_full_info().pss
                self.server, self.tree = max(self.server, server.rss), max(self.tree, tree)
            except psutil.Error:
                pass
            time.sleep(0.5)

    def close(self) -> tuple[int, int]:
        self.stop.set()
        self.thread.join()
        return self.server, self.tree


async def session(browser, url: str, table: Path, index: int, timings: dict,
                  timeout_s: float = 1800) -> dict:
    context = await browser.new_context(viewport={"width": 1400, "height": 2400})
    page = await context.new_page()
    page.set_default_timeout(timeout_s * 1000)
    start = time.perf_counter()
    marks = {}
    await page.goto(url)
    await page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()
    await page.get_by_role("tab", name="Upload a table").click()
    async with page.expect_file_chooser() as chooser:
        await page.locator('[data-testid="stFileUploaderDropzone"] button').click()
    await (await chooser.value).set_files(str(table))
    await page.get_by_role("button", name="Validate and use this table").click()
    await page.get_by_text(f"Now auditing {table.name}").wait_for()
    marks["upload"] = time.perf_counter() - start
    await page.get_by_role("link", name="Reliability").first.click()
    await page.get_by_role("heading", name="Calibration tests").wait_for()
    await page.get_by_role("heading", name="By group").wait_for()
    marks["reliability"] = time.perf_counter() - start
    await page.get_by_role("link", name="Trust test").first.click()
    await page.get_by_text(re.compile(r"at α = .*\(p [=≤<] \d")).first.wait_for()
    marks["trust"] = time.perf_counter() - start
    await page.get_by_role("link", name="Export").first.click()
    run = page.get_by_role("button", name="Run the audit")
    build = page.get_by_role("button", name="Build the report")
    await run.or_(build).first.wait_for()
    if await run.count():  # a table audited before (an earlier wave's) is served from cache
        await run.click()
    await build.click()
    button = page.get_by_role("button", name=re.compile("Download results.json"))
    await button.wait_for()
    async with page.expect_download() as download:
        await button.click()
    report = Path(await (await download.value).path()).read_text()
    marks["export"] = time.perf_counter() - start
    await context.close()
    timings[index] = marks
    return {"name": table.name, "report": report}


async def drive(url: str, tables: list[Path], options: argparse.Namespace,
                process: psutil.Process) -> list[dict]:
    """One wave, or in a soak waves until ``options.waves`` or ``options.minutes``; returns
    one record per wave: its sessions' results and timings, and the server's resident memory
    once the wave's sessions have gone."""
    from playwright.async_api import async_playwright

    waves = []
    start = time.monotonic()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            while True:
                timings: dict[int, dict] = {}
                began = time.monotonic()
                results = await asyncio.gather(*(session(browser, url, table, i, timings,
                                                         options.step_timeout)
                                                 for i, table in enumerate(tables)))
                await asyncio.sleep(options.settle)  # the closed sessions' state let go
                waves.append({"results": results, "timings": timings,
                              "seconds": time.monotonic() - began,
                              "rss": process.memory_info().rss})
                print(f"wave {len(waves)}: {len(results)} sessions in "
                      f"{waves[-1]['seconds']:.0f} s; server resident memory after it "
                      f"{waves[-1]['rss'] / 2**30:.2f} GiB", flush=True)
                if not options.soak or len(waves) >= options.waves or \
                        time.monotonic() - start >= options.minutes * 60:
                    return waves
        finally:
            await browser.close()


def crossings(results: list[dict]) -> tuple[int, list[str]]:
    """How many sessions' reports miss their own table or name another's, and a table row
    per session."""
    crossed, rows = 0, []
    for result in results:
        others = [r["name"] for r in results if r is not result]
        own = f'"name": "{result["name"]}"' in result["report"]
        leaked = [o for o in others if o in result["report"]]
        crossed += bool(leaked) or not own
        rows.append("yes" if own and not leaked else "NO: " + ", ".join(leaked))
    return crossed, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--bound-gib", type=float, default=2.0,
                        help="the server process's peak resident memory may not pass this "
                             "(GiB; default 2)")
    parser.add_argument("--soak", action="store_true",
                        help="sessions come and go in waves; the server's memory after the "
                             "last wave is compared with the first's")
    parser.add_argument("--minutes", type=float, default=10.0,
                        help="soak: start no wave after this many minutes (default 10)")
    parser.add_argument("--waves", type=int, default=50,
                        help="soak: at most this many waves (default 50)")
    parser.add_argument("--growth", type=float, default=0.10,
                        help="soak: the largest growth of the server's resident memory from "
                             "the first wave to the last (default 0.10)")
    parser.add_argument("--settle", type=float, default=45.0,
                        help="seconds after a wave before its memory is read (default 45: "
                             "longer than the server's 30 s memory release, so each reading "
                             "follows one)")
    parser.add_argument("--step-timeout", type=float, default=1800.0,
                        help="seconds a session may wait for one step (default 1800)")
    options = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="atlas-load-"))
    tables = []
    for i in range(options.sessions):
        path = folder / f"team-{i + 1}.parquet"
        frame = scale_table(options.rows, seed=100 + i)
        frame["split"] = ["calibration" if r % 2 else "test" for r in range(len(frame))]
        frame.to_parquet(path, index=False)
        tables.append(path)
    start = time.perf_counter()
    with serve(folder) as (url, process):
        memory = PeakMemory(process.pid)
        try:
            waves = asyncio.run(drive(url, tables, options, psutil.Process(process.pid)))
        finally:
            server_peak, tree_peak = memory.close()
    wall = time.perf_counter() - start
    print(f"{options.sessions} concurrent sessions, {options.rows:,} rows each "
          f"(half calibration, half test), one server on {psutil.cpu_count()} CPU cores")
    print("| session | table | upload s | reliability s | trust s | export s | own report |")
    print("|---|---|---:|---:|---:|---:|---|")
    first = waves[0]
    crossed, own = crossings(first["results"])
    for i, result in enumerate(first["results"]):
        marks = first["timings"][i]
        print(f"| {i + 1} | {result['name']} | {marks['upload']:.0f} | {marks['reliability']:.0f}"
              f" | {marks['trust']:.0f} | {marks['export']:.0f} | {own[i]} |")
    crossed += sum(crossings(wave["results"])[0] for wave in waves[1:])
    completed = all(len(wave["results"]) == options.sessions for wave in waves)
    within = server_peak <= options.bound_gib * 2**30
    print(f"{len(waves)} wave(s) of {options.sessions} sessions completed; results crossing "
          f"sessions: {crossed}; server process peak resident memory "
          f"{server_peak / 2**30:.2f} GiB (bound {options.bound_gib:g} GiB: "
          f"{'within' if within else 'PASSED'}); with its children (figure export's "
          f"Chromium) peak PSS {tree_peak / 2**30:.2f} GiB; wall {wall:.0f} s; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    steady = True
    if options.soak:
        growth = waves[-1]["rss"] / first["rss"] - 1
        steady = len(waves) >= 2 and growth <= options.growth
        print(f"soak: {len(waves)} waves, {len(waves) * options.sessions} sessions; server "
              f"resident memory after the first wave {first['rss'] / 2**30:.2f} GiB, after "
              f"the last {waves[-1]['rss'] / 2**30:.2f} GiB ({growth:+.1%}; at most "
              f"{options.growth:+.0%}: {'yes' if steady else 'NO'}); after each wave "
              + ", ".join(f"{w['rss'] / 2**30:.2f}" for w in waves) + " GiB")
    return 0 if crossed == 0 and completed and within and steady else 1


if __name__ == "__main__":
    sys.exit(main())
