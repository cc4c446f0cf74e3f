"""AppTest (issue 20): the defaults an auditor meets on the Data page with a real table — the
upload becomes the reference form's raw table, outcome columns are not proposed as model
features and are named, and the audit features follow the papers (age included)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.conftest import APP
from tests.realdata_tables import compas_like_frame

TIMEOUT = 180
NAME = "compas-scores-two-years.csv"
SOURCE = f"uploaded: {NAME}"
CENSUS = "demo: census features without the model's predictions"
LEAKS = ("event", "is_recid", "r_charge_degree", "r_days_from_arrest", "r_charge_desc")


def form(at: AppTest, name: str) -> str:
    """The key of a reference-form widget (it carries the last upload's key)."""
    try:
        upload_key = at.session_state["uploaded_table_key"]
    except KeyError:
        upload_key = "none"
    return f"ref_{name}_{upload_key}"


def upload(at: AppTest, frame, name: str = NAME) -> None:
    at.file_uploader(key="upload_file").set_value((name, frame.to_csv(index=False).encode(),
                                                   "text/csv"))
    at.run()
    assert not at.exception, at.exception


def test_a_new_upload_resets_the_reference_form_to_it() -> None:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    at.selectbox(key=form(at, "source")).set_value(CENSUS).run()  # the user looked at the demo
    assert at.selectbox(key=form(at, "source")).value == CENSUS
    upload(at, compas_like_frame().iloc[:900])
    assert at.selectbox(key=form(at, "source")).value == SOURCE  # not the demo any more
    assert at.selectbox(key=form(at, f"label_{SOURCE}")).value == "two_year_recid"
    # a rerun with the same file keeps what the user chose in the form
    at.selectbox(key=form(at, "source")).set_value(CENSUS).run()
    assert at.selectbox(key=form(at, "source")).value == CENSUS
    # another file resets it again
    upload(at, compas_like_frame().iloc[:600], "second.csv")
    assert at.selectbox(key=form(at, "source")).value == "uploaded: second.csv"


def test_compas_defaults_leave_out_the_outcome_and_propose_sex_age_race() -> None:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    upload(at, compas_like_frame())
    model = at.multiselect(key=form(at, f"model_{SOURCE}_two_year_recid")).value
    assert not set(model) & set(LEAKS) and {"age", "priors_count", "sex"} <= set(model)
    assert not set(model) & {"id", "name", "c_case_number", "dob", "c_jail_in"}
    warning = " ".join(w.value for w in at.warning)
    for column in LEAKS:
        assert f"'{column}'" in warning, column
    assert "single-feature AUC 1.000" in warning
    assert at.multiselect(key=form(at, f"audit_{SOURCE}")).value == ["sex", "age", "race"]
    assert any("Proposed 3 of" in c.value for c in at.caption)
    # the upload tab's mapping form proposes the same audit features
    mapping = next(m for m in at.multiselect if str(m.key).endswith("_features"))
    assert mapping.value == ["sex", "age", "race"]

    at.button(key=form(at, "train")).click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("rows passed validation" in s.value for s in at.success)
    audit = at.session_state["active_audit"]
    assert set(audit.feature_frame.columns) == {"sex", "age", "race"}
    assert not any(n.level == "warning" for n in audit.report)


def test_an_outcome_column_chosen_anyway_trains_with_a_warning() -> None:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    upload(at, compas_like_frame().iloc[:1500])
    at.multiselect(key=form(at, f"model_{SOURCE}_two_year_recid")).set_value(["age", "event"])
    at.button(key=form(at, "train")).click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(w.value.startswith("Model feature 'event' by itself separates") for w in
               at.warning)
    report = at.session_state["active_audit"].report
    assert report[0].level == "warning" and "'event'" in report[0].message
