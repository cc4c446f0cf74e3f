"""Serving to a team, in the system Chromium: two sessions at once never see each other's
table, results, recalibration comparison, exports or engine; a reload and a server restart
bring the table, its mapping, its settings and the audited model back through the URL's
token; with sign-in configured a visitor sees only the sign-in."""

from __future__ import annotations

import contextlib
import json
import re
import time

import pytest
from playwright.sync_api import expect

from tests.conftest import upload_frame
from tests.e2e.conftest import free_port, requires_chromium, screenshot, serve, wait_for_script
from tests.e2e.test_browser_upload import upload_through_file_chooser
from tests.test_compare import two_model_table

pytestmark = [requires_chromium, pytest.mark.e2e]
ENGINES = {"CALIBRATION_ATLAS_DASK": "lab=tcp://127.0.0.1:9",
           "CALIBRATION_ATLAS_ENGINE": "threads"}
DEMO_PREVIEW = "Preview: first 500 of 10,000 rows."


def open_page(page, title: str) -> None:
    page.get_by_role("link", name=title).first.click()
    page.wait_for_timeout(500)


def settle(page) -> None:
    """Wait until Streamlit has finished the run (the script state, :func:`wait_for_script`)."""
    wait_for_script(page, 300_000, pause_ms=300)


def sidebar_text(page) -> str:
    return page.locator('[data-testid="stSidebar"]').inner_text()


def bins_slider(page):
    slider = page.locator('[data-testid="stSlider"]').filter(has_text="Bins")
    return slider.locator("input[type=range]")


def tall_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    page = context.new_page()
    page.set_default_timeout(300_000)
    return context, page


def use_upload(page, url: str, table, shape: str) -> None:
    """Open the app, upload ``table`` and make it active; ``shape`` as the reader says it
    (``300 rows × 4 columns``)."""
    page.goto(url)
    page.get_by_text(DEMO_PREVIEW).wait_for()
    upload_through_file_chooser(page, table)
    page.get_by_text(f"Read {shape} from {table.name}.").wait_for()
    page.get_by_role("button", name="Validate and use this table").click()
    rows = shape.split(" × ")[0]
    page.get_by_text(f"Now auditing {table.name}: {rows} passed validation.").wait_for()


def test_two_sessions_at_once_never_see_each_others_work(browser, tmp_path) -> None:
    table = tmp_path / "alpha-audit.csv"
    upload_frame(n=400, seed=11).to_csv(table, index=False)
    with serve(tmp_path, ENGINES) as (url, _):
        alice_context = browser.new_context(viewport={"width": 1400, "height": 2400})
        bob_context = browser.new_context(viewport={"width": 1400, "height": 2400})
        alice, bob = alice_context.new_page(), bob_context.new_page()
        for page in (alice, bob):
            page.set_default_timeout(300_000)
            page.goto(url)
            page.get_by_text(DEMO_PREVIEW).wait_for()
        # Alice: her table, her engine, her results, her comparison, her report
        upload_through_file_chooser(alice, table)
        alice.get_by_text("Read 400 rows × 4 columns from alpha-audit.csv.").wait_for()
        alice.get_by_role("button", name="Validate and use this table").click()
        alice.get_by_text("Now auditing alpha-audit.csv: 400 rows passed validation.").wait_for()
        assert re.search(r"[?&]table=[A-Za-z0-9_-]{43}", alice.url)
        alice.get_by_text("Compute engine").click()
        alice.get_by_text("Dask cluster “lab”").click()
        alice.get_by_text("did not answer within 5 s").wait_for()
        open_page(alice, "Reliability")
        alice.get_by_role("heading", name="Calibration tests").wait_for()
        open_page(alice, "Recalibration")
        alice.get_by_role("button", name="Compare").click()
        alice.get_by_text("test rows.").first.wait_for()
        open_page(alice, "Export")
        alice.get_by_role("button", name="Run the audit").click()
        alice.get_by_role("button", name="Build the report").click()
        alice.get_by_role("button", name=re.compile("Download report.html")).wait_for()
        screenshot(alice, "team-alice-export")
        # Bob, at the same time on the same server: none of it
        settle(bob)
        assert "alpha-audit.csv" not in bob.content()
        assert "table=" not in bob.url
        open_page(bob, "Recalibration")
        bob.get_by_text("Choose the methods and press Compare.").wait_for()
        open_page(bob, "Export")
        bob.get_by_role("button", name="Run the audit").wait_for()
        assert bob.get_by_role("button", name=re.compile("Download")).count() == 0
        bob.get_by_text("Compute engine").click()
        settle(bob)
        sidebar = sidebar_text(bob)
        assert "Now: threads" in sidebar and "did not answer" not in sidebar
        assert "alpha-audit.csv" not in bob.content() and "Forget this table" not in sidebar
        screenshot(bob, "team-bob-export")
        # Bob with a made-up token opens nothing
        bob.goto(url + "/?table=" + "A" * 43)
        bob.get_by_text("is not stored on this server").wait_for()
        assert "alpha-audit.csv" not in bob.content()
        alice_context.close()
        bob_context.close()


