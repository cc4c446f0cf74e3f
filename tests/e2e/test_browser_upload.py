"""In the system Chromium: the served app answers its health check, shows the demo, and takes
a CSV through the real file chooser into the preview."""

from __future__ import annotations

import urllib.request

from tests.conftest import upload_frame
from tests.e2e.conftest import requires_chromium, screenshot

pytestmark = [requires_chromium]


def upload_through_file_chooser(page, path) -> None:
    """Open the Upload tab and pick ``path`` in the operating system's file chooser."""
    page.get_by_role("tab", name="Upload a table").click()
    with page.expect_file_chooser() as chooser:
        page.locator('[data-testid="stFileUploaderDropzone"] button').click()
    chooser.value.set_files(str(path))


def test_health_endpoint(app_url: str) -> None:
    with urllib.request.urlopen(f"{app_url}/_stcore/health", timeout=5) as response:
        assert response.read().strip() == b"ok"


def test_demo_is_loaded_on_first_visit(app_url: str, page) -> None:
    page.goto(app_url)
    page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()
    page.get_by_role("heading", name="Validation report").wait_for()
    screenshot(page, "data-page-demo")


def test_upload_csv_through_file_chooser(app_url: str, page, tmp_path) -> None:
    csv_path = tmp_path / "audit.csv"
    upload_frame().to_csv(csv_path, index=False)
    page.goto(app_url)
    page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()
    upload_through_file_chooser(page, csv_path)
    page.get_by_text("Read 120 rows × 4 columns from audit.csv.").wait_for()
    page.get_by_role("button", name="Validate and use this table").click()
    page.get_by_text("Now auditing audit.csv: 120 rows passed validation.").wait_for()
    page.get_by_text("Preview: first 120 of 120 rows.").wait_for()
    screenshot(page, "data-page-upload")


def test_defective_upload_shows_a_message(app_url: str, page, tmp_path) -> None:
    frame = upload_frame()
    frame.loc[[3, 4], "p"] = None
    csv_path = tmp_path / "broken.csv"
    frame.to_csv(csv_path, index=False)
    page.goto(app_url)
    page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()
    upload_through_file_chooser(page, csv_path)
    page.get_by_role("button", name="Validate and use this table").click()
    page.get_by_text("missing or infinite values in 2 rows (rows 4, 5)").wait_for()
    assert page.get_by_text("Traceback").count() == 0
    screenshot(page, "data-page-defect")


def test_reference_model_workflow(app_url: str, page) -> None:
    page.goto(app_url)
    page.get_by_text("Preview: first 500 of 10,000 rows.").wait_for()
    page.get_by_role("tab", name="Train a reference model").click()
    page.get_by_role("button", name="Train and audit this model").click()
    page.get_by_text("Trained a random forest on").wait_for()
    page.get_by_text("rows passed validation").wait_for()
    screenshot(page, "data-page-reference-model")
