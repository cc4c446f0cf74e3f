"""AppTest: the Compare models page on the census demo and on an uploaded two-model table, and
the sidebar's choice of the audited model."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.data import AuditData
from tests.conftest import APP, open_demo_page
from tests.test_compare import two_model_table


def test_compare_page_on_the_census_demo() -> None:
    at = open_demo_page("compare", "census")
    assert at.title[0].value == "Compare models"
    verdict = at.error[0].value  # the challenger is worse somewhere: a red verdict
    assert "better on Brier score" in verdict and "race = Asian" in verdict
    differences = at.dataframe[0].value
    assert list(differences["criterion"]) == [
        "Brier score", "log loss", "ECE² (equal-width bins, debiased)", "smooth ECE² (debiased)",
        "KLCE²"]
    worse = next(d.value for d in at.dataframe if "slice" in d.value.columns)
    assert "race = Asian" in set(worse["slice"])
    trust = next(m.value for m in at.markdown if "aggregated KLCE p" in m.value)
    assert "p_default** — champion (A)" in trust and "p_challenger** — challenger (B)" in trust
    at.radio(key="cmp_dumbbell").set_value("log_loss").run()
    assert not at.exception, at.exception
    at.button(key="cmp_report").click().run()
    assert not at.exception, at.exception
    assert any(b.label.startswith("Download comparison-") for b in at.get("download_button"))


def test_sidebar_switches_the_audited_model() -> None:
    at = open_demo_page("reliability", "census")
    assert at.session_state["active_audit"].model == "p_default"
    at.sidebar.selectbox[0].set_value("p_challenger").run()
    assert not at.exception, at.exception
    audit = at.session_state["active_audit"]
    assert audit.model == "p_challenger"
    assert audit.probs[:, 1].tolist() == audit.model_probs["p_challenger"][:, 1].tolist()


def test_compare_page_on_an_uploaded_two_model_table_and_on_one_model() -> None:
    frame = two_model_table(400)
    at = AppTest.from_file(str(APP), default_timeout=300)
    from dashboard.state import set_active
    audit = AuditData.from_frame(frame, label="y", prob="p_prod", models={"p_new": "p_new"},
                                 features=["age"], groups=["race"], name="two.csv")
    set_active(audit, "upload: two.csv", session=at.session_state)
    at.run()
    at.switch_page("views/compare.py")
    at.run()
    assert not at.exception, at.exception
    assert "Not established" in (at.error or at.success)[0].value
    single = AuditData.from_frame(frame, label="y", prob="p_prod", name="one.csv")
    set_active(single, "upload: one.csv", session=at.session_state)
    at.run()
    assert not at.exception, at.exception
    assert any("one model's predictions" in i.value for i in at.info)
