"""In the system Chromium, with every network request refused: the HTML report shows all its
figures and asks no other host for anything (static and interactive reports)."""

from __future__ import annotations

import pytest

from core.audit import run_audit
from core.data.audit_data import AuditData
from core.report import build_report, write_report
from tests.e2e.conftest import SCREENSHOTS, requires_chromium
from tests.report_fixtures import COMPARISON, FAST, audit_table

pytestmark = [requires_chromium, pytest.mark.e2e]


@pytest.fixture(scope="module")
def audited():
    audit = AuditData.from_frame(audit_table(), label="y", prob="p", features=["age", "sex"],
                                 groups=["grp"], split="split", name="offline.csv")
    return audit, run_audit(audit, FAST)


def open_offline(browser, path):
    """Open ``path`` with every request but the file itself refused; returns the page and
    the list of refused URLs."""
    context = browser.new_context(viewport={"width": 1200, "height": 900}, offline=True)
    refused: list[str] = []

    def route(request_route):
        url = request_route.request.url
        if url.startswith(("file:", "data:")):
            request_route.continue_()
        else:
            refused.append(url)
            request_route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return context, page, refused


def test_static_report_offline(browser, audited, tmp_path) -> None:
    audit, result = audited
    write_report(build_report(result, audit, COMPARISON, formats=()), tmp_path)
    context, page, refused = open_offline(browser, tmp_path / "report.html")
    try:
        images = page.locator("figure img")
        assert images.count() == 9  # with the slices' forest plot and treemap
        sizes = page.evaluate("""() => [...document.querySelectorAll('figure img')]
                                 .map(i => [i.complete, i.naturalWidth, i.naturalHeight])""")
        assert all(done and w > 300 and h > 200 for done, w, h in sizes), sizes
        assert refused == []
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "report-offline.png"), full_page=True)
    finally:
        context.close()


def test_interactive_report_offline(browser, audited, tmp_path, monkeypatch) -> None:
    audit, result = audited
    monkeypatch.setenv("CHROMIUM_PATH", str(tmp_path / "no-chromium"))  # the fallback report
    report = build_report(result, audit, formats=(), pdf=False)
    (tmp_path / "interactive.html").write_text(report.html, encoding="utf-8")
    monkeypatch.delenv("CHROMIUM_PATH")
    context, page, refused = open_offline(browser, tmp_path / "interactive.html")
    try:
        page.locator(".plotly-graph-div .main-svg").nth(6).wait_for()
        assert page.locator(".plotly-graph-div").count() == 9  # with the two slice figures
        assert refused == []
        page.screenshot(path=str(SCREENSHOTS / "report-offline-interactive.png"),
                        full_page=True)
    finally:
        context.close()
