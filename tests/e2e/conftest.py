"""Browser-test fixtures: a real `streamlit run` server on a free port and the system Chromium.

The tests are skipped, with the reason, only when no Chromium binary exists; CI installs
Debian's `chromium` package so they always run there. Screenshots land in `.screenshots/`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import APP, ROOT
from tests.system_programs import missing_reason

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]
SCREENSHOTS = ROOT / ".screenshots"
STARTUP_SECONDS = 90

requires_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason=f"no Chromium at {CHROMIUM}; " + missing_reason("chromium"),
)


#: True when the app's script is not running: Streamlit's own state on the app root
#: (``data-test-script-state``: initial, running, notRunning, rerunRequested, …), not the
#: status widget, which a toolbar mode can hide.
SCRIPT_IDLE = ("() => document.querySelector('[data-testid=\"stApp\"]')"
               "?.getAttribute('data-test-script-state') === 'notRunning'")


def wait_for_script(page, timeout_ms: float, pause_ms: float = 500) -> None:
    """Wait ``pause_ms`` for a rerun to start, then until the script has finished it."""
    page.wait_for_timeout(pause_ms)
    page.wait_for_function(SCRIPT_IDLE, timeout=timeout_ms)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited early:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"streamlit did not become healthy:\n{log.read_text()[-3000:]}")


@contextlib.contextmanager
def serve(folder: Path, env: dict[str, str] | None = None, port: int | None = None,
          args: tuple[str, ...] = ()):
    """A `streamlit run` of the app on 127.0.0.1 (its log and stored tables in ``folder``,
    ``env`` added to the environment); yields ``(url, process)`` and stops it after."""
    port = port or free_port()
    log = folder / f"server-{port}.log"
    environment = {**os.environ, "CALIBRATION_ATLAS_STORE": str(folder / "tables"),
                   **(env or {})}
    with log.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(APP), "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true",
             "--browser.gatherUsageStats", "false", *args],
            cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT, env=environment,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, log)
        yield url, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("streamlit")) as (url, _):
        yield url


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


def screenshot(page, name: str) -> Path:
    """Save the whole page: Streamlit scrolls inside its main block, so the viewport is first
    stretched to that block's height."""
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    height = page.evaluate(
        "() => document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight ?? 1000"
    )
    page.set_viewport_size({"width": page.viewport_size["width"], "height": min(height, 6000)})
    page.wait_for_timeout(500)
    page.screenshot(path=str(path), full_page=True)
    return path
