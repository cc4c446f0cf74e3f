"""AppTest: the Findings page on the demos — the planted cell on top, the error rate stated,
the controls, and the 'not flagged is not calibrated' sentence."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app_pages import assert_plain_opening
from tests.conftest import open_demo_page

TIMEOUT = 300


def open_page(demo: str = "census", widgets: dict | None = None) -> AppTest:
    return open_demo_page("findings", demo, timeout=TIMEOUT, widgets=widgets)


def test_census_planted_age_by_race_cell_is_the_top_finding() -> None:
    at = open_page()
    assert at.title[0].value == "Findings: miscalibrated slices"
    assert_plain_opening(at)
    statement = " ".join(i.value for i in at.info)
    assert "family-wise error rate controlled at α = 0.05" in statement
    assert "Westfall–Young" in statement and "simultaneous" in statement
    found = at.dataframe[0].value
    top = found.iloc[0]
    assert "race = Black" in top["slice"] and "age 58–88" in top["slice"]
    assert top["gap"] > 0.2 and top["ci_low"] > 0.1
    # adjusted p as text: "≤ 0.001" at the resampling floor of B = 1,000 (issue 31)
    p_text = top["p_adjusted"]
    assert p_text == "≤ 0.001" or float(p_text) < 0.01
    assert "class" not in found.columns  # binary: one class, no column for it
    text = " ".join([e.value for e in at.error] + [m.value for m in at.markdown])
    assert "not shown to be calibrated" in text and "**not** flagged" in text
    # the closer look defaults to the top slice: its reliability and LCB profile are drawn
    assert at.selectbox(key="find_slice").value == 0
    assert len(at.get("plotly_chart")) >= 4


def test_fdr_flags_at_least_what_fwer_flags_and_settings_change_the_family() -> None:
    at = open_page()
    flagged = [set(frame.value["slice"]) for frame in at.dataframe]  # findings, listed
    at.radio(key="find_error").set_value("fdr").run()
    assert not at.exception, at.exception
    assert "false discovery rate controlled at α = 0.05" in " ".join(i.value for i in at.info)
    # on the census demo BH flags every slice the max-|T| step-down flags, and one more
    assert set.union(*flagged) < set.union(*(set(f.value["slice"]) for f in at.dataframe))
    at.selectbox(key="find_depth").set_value(1).run()
    assert not at.exception, at.exception
    assert "up to depth 1" in " ".join(c.value for c in at.caption)


def test_multiclass_tests_every_class_and_offers_the_top_label() -> None:
    at = open_page("multiclass")
    statement = " ".join(i.value for i in at.info)
    assert "× 5 classes, one vs rest" in statement
    assert "class" in at.dataframe[0].value.columns
    at.radio(key="find_notion").set_value("top-label").run()
    assert not at.exception, at.exception
    assert "× 5 classes" not in " ".join(i.value for i in at.info)
    assert any("LCB profile is one class" in c.value for c in at.caption)
