"""One question, one answer (issue 31), in the system Chromium on the census demo: the Trust
page's single-pair p-value is its heat map's cell, the Compare page's KLCE p-value for the
champion is the Trust page's verdict, the Overview shows the five verdicts, and no interval the
report displays excludes its estimate."""

from __future__ import annotations

import html
import re

import pytest

from core.stattests import format_p_value
from tests.e2e.conftest import requires_chromium, screenshot, wait_for_script

pytestmark = [requires_chromium, pytest.mark.e2e]
SLOW = 600_000
QUESTIONS = ("Is the model calibrated overall?",
             "Is the model calibrated locally, for every kind of person?",
             "Where is it miscalibrated, and for whom?",
             "Which recalibration repairs it?",
             "Should the challenger replace the model in production?")
#: A cell holding an interval, ``[low, high]``, as the report writes it.
INTERVAL_CELL = re.compile(r"^\[(-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\]$")
#: An interval in a sentence, after its estimate and at most one remark in parentheses:
#: ``is 0.002 (bias-corrected; the plug-in value is 0.011), 95% interval [0.000, 0.009]``.
INTERVAL_SENTENCE = re.compile(
    r"(-?\d+\.\d+)(?: \([^()]*\))?,? \d+% interval \[(-?\d+\.\d+), (-?\d+\.\d+)\]")
BELOW_NOISE = "≈ 0"


def open_page(page, title: str) -> None:
    page.get_by_role("link", name=title).first.click()
    wait_for_script(page, SLOW)


def metric_value(page, label: str) -> str:
    metric = page.locator('[data-testid="stMetric"]').filter(
        has=page.locator('[data-testid="stMetricLabel"]', has_text=label))
    return metric.first.locator('[data-testid="stMetricValue"]').inner_text().strip()


def estimate_of(cell: str) -> float | None:
    """The number a displayed estimate cell stands for (``≈ 0 (below the noise)``: 0)."""
    text = html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
    if text.startswith(BELOW_NOISE):
        return 0.0
    try:
        return float(text)
    except ValueError:
        return None


def displayed_intervals(report: str) -> list[tuple[float, float, float, str]]:
    """Every (estimate, low, high, where) the report shows: a table cell ``[low, high]``
    after its estimate's cell, and a sentence ``estimate …, 95% interval [low, high]``."""
    found = []
    for row in re.findall(r"<tr>(.*?)</tr>", report, flags=re.S):
        cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, flags=re.S)
        for k, cell in enumerate(cells[1:], start=1):
            match = INTERVAL_CELL.match(html.unescape(cell).strip())
            estimate = estimate_of(cells[k - 1]) if match else None
            if estimate is not None:
                found.append((estimate, float(match[1]), float(match[2]), row[:120]))
    text = html.unescape(re.sub(r"<[^>]+>", " ", report))
    for match in INTERVAL_SENTENCE.finditer(text):
        found.append((float(match[1]), float(match[2]), float(match[3]), match[0][:120]))
    return found


def test_one_number_per_question_on_the_census_demo(app_url: str, browser, tmp_path) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    page = context.new_page()
    page.set_default_timeout(SLOW)
    page.goto(app_url)
    page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()

    # Trust: the single pair at the median heuristic is the heat map's centre cell
    open_page(page, "Trust test")
    page.get_by_text("one cell of the grid, not the verdict").first.wait_for()
    resamples = int(re.search(r"from B = (\d+) shared",
                              page.locator("body").inner_text())[1])
    heatmap = page.locator(".st-key-trust_heatmap .js-plotly-plot").first
    # plotly.js decodes the figure's binary-encoded arrays into its full data
    centre = heatmap.evaluate("plot => [plot._fullData[0].z[2][2], plot._fullData[0].text[2][2]]")
    cell_p = 10 ** centre[0]
    assert centre[1] == f"{cell_p:.3f}"
    assert metric_value(page, "p-value") == format_p_value(cell_p, resamples)
    trust_verdict = page.get_by_text(re.compile(r"max over 25 bandwidth pairs")).first
    trust_p = re.search(r"p (?:= )?([≤<]? ?[\d.]+)", trust_verdict.inner_text())[1]
    screenshot(page, "verdicts-trust")

    # Compare models: the champion's local-calibration p-value is the Trust page's verdict
    open_page(page, "Compare models")
    lines = page.get_by_text(re.compile("aggregated KLCE p")).first
    lines.wait_for()
    champion = re.search(r"champion \(A\).*?aggregated KLCE p = ([^)]+)\)",
                         lines.inner_text(), flags=re.S)[1]
    assert champion.strip() == trust_p.strip(), (champion, trust_p)

    # Overview: five questions, one verdict each
    open_page(page, "Overview")
    run = page.get_by_role("button", name="Run the audit")
    if run.count():
        run.click()
    page.get_by_text(re.compile(r"questions answered")).first.wait_for()
    wait_for_script(page, SLOW)  # the board is drawn below its heading, one verdict at a time
    body = page.locator("body").inner_text()
    for question in QUESTIONS:
        assert question in body, question
    screenshot(page, "verdicts-overview")

    # Export: every interval the report displays contains its estimate
    open_page(page, "Export")
    run, build = (page.get_by_role("button", name="Run the audit"),
                  page.get_by_role("button", name="Build the report"))
    run.or_(build).first.wait_for()
    if run.count():
        run.click()
    build.click()
    with page.expect_download(timeout=SLOW) as info:
        page.get_by_role("button", name="Download report.html").click()
    path = tmp_path / "report.html"
    info.value.save_as(path)
    report = path.read_text(encoding="utf-8")
    intervals = displayed_intervals(report)
    assert len(intervals) >= 5, intervals  # the metrics table at least
    for estimate, low, high, where in intervals:
        slack = 5e-4  # shown rounded to three or four decimals
        assert low - slack <= estimate <= high + slack, (estimate, low, high, where)
    context.close()
