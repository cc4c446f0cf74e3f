"""In the system Chromium (issue 20): a COMPAS-shaped file — generated, with the real file's
outcome-derived columns (``event``, ``is_recid``, the ``r_*`` columns), identifiers and
dates — goes through the file chooser; the *Train a reference model* tab opens on it without
the chooser being touched, proposes no leaking column as a model feature and names each on the
page, proposes sex, age and race as audit features, and trains with those defaults; the
Recalibration page then draws the local bias before and after against age."""

from __future__ import annotations

from dashboard.guard import FAILURE_PREFIX
from tests.e2e.conftest import requires_chromium, screenshot
from tests.e2e.test_browser_realdata import wait_until_done
from tests.e2e.test_browser_upload import upload_through_file_chooser
from tests.realdata_tables import compas_like_frame

pytestmark = [requires_chromium]

NAME = "compas-scores-two-years.csv"
ROWS = 3_000
LEAKS = ("event", "is_recid", "r_charge_degree", "r_days_from_arrest", "r_charge_desc")
PAGE_SECONDS = 240


def chosen(page, label: str) -> list[str]:
    """The values a multiselect shows as chosen (its tags)."""
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text=label)
    return box.locator("span[data-tag]").evaluate_all(
        "tags => tags.map(tag => tag.getAttribute('aria-label'))")


def test_compas_upload_trains_on_defaults_without_the_outcome(app_url: str, page,
                                                              tmp_path) -> None:
    path = tmp_path / NAME
    compas_like_frame().iloc[:ROWS].to_csv(path, index=False)
    page.goto(app_url)
    page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()
    # the user looks at the reference tab first: it offers the census demo
    page.get_by_role("tab", name="Train a reference model").click()
    raw_table = page.get_by_role("combobox", name="Raw table")
    raw_table.wait_for()
    assert raw_table.input_value() == "demo: census features without the model's predictions"
    upload_through_file_chooser(page, path)
    page.get_by_text(f"Read {ROWS:,} rows × 51 columns from {NAME}.").wait_for()

    page.get_by_role("tab", name="Train a reference model").click()
    # the reference tab's panel only: the Upload tab's mapping form has an "Audit features"
    # box of its own, with the same guess, and while Streamlit redraws the tabs both panels
    # can be in the accessibility tree at once (its tags were then read twice)
    tab = page.get_by_role("tabpanel").filter(
        has_text="Not proposed — these columns separate the label by themselves")
    tab.wait_for(timeout=60_000)
    wait_until_done(page)
    assert raw_table.input_value() == f"uploaded: {NAME}"  # the chooser moved to the file
    text = tab.inner_text()
    for column in LEAKS:
        assert f"'{column}'" in text, column
    assert "'event' by itself separates 'two_year_recid' almost perfectly" in text
    assert "Proposed 3 of" in text  # the audit-feature proposal and what it left out
    model_features = chosen(tab, "Model features")
    assert not set(model_features) & set(LEAKS)
    assert not set(model_features) & {"id", "name", "c_case_number", "dob", "c_jail_in"}
    assert {"sex", "age", "race", "priors_count"} <= set(model_features)
    assert chosen(tab, "Audit features") == ["sex", "age", "race"]
    screenshot(page, "reference-defaults-compas")

    tab.get_by_role("button", name="Train and audit this model").click()
    page.get_by_text("rows passed validation").wait_for(timeout=PAGE_SECONDS * 1000)
    wait_until_done(page)
    assert page.get_by_text("Model feature 'event'").count() == 0  # not used, so no warning
    page.get_by_text("No model feature separates 'two_year_recid' by itself").first.wait_for()
    assert page.get_by_text("Traceback").count() == 0
    screenshot(page, "reference-defaults-trained")

    page.get_by_role("link", name="Recalibration").click()
    page.get_by_role("heading", name="Recalibration").first.wait_for(timeout=60_000)
    page.get_by_role("button", name="Compare").click()
    page.get_by_role("heading", name="Local bias before and after").wait_for(
        timeout=PAGE_SECONDS * 1000)
    wait_until_done(page)
    assert page.get_by_text("Choose a numeric audit feature").count() == 0
    assert page.get_by_text(FAILURE_PREFIX).count() == 0
    assert page.get_by_role("combobox", name="Against").input_value() == "age"
    # reliability diagrams, MLCE curves, KLCE p-values, LCB before and after
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 4",
                           timeout=PAGE_SECONDS * 1000)
    wait_until_done(page)
    screenshot(page, "reference-defaults-recalibration")