def stored_widget(folder, key: str, value, seconds: float = 60.0) -> None:
    """Wait until the server's store holds ``value`` for the widget ``key`` (a slider's last
    value reaches the server a moment after the browser shows it)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for meta in (folder / "tables").glob("*/meta.json"):
            with contextlib.suppress(OSError, ValueError):
                if json.loads(meta.read_text())["settings"]["widgets"].get(key) == value:
                    return
        time.sleep(0.2)
    raise AssertionError(f"the store never held {key} = {value!r}")


def model_box(page):
    return page.locator('[data-testid="stSidebar"]').get_by_role("combobox",
                                                                 name="Audited model")


def test_reload_and_restart_bring_back_the_table_mapping_and_settings(browser,
                                                                      tmp_path) -> None:
    table = tmp_path / "beta-audit.csv"  # two prediction sets: p_prod and p_new
    two_model_table(300).to_csv(table, index=False)
    port = free_port()
    context, page = tall_page(browser)
    with serve(tmp_path, port=port) as (url, _):
        use_upload(page, url, table, "300 rows × 5 columns")
        page.get_by_text("models: p_prod, p_new").first.wait_for()  # the sidebar card
        expect(model_box(page)).to_have_value("p_prod")
        model_box(page).click()
        page.get_by_role("option", name="p_new").click()
        settle(page)
        expect(model_box(page)).to_have_value("p_new")
        open_page(page, "Reliability")
        slider = bins_slider(page)
        slider.wait_for()
        slider.focus()
        for _ in range(5):  # at machine speed: each key's run stopped by the next
            slider.press("ArrowRight")
        settle(page)
        assert bins_slider(page).get_attribute("aria-valuetext") == "20"
        stored_widget(tmp_path, "rel_bins", 20)  # the slider's last run has stored it
        page.reload()
        settle(page)
        bins_slider(page).wait_for()
        assert "upload: beta-audit.csv" in sidebar_text(page)
        assert bins_slider(page).get_attribute("aria-valuetext") == "20"
        expect(model_box(page)).to_have_value("p_new")  # the audited model came back too
        screenshot(page, "team-after-reload")
        stored = page.url
    with serve(tmp_path, port=port) as (url, _):  # a new server process, the same store
        page.goto(stored)
        settle(page)
        bins_slider(page).wait_for()
        assert "upload: beta-audit.csv" in sidebar_text(page)
        assert bins_slider(page).get_attribute("aria-valuetext") == "20"
        expect(model_box(page)).to_have_value("p_new")
        page.get_by_role("button", name="Forget this table").first.click()
        page.get_by_text("demo: Census").first.wait_for()
        assert "table=" not in page.url
        page.goto(stored)
        page.get_by_text("is not stored on this server").wait_for()
    context.close()


def test_with_sign_in_configured_a_visitor_sees_only_the_sign_in(browser, tmp_path) -> None:
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(
        '[auth]\nredirect_uri = "http://127.0.0.1:1/oauth2callback"\n'
        f'cookie_secret = "{"s" * 32}"\nclient_id = "atlas"\nclient_secret = "x"\n'
        'server_metadata_url = "http://127.0.0.1:9/.well-known/openid-configuration"\n')
    with serve(tmp_path, args=("--secrets.files", str(secrets))) as (url, _):
        context = browser.new_context(viewport={"width": 1400, "height": 1400})
        page = context.new_page()
        page.set_default_timeout(120_000)
        page.goto(url)
        page.get_by_role("button", name="Sign in").wait_for()
        settle(page)
        body = page.locator("body").inner_text()
        assert "Sign in to continue" in body
        for hidden in ("Census", "Reliability", "Compute engine", "Upload"):
            assert hidden not in body, hidden
        assert page.locator('[data-testid="stSidebar"]').count() == 0
        screenshot(page, "team-sign-in")
        page.goto(url + "/reliability")
        page.get_by_role("button", name="Sign in").wait_for()
        assert "Reliability" not in page.locator("body").inner_text()
        context.close()
