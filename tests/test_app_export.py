"""AppTest: the Export page and the chart export control, on a small table."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from core.data.audit_data import AuditData
from core.report.export import find_chromium
from dashboard.state import set_active
from tests.conftest import APP
from tests.report_fixtures import audit_table, parse_svg, png_size

TIMEOUT = 300


@pytest.fixture(scope="module")
def small_audit() -> AuditData:
    return AuditData.from_frame(audit_table(240), label="y", prob="p", features=["age", "sex"],
                                groups=["grp"], split="split", name="small.csv")


def open_page(page: str, audit: AuditData) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    set_active(audit, "upload: small.csv", session=at.session_state)
    at.run()
    at.switch_page(f"views/{page}.py")
    at.run()
    assert not at.exception, at.exception
    return at


def prepared(at: AppTest, slot: str) -> tuple[str, bytes]:
    return at.session_state["export_files"][slot]


def test_export_page_takes_page_settings_and_builds_files(small_audit: AuditData) -> None:
    at = open_page("trust", small_audit)
    at.selectbox(key="trust_null").set_value("permutation").run()
    at.selectbox(key="trust_alpha").set_value(0.1).run()
    at.switch_page("views/export.py")
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Export"
    settings = at.dataframe[0].value.set_index("setting")["value"]
    assert settings["null"] == "permutation" and settings["alpha"] == "0.1"
    at.button(key="export_run").click().run()
    assert not at.exception, at.exception
    assert "Audit of 120 rows (test) of small.csv" in at.success[0].value
    # the settings survive the reruns after the Trust page's widgets are forgotten
    assert at.dataframe[0].value.set_index("setting")["value"]["null"] == "permutation"

    fmt = "svg" if find_chromium() else "html"
    at.multiselect(key="export_figures").set_value(["reliability"])
    at.multiselect(key="export_formats").set_value([fmt]).run()
    at.button(key="export_prepare_figures").click().run()
    assert not at.exception, at.exception
    name, data = prepared(at, "export_figure_files")
    assert name == f"reliability.{fmt}"
    if fmt == "svg":
        parse_svg(data)

    at.multiselect(key="export_formats").set_value(
        ["png", "svg"] if find_chromium() else ["html"]).run()
    at.multiselect(key="export_figures").set_value(["reliability", "lcb"]).run()
    at.button(key="export_prepare_figures").click().run()
    name, data = prepared(at, "export_figure_files")
    assert name == "figures.zip" and data[:2] == b"PK"

    at.multiselect(key="export_report_files").set_value(["HTML", "JSON"]).run()
    at.button(key="export_build_report").click().run()
    assert not at.exception, at.exception
    html = prepared(at, "export_report_HTML")[1].decode()
    assert "Summary of findings" in html and "small.csv" in html
    document = json.loads(prepared(at, "export_report_JSON")[1])
    assert document["settings"]["null"] == "permutation"
    assert document["settings"]["alpha"] == 0.1
    assert document["recalibration"] is None


def test_chart_export_control_on_the_trust_page(small_audit: AuditData) -> None:
    at = open_page("trust", small_audit)
    formats = at.radio(key="trust_heatmap_export_format").options
    assert formats == (["PNG", "SVG", "PDF", "HTML"] if find_chromium() else ["HTML"])
    at.radio(key="trust_heatmap_export_format").set_value(
        "png" if find_chromium() else "html").run()
    at.button(key="trust_heatmap_export_prepare").click().run()
    assert not at.exception, at.exception
    name, data = prepared(at, "trust_heatmap")
    if find_chromium():
        assert name == "trust_heatmap.png"
        width, height = png_size(data)
        assert width == 2000 and height > 2 * 360  # scale 2, with the caption's space
    else:
        assert name == "trust_heatmap.html" and b"Plotly" in data


def test_the_export_audit_reuses_what_the_pages_computed(monkeypatch,
                                                         small_audit: AuditData) -> None:
    # A first audit through the app's store fills it, as visiting the pages does; a second
    # one (the Export page's) must answer every section from it: computing one fails.
    from core import audit
    from core.audit.store import SectionStore
    from dashboard.cache import diagnostics

    settings = audit.settings_for(small_audit, {})
    first = audit.run_audit(small_audit, settings, store=diagnostics.STORE)

    def computed(*args, **kwargs):
        raise AssertionError("recomputed instead of taken from the pages' sections")

    monkeypatch.setattr(SectionStore, "section", computed)
    again = audit.run_audit(small_audit, settings, store=diagnostics.STORE)
    assert again.reliability.metrics.equals(first.reliability.metrics)
    assert again.klce_grid.aggregated.p_value == first.klce_grid.aggregated.p_value
    assert again.lce.curve.equals(first.lce.curve)
    # and the pages' pieces are the in-memory audit's
    monkeypatch.undo()
    plain = audit.run_audit(small_audit, settings)
    assert plain.reliability.metrics.equals(first.reliability.metrics)
    assert plain.lce.curve.reset_index(drop=True).equals(first.lce.curve)


def test_each_report_section_carries_its_own_pages_alpha(small_audit: AuditData) -> None:
    """α = 0.01 on Findings and 0.10 on Trust: the report's Findings section is at 0.01 and
    its verdicts at 0.10, whichever page was seen last (issue 30)."""
    at = open_page("findings", small_audit)
    at.selectbox(key="find_alpha").set_value(0.01).run()
    at.switch_page("views/trust.py")
    at.run()
    at.selectbox(key="trust_alpha").set_value(0.1).run()
    at.switch_page("views/export.py")
    at.run()
    assert not at.exception, at.exception
    settings = at.dataframe[0].value.set_index("setting")["value"]
    assert settings["alpha"] == "0.1" and settings["slice_alpha"] == "0.01"
    at.button(key="export_run").click().run()
    assert not at.exception, at.exception
    at.multiselect(key="export_report_files").set_value(["JSON"]).run()
    at.button(key="export_build_report").click().run()
    document = json.loads(prepared(at, "export_report_JSON")[1])
    assert document["settings"]["alpha"] == 0.1
    assert document["settings"]["slice_alpha"] == 0.01
    assert document["local"]["slices"]["alpha"] == 0.01
