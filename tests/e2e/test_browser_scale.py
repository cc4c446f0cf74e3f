"""In the system Chromium (issue 13): a 10⁶-row Parquet file goes through the real file
chooser, is validated, and every page of the app renders on it without an error, within its
time budget, sending at most about 50,000 points to the browser per page.

It takes 6–8 minutes on a 2-core machine, so it is marked ``scale`` and left out of the
default run (``make test``); run it with ``make test-scale``.
"""

from __future__ import annotations

import time

import pytest

from core.data.simulations import scale_table
from dashboard.guard import FAILURE_PREFIX
from tests.app_pages import discover_pages
from tests.e2e.conftest import requires_chromium, screenshot
from tests.e2e.test_browser_realdata import WAIT_FOR_AN_ACTION
from tests.e2e.test_browser_upload import upload_through_file_chooser

pytestmark = [requires_chromium, pytest.mark.scale]

ROWS = 1_000_000
#: The issue's target for a page at 10⁶ rows, plus the browser's own rendering time.
PAGE_SECONDS = 180
#: Points the browser may receive per page: the ~50,000-point cap per chart, a few charts.
MAX_POINTS = 200_000

#: True while nothing on the page says it is still working.
IDLE = ("() => document.querySelector('[data-testid=\"stApp\"]')"
        "?.getAttribute('data-test-script-state') === 'notRunning' && "
        "!document.querySelector('[data-testid=\"stSpinner\"], "
        "[data-testid=\"stProgress\"], [data-testid=\"stSkeleton\"]')")


def wait_until_settled(page, seconds: float) -> None:
    """Wait until the page is idle and its charts and texts have stopped changing for three
    checks two seconds apart (a page at 10⁶ rows computes for a long time between charts)."""
    deadline, stable, last = time.monotonic() + seconds, 0, None
    while stable < 3:
        page.wait_for_timeout(2000)
        state = (page.evaluate(IDLE), page.locator(".js-plotly-plot").count(),
                 page.locator('[data-testid="stMarkdownContainer"]').count())
        stable = stable + 1 if state[0] and state == last else 0
        last = state
        assert time.monotonic() < deadline, f"still working after {seconds:.0f} s"


#: Data points plotly drew in every chart (``_fullData``: the arrays after decoding, since
#: numpy arrays travel as base64 typed arrays; ``_length`` is a trace's point count).
COUNT_POINTS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(
    plot => (plot._fullData || []).reduce((sum, trace) => sum + (trace._length ||
        (trace.z ? trace.z.length * ((trace.z[0] || []).length || 1) : 0) || 0), 0))"""


def test_a_million_row_parquet_reaches_every_page(app_url: str, page, tmp_path) -> None:
    path = tmp_path / "scale.parquet"
    scale_table(ROWS).to_parquet(path, index=False)
    page.goto(app_url)
    page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()
    start = time.monotonic()
    upload_through_file_chooser(page, path)
    page.get_by_text(f"Read {ROWS:,} rows × 6 columns from scale.parquet.").wait_for(
        timeout=120_000)
    page.get_by_role("button", name="Validate and use this table").click()
    page.get_by_text(f"Now auditing scale.parquet: {ROWS:,} rows passed validation.").wait_for(
        timeout=120_000)
    print(f"upload and validation: {time.monotonic() - start:.0f} s")
    screenshot(page, "scale-upload")

    for entry in discover_pages()[1:]:
        start = time.monotonic()
        page.get_by_role("link", name=entry.title).click()
        page.get_by_role("heading", name=entry.title).first.wait_for(timeout=60_000)
        drawn = entry.title not in WAIT_FOR_AN_ACTION
        if drawn:
            page.locator(".js-plotly-plot").first.wait_for(timeout=PAGE_SECONDS * 1000)
        wait_until_settled(page, PAGE_SECONDS)
        seconds = time.monotonic() - start
        points = page.evaluate(COUNT_POINTS)
        print(f"{entry.title}: {seconds:.0f} s, points per chart {points}")
        assert page.get_by_text(FAILURE_PREFIX).count() == 0, entry.title
        assert page.get_by_text("Traceback").count() == 0, entry.title
        assert page.get_by_text(f"{ROWS:,} rows · binary").count() >= 1, entry.title
        assert sum(points) <= MAX_POINTS, (entry.title, points)
        assert seconds <= PAGE_SECONDS, (entry.title, seconds)
        screenshot(page, f"scale-{entry.path.rsplit('/', 1)[-1].removesuffix('.py')}")
