"""In the system Chromium: an auditor's whole path through the app on the census demo.

Data → Reliability → Trust test (a bandwidth slider moves the p-value) → Local bias →
Findings (the planted age × race cell on top) → LCE landscape → Recalibration (Compare the
default methods) → Export (a PNG from a chart's export control, a zip of PNG and SVG figures
and the HTML report, each file checked; the report's slice table is the library's). A
screenshot of every page goes to the test's output folder (``.screenshots/walkthrough-*.png``).
Each step is a function in :data:`STEPS`; a new page's step is one more entry.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from core.audit.rows import slice_frame
from core.data.demo import load_demo
from core.local import discover_slices
from core.report.schema import SCHEMA_VERSION
from tests.e2e.conftest import requires_chromium, screenshot
from tests.report_fixtures import parse_svg, png_size

pytestmark = [requires_chromium, pytest.mark.e2e]
SLOW = 600_000  # ms: the Export page's audit on 5,000 rows at the default resamples
#: A src/href or CSS url() that would fetch from another host.
REMOTE = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?\s*https?:""",
                    re.IGNORECASE)


def open_page(page, name: str) -> None:
    page.get_by_role("link", name=name, exact=True).click()


def no_traceback(page) -> None:
    assert page.get_by_text("Traceback").count() == 0


def metric_value(page, label: str) -> str:
    metric = page.locator('[data-testid="stMetric"]').filter(has_text=label)
    return metric.locator('[data-testid="stMetricValue"]').inner_text()


def download(page, button_name: str, folder: Path) -> Path:
    with page.expect_download(timeout=SLOW) as info:
        page.get_by_role("button", name=button_name).click()
    path = folder / info.value.suggested_filename
    info.value.save_as(path)
    return path


def data_step(page, folder: Path) -> None:
    page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()
    page.get_by_role("heading", name="Validation report").wait_for()


def reliability_step(page, folder: Path) -> None:
    open_page(page, "Reliability")
    page.get_by_role("heading", name="Calibration tests").wait_for()
    page.get_by_text("finds no evidence of miscalibration").wait_for()
    page.locator(".js-plotly-plot:visible").nth(1).wait_for()  # diagram tab + group grid


def trust_step(page, folder: Path) -> None:
    open_page(page, "Trust test")
    page.get_by_text("the aggregated KLCE test rejects").wait_for(timeout=SLOW)
    page.get_by_role("heading", name="At one bandwidth pair").wait_for()
    page.locator(".js-plotly-plot:visible").nth(1).wait_for()  # diagram tab + group grid
    before = metric_value(page, "p-value")
    slider = page.locator('[data-testid="stSlider"]').filter(
        has_text="Feature bandwidth").get_by_role("slider")
    slider.focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")  # ×1 → ×1/4 of the median heuristic
    page.wait_for_function(
        """before => [...document.querySelectorAll('[data-testid="stMetric"]')]
            .some(m => m.innerText.includes('p-value') &&
                  !m.innerText.includes(before))""", arg=before, timeout=SLOW)
    assert metric_value(page, "p-value") != before
    page.get_by_text("At these bandwidths the KLCE test rejects").wait_for(timeout=SLOW)
    # a PNG through the heat map's export control
    page.locator('[data-testid="stPopover"] button').first.click()  # PNG is the default
    page.get_by_role("button", name="Prepare file").first.click()
    png = download(page, "Download trust_heatmap.png", folder)
    width, height = png_size(png.read_bytes())
    assert width == 2000 and height > 720
    page.keyboard.press("Escape")


def local_bias_step(page, folder: Path) -> None:
    open_page(page, "Local bias")
    page.get_by_text("is the Findings page").wait_for(timeout=SLOW)
    page.locator(".js-plotly-plot").first.wait_for()


