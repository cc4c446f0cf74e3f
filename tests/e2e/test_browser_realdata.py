"""In the system Chromium (issue 14): a COMPAS-shaped file with repeated headers goes through
the real file chooser, is validated with the guessed mapping, and every page of the app
(read from app.py's pages()) renders on it without an error or a stack trace."""

from __future__ import annotations

import numpy as np

from dashboard.guard import FAILURE_PREFIX
from tests.app_pages import discover_pages
from tests.e2e.conftest import requires_chromium, screenshot, wait_for_script
from tests.e2e.test_browser_upload import upload_through_file_chooser
from tests.realdata_tables import compas_like_frame

pytestmark = [requires_chromium]

ROWS = 400
#: How long one page may take to finish on the 400-row table (Trust: its bandwidth grid).
PAGE_SECONDS = 180


def compas_with_scores():
    """400 COMPAS-shaped rows plus a probability column; 'decile_score' and 'priors_count'
    repeat with identical values (as in the real file), and 'juv_misd_count' is renamed to a
    second, differing 'juv_fel_count'."""
    frame = compas_like_frame(n=ROWS).copy()
    deciles = frame["decile_score"].iloc[:, 0].to_numpy()
    frame.insert(len(frame.columns) - 1, "p_recid", np.round(np.clip(deciles / 11, 0.01, 0.99), 3))
    names = list(frame.columns)
    names[names.index("juv_misd_count")] = "juv_fel_count"
    frame.columns = names
    return frame


#: Pages that draw nothing until the user acts (Compare, Run the audit) or that have nothing
#: to draw for a table without ensemble members or without a second model; every other page
#: must show a chart.
WAIT_FOR_AN_ACTION = {"Overview", "Recalibration", "Ensembles", "Export", "Compare models",
                      "Over time"}  # needs a time column, which this table has not


def wait_until_done(page) -> None:
    """Wait until the app's script has finished its run (:func:`wait_for_script`)."""
    wait_for_script(page, PAGE_SECONDS * 1000)


def test_table_with_repeated_headers_reaches_every_page(app_url: str, page, tmp_path) -> None:
    csv_path = tmp_path / "compas-scores-two-years.csv"
    compas_with_scores().to_csv(csv_path, index=False)
    header = csv_path.read_text().splitlines()[0].split(",")
    assert header.count("decile_score") == header.count("juv_fel_count") == 2

    page.goto(app_url)
    page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()
    upload_through_file_chooser(page, csv_path)
    page.get_by_text(f"Read {ROWS} rows × 52 columns from compas-scores-two-years.csv.").wait_for()
    page.get_by_text("more than one column named 'decile_score'").wait_for()
    page.get_by_text("'juv_fel_count (column 11)', 'juv_fel_count (column 13)'").wait_for()
    page.get_by_role("button", name="Validate and use this table").click()
    page.get_by_text(f"Now auditing compas-scores-two-years.csv: {ROWS} rows passed "
                     "validation.").wait_for()
    screenshot(page, "realdata-upload")

    for entry in discover_pages()[1:]:
        page.get_by_role("link", name=entry.title).click()
        page.get_by_role("heading", name=entry.title).first.wait_for(timeout=60_000)
        drawn = entry.title not in WAIT_FOR_AN_ACTION
        if drawn:
            page.locator(".js-plotly-plot").first.wait_for(timeout=PAGE_SECONDS * 1000)
        wait_until_done(page)
        assert page.get_by_text(FAILURE_PREFIX).count() == 0, entry.title
        assert page.get_by_text("Traceback").count() == 0, entry.title
        assert page.locator(".js-plotly-plot").count() >= int(drawn), entry.title
        assert page.get_by_text(f"{ROWS:,} rows · binary").count() >= 1  # still this dataset
        screenshot(page, f"realdata-{entry.path.rsplit('/', 1)[-1].removesuffix('.py')}")


def test_lce_landscape_with_one_audit_feature_draws_lce_against_it(app_url: str, page) -> None:
    """Issue 14, found 2: the ensemble demo has one audit feature ('x'); the page used to show
    a PCA traceback. Now it draws each row's LCE against x."""
    page.goto(app_url)
    page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()
    # the page's demo chooser (the sidebar's first combobox is the census demo's audited model)
    page.locator('[data-testid="stMain"]').get_by_role("combobox").first.click()
    page.get_by_role("option", name="Ensemble").first.click()
    page.get_by_role("button", name="Use this demo").click()
    page.get_by_text("Now auditing the demo").wait_for()
    page.get_by_role("link", name="LCE landscape").click()
    page.get_by_text("the LCE is drawn against it").wait_for(timeout=PAGE_SECONDS * 1000)
    page.locator(".js-plotly-plot").nth(2).wait_for(timeout=PAGE_SECONDS * 1000)
    wait_until_done(page)
    assert page.get_by_text("LCE against x").count() >= 1
    assert page.get_by_text(FAILURE_PREFIX).count() == 0
    assert page.get_by_text("Traceback").count() == 0
    screenshot(page, "realdata-lce-profile-ensemble")
