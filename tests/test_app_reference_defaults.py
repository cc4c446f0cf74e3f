"""AppTest (issues 20 and 29): the defaults an auditor meets on the Data page with a real table
— a raw upload goes to the Train tab and survives a reload, outcome columns (certain and
likely) are not proposed as model features and are named, every column is listed with its
status, and the audit features follow the papers (age included)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app_pages import choose_model_features, chosen_model_features, model_feature_boxes
from tests.conftest import APP
from tests.realdata_tables import compas_like_frame

TIMEOUT = 180
NAME = "compas-scores-two-years.csv"
SOURCE = f"uploaded: {NAME}"
CENSUS = "demo: census features without the model's predictions"
LEAKS = ("is_recid", "r_charge_degree", "r_days_from_arrest", "r_charge_desc")
SUSPECTS = ("event", "end", "is_violent_recid", "vr_charge_degree")
SCORES = ("decile_score", "score_text", "v_decile_score", "v_score_text")


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
    label = "two_year_recid"
    model = chosen_model_features(at, SOURCE, label)
    assert not set(model) & {*LEAKS, *SUSPECTS, *SCORES}
    assert {"age", "priors_count", "sex"} <= set(model)
    assert not set(model) & {"id", "name", "c_case_number", "dob", "c_jail_in"}
    # every column is listed with its status: a tick, and why it is left out
    boxes = model_feature_boxes(at, SOURCE, label)
    assert set(boxes) == set(compas_like_frame().columns) - {label}
    captions = " ".join(c.value for c in at.caption)
    for column in (*LEAKS, *SUSPECTS, *SCORES, "id", "name"):
        assert f"'{column}'" in captions, column
    assert "'name' takes 7,158 different values in 7,214 rows: an identifier" in captions
    assert at.multiselect(key=form(at, f"audit_{SOURCE}")).value == ["sex", "age", "race"]
    assert any("Proposed 3 of" in c.value for c in at.caption)

    at.button(key=form(at, "train")).click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("rows passed validation" in s.value for s in at.success)
    assert any("Test AUC of the reference model: 0.6" in c.value for c in at.caption)
    audit = at.session_state["active_audit"]
    assert set(audit.feature_frame.columns) == {"sex", "age", "race"}
    assert not any(n.level == "warning" for n in audit.report)


def test_a_raw_upload_opens_the_train_tab_and_survives_a_reload() -> None:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    upload(at, compas_like_frame().iloc[:1500])
    assert at.session_state["data_tab"] == "Train a reference model"
    info = " ".join(i.value for i in at.info)
    assert "has no column of predicted probabilities or logits: it is a raw table" in info
    assert "The pages still audit" in info
    # no mapping form for it: the probability columns are never asked for
    assert not [m for m in at.multiselect if str(m.key).endswith("_probs")]
    token = at.query_params["table"]
    at.selectbox(key=form(at, f"label_{SOURCE}")).set_value("is_recid").run()

    reloaded = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    reloaded.query_params["table"] = token
    reloaded.run()
    assert not reloaded.exception, reloaded.exception
    assert reloaded.session_state["data_tab"] == "Train a reference model"
    assert reloaded.selectbox(key=form(reloaded, "source")).value == SOURCE
    assert reloaded.selectbox(key=form(reloaded, f"label_{SOURCE}")).value == "is_recid"
    assert reloaded.session_state["active_audit"].name.startswith("Census")  # still the demo


def test_an_outcome_column_chosen_anyway_trains_with_a_warning_on_every_page() -> None:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    upload(at, compas_like_frame().iloc[:1500])
    choose_model_features(at, SOURCE, "two_year_recid", ["age", "event"])
    at.run()
    assert any(w.value.startswith("'event' is named like information recorded") and
               "Ticked anyway" in w.value for w in at.warning)  # said as soon as it is ticked
    at.button(key=form(at, "train")).click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    report = at.session_state["active_audit"].report
    assert report[0].level == "warning" and "'event'" in report[0].message
    assert report[0].topic == "leakage"
    token = at.query_params["table"]
    # the sidebar says it on every page, and a reload keeps it
    at.switch_page("views/reliability.py").run()
    assert any("may hold the outcome" in w.value for w in at.sidebar.warning)
    reloaded = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    reloaded.query_params["table"] = token
    reloaded.run()
    assert any("may hold the outcome" in w.value for w in reloaded.sidebar.warning)
    assert reloaded.session_state["active_audit"].report[0].topic == "leakage"


def test_forgetting_a_raw_upload_deletes_it_and_does_not_store_it_again() -> None:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    upload(at, compas_like_frame().iloc[:600])
    token = at.query_params["table"]
    at.sidebar.button(key="forget_table_after").click().run()
    assert not at.exception, at.exception
    assert "table" not in at.query_params
    assert "uploaded_table" not in at.session_state
    reloaded = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    reloaded.query_params["table"] = token
    reloaded.run()
    assert "uploaded_table" not in reloaded.session_state  # nothing is kept under the token
