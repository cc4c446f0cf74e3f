"""The page guard (dashboard/guard.py): a failing page shows one sentence and a collapsed
detail and logs the traceback; Streamlit's own stop/rerun pass through."""

from __future__ import annotations

import tomllib
from streamlit.testing.v1 import AppTest

from core.data.problems import DataError
from dashboard.guard import FAILURE_PREFIX, failure_sentence
from tests.conftest import ROOT


def failing_app() -> None:
    import streamlit as st

    from dashboard.guard import run_page

    def page() -> None:
        st.title("Broken")
        raise ZeroDivisionError("division by zero")

    run_page(page, "Broken", lambda: "demo: census")
    st.caption("after the page")


def stopping_app() -> None:
    import streamlit as st

    from dashboard.guard import run_page

    def page() -> None:
        st.warning("Map audit features on the Data page.")
        st.stop()

    run_page(page, "Stopping", lambda: None)
    st.caption("not reached")


def test_an_unexpected_error_becomes_a_sentence_a_detail_and_a_log_record(
        expected_page_failures) -> None:
    at = AppTest.from_function(failing_app).run()
    assert not at.exception, at.exception
    [message] = [e.value for e in at.error]
    assert message == (
        f"{FAILURE_PREFIX}: the Broken page failed on the dataset “demo: census” because of an "
        "unexpected ZeroDivisionError. Try other settings on this page, fewer or other audit "
        "features, or another dataset on the Data page; if it keeps failing, report it with "
        "the technical detail below."
    )
    [detail] = at.expander
    assert detail.label == "Technical detail"
    assert "ZeroDivisionError: division by zero" in detail.code[0].value
    assert "Traceback" in detail.code[0].value  # only inside the collapsed expander
    assert at.caption[0].value == "after the page"  # the sidebar etc. still render
    [record] = expected_page_failures
    assert record.getMessage() == "Page 'Broken' failed" and record.exc_info is not None


def test_stop_passes_through_the_guard() -> None:
    at = AppTest.from_function(stopping_app).run()
    assert not at.exception and not at.error
    assert at.warning[0].value == "Map audit features on the Data page."
    assert not at.caption  # st.stop() ended the script, as without the guard


def test_messages_written_for_users_are_quoted() -> None:
    sentence = failure_sentence("Trust test", None, DataError("Column 'x' is empty."))
    assert sentence.startswith(f"{FAILURE_PREFIX}: the Trust test page failed: Column 'x' is "
                               "empty. Try other settings")


def test_streamlit_shows_no_error_details_of_its_own() -> None:
    config = tomllib.loads((ROOT / "dashboard" / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == "none"
