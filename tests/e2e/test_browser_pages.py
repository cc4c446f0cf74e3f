"""In the system Chromium: every analysis page renders its figures on the demo data."""

from __future__ import annotations

from tests.e2e.conftest import requires_chromium, screenshot

pytestmark = [requires_chromium]


def test_reliability_page(app_url: str, page) -> None:
    page.goto(app_url)
    page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()
    page.get_by_role("link", name="Reliability").click()
    page.get_by_role("heading", name="Calibration tests").wait_for()
    page.get_by_text("finds no evidence of miscalibration").wait_for()
    # the binned diagram and the per-group grid (the other tabs' figures are hidden)
    page.locator(".js-plotly-plot:visible").nth(1).wait_for()
    assert page.get_by_text("Traceback").count() == 0
    screenshot(page, "reliability-census")
    page.get_by_role("tab", name="Smooth").click()
    page.get_by_text("Kernel-smoothed curve").wait_for()
    page.get_by_text("smECE").first.wait_for()
    screenshot(page, "reliability-census-smooth")
    page.get_by_role("tab", name="Cumulative differences").click()
    page.get_by_text("Kuiper H").first.wait_for()
    assert page.get_by_text("Traceback").count() == 0
    screenshot(page, "reliability-census-cumulative")


def test_trust_page(app_url: str, page) -> None:
    page.goto(f"{app_url}/trust")
    page.get_by_text("the aggregated KLCE test rejects").wait_for(timeout=180_000)
    page.get_by_role("heading", name="At one bandwidth pair").wait_for()
    page.locator(".js-plotly-plot").nth(1).wait_for()  # heat map and null histogram
    assert page.get_by_text("Traceback").count() == 0
    screenshot(page, "trust-census")


def test_local_bias_page(app_url: str, page) -> None:
    page.goto(f"{app_url}/local_bias")
    page.get_by_text("is the Findings page").wait_for(timeout=180_000)
    page.locator(".js-plotly-plot").first.wait_for()
    assert page.get_by_text("Traceback").count() == 0
    screenshot(page, "local-bias-census")


def test_findings_page(app_url: str, page) -> None:
    page.goto(f"{app_url}/findings")
    page.get_by_text("family-wise error rate controlled").wait_for(timeout=180_000)
    page.get_by_role("heading", name="Look closer at one slice").wait_for(timeout=180_000)
    page.locator(".js-plotly-plot").nth(3).wait_for(timeout=180_000)  # forest, treemap, 2 more
    assert page.get_by_text("age 58–88 ∧ race = Black").count() > 0
    assert page.get_by_text("Traceback").count() == 0
    screenshot(page, "findings-census")


def test_lce_landscape_page(app_url: str, page) -> None:
    page.goto(f"{app_url}/lce_landscape")
    page.get_by_role("heading", name="MLCE against the bandwidth").wait_for(timeout=180_000)
    page.locator(".js-plotly-plot").nth(2).wait_for()  # landscape, CDF, MLCE curve
    assert page.get_by_text("Traceback").count() == 0
    screenshot(page, "lce-landscape-census")


def test_estimators_page(app_url: str, page) -> None:
    page.goto(f"{app_url}/estimators")
    page.get_by_text("Lowest validation risk").wait_for(timeout=300_000)
    page.get_by_role("heading", name="Calibration estimates").wait_for()
    page.locator(".js-plotly-plot").nth(2).wait_for()  # risk, grid curves, estimates
    assert page.get_by_text("Traceback").count() == 0
    screenshot(page, "estimators-census")
