"""In the system Chromium: the Compare models page on the census demo (its challenger) and on an
uploaded two-model table taken through the real file chooser; the sidebar's model choice."""

from __future__ import annotations

from tests.e2e.conftest import requires_chromium, screenshot
from tests.e2e.test_browser_upload import upload_through_file_chooser
from tests.test_compare import two_model_table

pytestmark = [requires_chromium]


def test_compare_page_on_the_demo(app_url: str, page) -> None:
    page.goto(app_url)
    page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()
    page.get_by_role("link", name="Compare models").click()
    page.get_by_text("Do not promote").first.wait_for(timeout=180_000)  # the headline first
    page.get_by_text("The full verdict").click()  # the paragraph behind it, folded
    page.get_by_text("is significantly worse in").wait_for()
    page.get_by_text("race = Asian").first.wait_for()
    page.get_by_role("heading", name="Per group: champion → challenger").wait_for()
    page.locator(".js-plotly-plot").nth(2).wait_for()  # differences, reliability, dumbbell
    assert page.get_by_text("Traceback").count() == 0
    screenshot(page, "compare-census")


def test_compare_page_on_an_uploaded_two_model_table(app_url: str, page, tmp_path) -> None:
    path = tmp_path / "two-models.csv"
    two_model_table(600).to_csv(path, index=False)
    page.goto(app_url)
    page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()
    upload_through_file_chooser(page, path)
    page.get_by_text("Read 600 rows × 5 columns from two-models.csv.").wait_for()
    page.get_by_role("button", name="Validate and use this table").click()
    page.get_by_text("Now auditing two-models.csv: 600 rows passed validation.").wait_for()
    page.get_by_text("models: p_prod, p_new").first.wait_for()  # the sidebar card
    page.get_by_role("link", name="Compare models").click()
    page.get_by_text("Rule:").first.wait_for(timeout=180_000)  # the headline and its rule
    page.get_by_text("The full verdict").click()
    page.get_by_text("Challenger 'p_new' against champion 'p_prod' on 600 rows").wait_for()
    page.get_by_role("heading", name="Where the challenger is worse").wait_for()
    page.locator(".js-plotly-plot").nth(2).wait_for()
    assert page.get_by_text("Traceback").count() == 0
    screenshot(page, "compare-upload")
