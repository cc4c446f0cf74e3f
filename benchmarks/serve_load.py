"""Five people at once: concurrent Chromium sessions on one served app, each with its own
10⁵-row table, through Reliability, the Trust test and the Export page's report.

Starts ``streamlit run`` on a free loopback port (stored tables in a temporary folder),
generates one table per session (:func:`core.data.simulations.scale_table`, a different
seed each, written as Parquet), and drives every session in its own browser context at the
same time: upload, validate, Reliability (waits for the calibration tests), Trust test (the
aggregated verdict), Export (run the audit, build the report, read the report's fingerprint
back). Checks that every session completed, that each report names its own table and
fingerprint and no other session's, and prints the time per session and the server's peak
resident memory (VmHWM of the server process and its children, from /proc).

    .venv/bin/python -m benchmarks.serve_load                # 5 sessions × 100,000 rows
    .venv/bin/python -m benchmarks.serve_load --sessions 2 --rows 20000   # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
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
    """The largest resident memory of a process and its children, sampled every 0.5 s."""

    def __init__(self, pid: int) -> None:
        self.process, self.peak, self.stop = psutil.Process(pid), 0, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                total = self.process.memory_info().rss + sum(
                    c.memory_info().rss for c in self.process.children(recursive=True))
                self.peak = max(self.peak, total)
            except psutil.Error:
                pass
            time.sleep(0.5)

    def close(self) -> int:
        self.stop.set()
        self.thread.join()
        return self.peak


async def session(browser, url: str, table: Path, index: int, timings: dict) -> dict:
    context = await browser.new_context(viewport={"width": 1400, "height": 2400})
    page = await context.new_page()
    page.set_default_timeout(1_800_000)
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
    await page.get_by_text(re.compile(r"at α = .*\(p = \d")).first.wait_for()
    marks["trust"] = time.perf_counter() - start
    await page.get_by_role("link", name="Export").first.click()
    await page.get_by_role("button", name="Run the audit").click()
    await page.get_by_role("button", name="Build the report").click()
    button = page.get_by_role("button", name=re.compile("Download results.json"))
    await button.wait_for()
    async with page.expect_download() as download:
        await button.click()
    report = Path(await (await download.value).path()).read_text()
    marks["export"] = time.perf_counter() - start
    await context.close()
    timings[index] = marks
    return {"name": table.name, "report": report}


async def drive(url: str, tables: list[Path], timings: dict) -> list[dict]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            return await asyncio.gather(*(session(browser, url, table, i, timings)
                                          for i, table in enumerate(tables)))
        finally:
            await browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--rows", type=int, default=100_000)
    options = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="atlas-load-"))
    tables = []
    for i in range(options.sessions):
        path = folder / f"team-{i + 1}.parquet"
        frame = scale_table(options.rows, seed=100 + i)
        frame["split"] = ["calibration" if r % 2 else "test" for r in range(len(frame))]
        frame.to_parquet(path, index=False)
        tables.append(path)
    timings: dict[int, dict] = {}
    start = time.perf_counter()
    with serve(folder) as (url, process):
        memory = PeakMemory(process.pid)
        try:
            results = asyncio.run(drive(url, tables, timings))
        finally:
            peak = memory.close()
    wall = time.perf_counter() - start
    crossed = 0
    print(f"{options.sessions} concurrent sessions, {options.rows:,} rows each "
          f"(half calibration, half test), one server on {psutil.cpu_count()} CPU cores")
    print("| session | table | upload s | reliability s | trust s | export s | own report |")
    print("|---|---|---:|---:|---:|---:|---|")
    for i, result in enumerate(results):
        others = [r["name"] for r in results if r is not result]
        own = f'"name": "{result["name"]}"' in result["report"]
        leaked = [o for o in others if o in result["report"]]
        crossed += bool(leaked) or not own
        marks = timings[i]
        print(f"| {i + 1} | {result['name']} | {marks['upload']:.0f} | {marks['reliability']:.0f}"
              f" | {marks['trust']:.0f} | {marks['export']:.0f} | "
              f"{'yes' if own and not leaked else 'NO: ' + ', '.join(leaked)} |")
    print(f"all {len(results)} sessions completed; results crossing sessions: {crossed}; "
          f"server peak resident memory {peak / 2**30:.2f} GiB; wall {wall:.0f} s")
    return 0 if crossed == 0 and len(results) == options.sessions else 1


if __name__ == "__main__":
    sys.exit(main())
