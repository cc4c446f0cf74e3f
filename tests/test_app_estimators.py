"""AppTest: the Estimators page on the multiclass and census demos."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app_pages import assert_plain_opening
from tests.conftest import open_demo_page


def open_page(demo: str) -> AppTest:
    return open_demo_page("estimators", demo, widgets={"est_fit_rows": 500, "est_folds": 3})


def test_estimators_page_on_the_multiclass_demo() -> None:
    at = open_page("multiclass")
    assert at.title[0].value == "Estimators"
    assert_plain_opening(at)
    assert at.radio(key="est_notion").value == "top-label"
    assert "Lowest validation risk" in at.success[0].value
    table = at.dataframe[0].value
    assert any("Reliability page" in e for e in table["estimate"])
    assert any(e.startswith("binning, fixed (bins = 15)") for e in table["estimate"])
    assert table["selected"].sum() == 1
    assert any("fitted on 500 randomly chosen training rows" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 3
    # canonical: binning drops out, the binned values are labelled as top-label
    at.radio(key="est_notion").set_value("canonical").run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert not any(e.startswith("binning") for e in table["estimate"])
    assert set(table.loc[table["risk"].notna(), "notion"]) == {"canonical"}
    assert any("binning has no canonical form" in c.value for c in at.caption)


def test_estimators_page_with_a_split_and_fewer_folds() -> None:
    at = open_page("census")
    assert at.radio(key="est_part").value == "test"
    assert any("split into 3 folds" in c.value for c in at.caption)
    at.select_slider(key="est_folds").set_value(5).run()
    assert not at.exception, at.exception
    assert any("split into 5 folds" in c.value for c in at.caption)
