"""AppTest: the Recalibration page compares methods and activates the recalibrated rows."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.conftest import open_demo_page


def open_page(demo: str) -> AppTest:
    return open_demo_page("recalibration", demo)


def test_recalibration_page_compares_and_activates() -> None:
    at = open_page("itrustworthy")
    assert at.title[0].value == "Recalibration"
    assert any("press **Compare**" in i.value for i in at.info)  # nothing runs unasked
    at.multiselect(key="recal_methods").set_value(["temperature", "lore", "group-temperature"])
    at.multiselect(key="recal_features").set_value(["x1", "x5"])
    at.select_slider(key="recal_b").set_value(50)
    at.number_input(key="recal_lore_gamma").set_value(0.2)
    next(b for b in at.button if b.label == "Compare").click().run()
    assert not at.exception, at.exception
    assert any("no calibration/test split" in c.value for c in at.caption)
    assert any("Group temperature scaling" in w.value and "group attributes" in w.value
               for w in at.warning)
    table = at.dataframe[0].value
    assert list(table.index) == ["uncalibrated", "temperature", "lore"]
    assert {"ece", "mlce", "klce_p", "max_group_mce"} <= set(table.columns)
    at.selectbox(key="recal_selected").set_value("lore").run()
    at.selectbox(key="recal_feature").set_value("x5").run()
    assert not at.exception, at.exception
    at.button(key="recal_activate").click().run()
    assert not at.exception, at.exception
    assert at.session_state["active_source"].startswith("recalibrated by LoRe")
    active = at.session_state["active_audit"]
    assert 995 <= active.n <= 1000 and "recalibrated (LoRe)" in active.name  # the test half
    assert any("recalibrated by LoRe" in c.value for c in at.sidebar.caption)
