"""AppTest: the Trust test, Local bias and LCE landscape pages on the demo data."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app_pages import assert_plain_opening
from tests.conftest import open_demo_page

TIMEOUT = 300


def open_page(page: str, demo: str = "census") -> AppTest:
    return open_demo_page(page, demo, timeout=TIMEOUT)


def test_trust_page_rejects_on_the_census_demo() -> None:
    at = open_page("trust")
    assert at.title[0].value == "Trust test (KLCE)"
    assert_plain_opening(at)
    assert at.selectbox(key="trust_null").value == "consistency-combined"
    errors = " ".join(e.value for e in at.error)
    assert "the aggregated KLCE test rejects" in errors
    # the pair's p-value is the heat map's cell: at the median heuristic, the grid's centre
    from core.audit import TrustSettings, audit_part, trust_section
    from core.stattests import format_p_value
    from dashboard.cache import diagnostics
    from dashboard.state import cached_demo

    data, _ = audit_part(cached_demo("census"), "test")
    grid = diagnostics.STORE.section(trust_section, data, TrustSettings(("age", "sex", "race")))
    shown = {m.label: m.value for m in at.metric}
    assert shown["p-value"] == format_p_value(grid.p_values[2, 2], grid.n_resamples)
    # a narrower feature bandwidth makes the single-bandwidth test reject as well
    at.select_slider(key="trust_sigma_x").set_value(0.25).run()
    shown = {m.label: m.value for m in at.metric}
    assert shown["p-value"] == format_p_value(grid.p_values[2, 0], grid.n_resamples)
    assert not at.exception, at.exception
    assert "At these bandwidths the KLCE test rejects" in " ".join(e.value for e in at.error)
    at.selectbox(key="trust_null").set_value("permutation").run()
    assert not at.exception, at.exception
    assert any("permutation" in c.value for c in at.caption)


def test_trust_page_multiclass_class_picker() -> None:
    at = open_page("trust", "multiclass")
    assert at.selectbox(key="trust_class").options[:2] == ["water", "forest"]
    at.selectbox(key="trust_class").set_value(4).run()
    assert not at.exception, at.exception
    assert "class 'urban'" in " ".join([e.value for e in at.error] + [s.value for s in at.success])


def test_local_bias_page_draws_and_points_to_the_findings() -> None:
    at = open_page("local_bias")
    assert_plain_opening(at)
    assert len(at.get("plotly_chart")) == 1
    assert "is the **Findings** page" in " ".join(i.value for i in at.info)
    assert not at.dataframe  # the raw subgroup ranking (|z| without adjustment) is gone
    at.selectbox(key="lcb_facet").set_value("(none)").run()
    at.slider(key="lcb_degree").set_value(1).run()
    at.radio(key="lcb_bw_mode").set_value("manual").run()
    assert not at.exception, at.exception


def test_local_bias_without_split_uses_leave_one_out() -> None:
    at = open_page("local_bias", "itrustworthy")
    assert any("each left out of its own estimate" in c.value for c in at.caption)
    assert at.selectbox(key="lcb_x").value == "x1"


def test_lce_landscape_page() -> None:
    at = open_page("lce_landscape")
    assert_plain_opening(at)
    assert at.radio(key="lce_method").value == "pca"
    assert any("over- and under-confident regions cancel" in m.value for m in at.markdown)
    at.select_slider(key="lce_gamma").set_value(1.0).run()
    at.toggle(key="lce_signed").set_value(False).run()
    assert not at.exception, at.exception


def test_lce_landscape_tsne_on_the_simulation() -> None:
    at = open_page("lce_landscape", "itrustworthy")
    at.radio(key="lce_method").set_value("tsne").run()
    assert not at.exception, at.exception
    assert any("the embedding was fitted on 2,000 rows" in c.value for c in at.caption)