def findings_step(page, folder: Path) -> None:
    open_page(page, "Findings")
    page.get_by_text("family-wise error rate controlled at α = 0.05").wait_for(timeout=SLOW)
    page.get_by_text("not shown to be calibrated").first.wait_for()
    # the planted age × race cell is the first row of the findings table
    table = page.locator('[data-testid="stDataFrame"]').first
    table.wait_for()
    page.get_by_role("heading", name="Look closer at one slice").wait_for(timeout=SLOW)
    page.locator(".js-plotly-plot").nth(3).wait_for(timeout=SLOW)  # forest, treemap, 2 closer
    assert page.locator(".js-plotly-plot").filter(has_text="age 58–88 ∧ race = Black").count()


def lce_step(page, folder: Path) -> None:
    open_page(page, "LCE landscape")
    page.get_by_role("heading", name="MLCE against the bandwidth").wait_for(timeout=SLOW)
    page.locator(".js-plotly-plot").nth(2).wait_for()


def recalibration_step(page, folder: Path) -> None:
    open_page(page, "Recalibration")
    page.get_by_text("Choose the methods and press").wait_for(timeout=SLOW)
    page.get_by_role("button", name="Compare").click()
    page.get_by_role("heading", name="Scores on the test rows").wait_for(timeout=SLOW)
    page.get_by_role("heading", name="Local bias before and after").wait_for(timeout=SLOW)
    page.locator(".js-plotly-plot").nth(2).wait_for(timeout=SLOW)
    page.locator('[data-testid="stDataFrame"]').first.wait_for()
    # the KLCE p-value chart names every default method it scored
    page.locator(".js-plotly-plot").filter(has_text="group-temperature").first.wait_for()


def export_step(page, folder: Path) -> None:
    open_page(page, "Export")
    page.get_by_role("button", name="Run the audit").click()
    page.get_by_text("Audit of 5,000 rows (test)").wait_for(timeout=SLOW)
    # add SVG to the formats (PNG is the default) and prepare a zip of every figure
    formats = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Formats")
    formats.locator("input").click()
    page.keyboard.type("SVG")
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Prepare the files").click()
    archive = download(page, "Download figures.zip", folder)
    with zipfile.ZipFile(archive) as files:
        names = files.namelist()
        assert "figures/reliability.png" in names and "figures/lcb.svg" in names
        png_size(files.read("figures/reliability.png"))
        parse_svg(files.read("figures/lcb.svg"))
    page.get_by_role("button", name="Build the report").click()
    report = download(page, "Download report.html", folder)
    html = report.read_text(encoding="utf-8")
    assert "Summary of findings" in html and "Census-style loan default" in html
    assert "group-temperature" in html  # the Recalibration page's comparison is in the report
    assert REMOTE.search(html) is None and "<script" not in html
    assert "Findings: miscalibrated slices" in html and "age 58–88 ∧ race = Black" in html
    results = download(page, "Download results.json", folder)
    document = json.loads(results.read_bytes())
    assert document["schema_version"] == SCHEMA_VERSION
    # the report's slice table is the library's on the same rows and settings
    test = load_demo("census").split_part("test")
    library = discover_slices(test.probs, test.y,
                              slice_frame(test, ("age", "sex", "race")),
                              class_names=test.classes)
    reported = document["local"]["slices"]["table"]
    assert [row["slice"] for row in reported] == list(library.table["slice"])
    assert [row["p_adjusted"] for row in reported] == list(library.table["p_adjusted"])
    assert [row["gap"] for row in reported] == pytest.approx(list(library.table["gap"]),
                                                              rel=1e-12)
    pdf = download(page, "Download report.pdf", folder)
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert io.BytesIO(html.encode()).getbuffer().nbytes > 100_000  # figures embedded


#: The walk, in order: (screenshot name, step).
STEPS: list[tuple[str, Callable]] = [
    ("data", data_step),
    ("reliability", reliability_step),
    ("trust", trust_step),
    ("local-bias", local_bias_step),
    ("findings", findings_step),
    ("lce-landscape", lce_step),
    ("recalibration", recalibration_step),
    ("export", export_step),
]


def test_walkthrough(app_url: str, page, tmp_path: Path) -> None:
    page.goto(app_url)
    for name, step in STEPS:
        step(page, tmp_path)
        no_traceback(page)
        screenshot(page, f"walkthrough-{name}")
