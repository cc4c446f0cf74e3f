"""In the system Chromium (issues 20 and 29): a COMPAS-shaped file — generated, with the real
file's traps (``is_recid`` and the ``r_*`` columns; ``event``, ``end`` and the violent
reoffence columns with the real single-feature AUCs; a numeric ``id`` with gaps; near-unique
names; COMPAS's own scores) — goes through the file chooser of the Upload tab; being raw, it
opens the *Train a reference model* tab by itself, whose list ticks no suspect column and says
why each is left out, proposes sex, age and race as audit features, and trains with those
defaults to an honest test AUC; a reload brings the raw upload back; the Recalibration page then
draws the local bias before and after against age."""

from __future__ import annotations

from dashboard.guard import FAILURE_PREFIX
from tests.e2e.conftest import requires_chromium, screenshot
from tests.e2e.test_browser_realdata import wait_until_done
from tests.e2e.test_browser_upload import upload_through_file_chooser
from tests.realdata_tables import compas_like_frame

pytestmark = [requires_chromium]

NAME = "compas-scores-two-years.csv"
ROWS = 3_000
LEAKS = ("is_recid", "r_charge_degree", "r_days_from_arrest", "r_charge_desc")
SUSPECTS = ("event", "end", "is_violent_recid", "vr_charge_degree")
SCORES = ("decile_score", "score_text", "v_decile_score", "v_score_text")
PAGE_SECONDS = 240


def chosen(page, label: str) -> list[str]:
    """The values a multiselect shows as chosen (its tags)."""
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text=label)
    return box.locator("span[data-tag]").evaluate_all(
        "tags => tags.map(tag => tag.getAttribute('aria-label'))")


def ticked(page) -> dict[str, bool]:
    """The reference form's model-feature ticks: column → ticked."""
    return dict(page.locator('[class*="st-key-ref_feature_"] [data-testid="stCheckbox"]')
                .evaluate_all("boxes => boxes.map(b => [b.innerText.trim(), "
                              "b.querySelector('input').checked])"))


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
    page.get_by_role("tab", name="Upload a table").click()
    upload_through_file_chooser(page, path)
    # a raw table: the page says so and opens the Train tab with it, no mapping form
    page.get_by_text("has no predicted probabilities: train a reference model on it here").wait_for(
        timeout=60_000)
    tab = page.get_by_role("tabpanel")
    tab.get_by_text("Left out: the outcome itself, or likely recorded after it").wait_for(
        timeout=60_000)
    wait_until_done(page)
    assert page.get_by_role("tab", name="Train a reference model").get_attribute(
        "aria-selected") == "true"
    assert raw_table.input_value() == f"uploaded: {NAME}"  # the chooser moved to the file
    assert page.get_by_text("Choose at least one probability column").count() == 0
    text = tab.inner_text()
    for column in (*LEAKS, *SUSPECTS, *SCORES):
        assert f"'{column}'" in text, column
    assert "'end' is named like information recorded when or after the outcome" in text
    assert "Proposed 3 of" in text  # the audit-feature proposal and what it left out
    tab.get_by_text("other columns left out (identifiers, dates, unusable)").click()
    tab.get_by_text("'name' takes 2,989 different values in 3,000 rows").first.wait_for()
    boxes = ticked(page)
    assert len(boxes) == 50  # every column but the label, each with its status
    model_features = {c for c, on in boxes.items() if on}
    assert not model_features & {*LEAKS, *SUSPECTS, *SCORES}
    assert not model_features & {"id", "name", "c_case_number", "dob", "c_jail_in"}
    assert {"sex", "age", "race", "priors_count"} <= model_features
    assert chosen(tab, "Audit features") == ["sex", "age", "race"]
    screenshot(page, "reference-defaults-compas")

    # the raw upload survives a reload: the token went into the URL at upload time
    assert "table=" in page.url
    page.reload()
    page.get_by_text("Left out: the outcome itself, or likely recorded after it").wait_for(
        timeout=PAGE_SECONDS * 1000)
    wait_until_done(page)
    assert page.get_by_role("combobox", name="Raw table").input_value() == f"uploaded: {NAME}"
    tab = page.get_by_role("tabpanel")

    tab.get_by_role("button", name="Train and audit this model").click()
    page.get_by_text("rows passed validation").wait_for(timeout=PAGE_SECONDS * 1000)
    wait_until_done(page)
    assert page.get_by_text("Model feature 'event'").count() == 0  # not used, so no warning
    auc = page.get_by_text("Test AUC of the reference model:").inner_text()
    assert float(auc.rstrip(".").rsplit(" ", 1)[1]) <= 0.80, auc
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
