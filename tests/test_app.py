"""AppTest: the app shell and the Data page, driven without a browser."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.state import set_active
from tests.conftest import APP, upload_frame

TIMEOUT = 120
ACTIVE_DEMO = "This demo is the active dataset."


def start() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    return at


def sidebar_text(at: AppTest) -> str:
    return " ".join(m.value for m in at.sidebar.markdown) + " ".join(
        c.value for c in at.sidebar.caption)


def test_app_starts_on_the_default_demo() -> None:
    at = start()
    assert at.title[0].value == "Data"
    assert "10,000 rows · binary" in sidebar_text(at)
    assert any("Preview: first 500 of 10,000 rows" in c.value for c in at.caption)
    assert at.subheader[0].value == "Validation report"


def test_pick_each_demo_and_it_survives_a_page_rerun() -> None:
    at = start()
    assert len(at.selectbox(key="demo_choice").options) == 5  # census-stream: issue 35
    # the active demo has no "Use this demo" button, only a line saying it is active
    assert not [b for b in at.button if b.key == "use_demo"]
    assert any(c.value == ACTIVE_DEMO for c in at.caption)
    at.selectbox(key="demo_choice").set_value("multiclass")
    at.run()
    assert not any(c.value == ACTIVE_DEMO for c in at.caption)
    at.button(key="use_demo").click()
    at.run()
    assert not at.exception, at.exception
    assert any("Now auditing" in s.value for s in at.success)
    assert at.session_state["active_audit"].n_classes == 5
    at.run()  # a rerun (what a page switch does) keeps the chosen dataset
    assert at.session_state["active_audit"].n_classes == 5
    assert any(c.value == ACTIVE_DEMO for c in at.caption)  # now the active demo
    assert at.header[0].value.startswith("Land cover")
    # AppTest drops sidebar elements on reruns under st.navigation (the browser test checks
    # the sidebar); a new session with this state shows them.
    fresh = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    set_active(at.session_state["active_audit"], at.session_state["active_source"],
               session=fresh.session_state)
    fresh.run()
    assert "6,000 rows · 5 classes" in sidebar_text(fresh)


def upload(at: AppTest, content: bytes, name: str = "audit.csv") -> AppTest:
    at.file_uploader(key="upload_file").set_value((name, content, "text/csv"))
    at.run()
    assert not at.exception, at.exception
    return at


def test_upload_a_csv_and_use_it(upload_csv: bytes) -> None:
    at = upload(start(), upload_csv)
    assert any("Read 120 rows × 4 columns" in c.value for c in at.caption)
    at.button(key="use_upload").click()
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("Now auditing audit.csv: 120 rows" in s.value for s in at.success)
    assert at.session_state["active_source"] == "upload: audit.csv"
    assert any("Preview: first 120 of 120 rows" in c.value for c in at.caption)


def defective(kind: str) -> bytes:
    frame = upload_frame()
    if kind == "non-numeric":
        frame["p"] = frame["p"].astype(object)
        frame.loc[7, "p"] = "high"
    elif kind == "nan":
        frame.loc[[3, 4], "p"] = np.nan
    elif kind == "outside":
        frame.loc[2, "p"] = 1.7
    elif kind == "single-class":
        frame["y"] = 0
    elif kind == "labels":
        frame.loc[0, "y"] = 5
    elif kind == "few-rows":
        frame = frame.head(12)
    elif kind == "not-summing":
        frame = frame.rename(columns={"p": "p_1"})
        frame["p_0"] = 0.5
        frame.loc[1, "p_0"] = 0.9 - frame.loc[1, "p_1"]
    if kind == "duplicate":
        return frame.to_csv(index=False).replace("age", "sex", 1).encode()
    if kind == "empty":
        return b""
    if kind == "unreadable":
        return b"y,p\n1,0.5\n0,0.2,9,9\n"
    return frame.to_csv(index=False).encode()


DEFECTS = {
    "non-numeric": "must hold numbers",
    "nan": "missing or infinite values in 2 rows (rows 4, 5)",
    "outside": "between 0 and 1",
    "single-class": "only one class",
    "labels": "3 distinct values",
    "few-rows": "only 12 rows",
    "not-summing": "sum to 1",
    "empty": "is empty",
    "unreadable": "could not be read",
}


@pytest.mark.parametrize("kind", DEFECTS)
def test_defective_upload_shows_a_message_not_a_traceback(kind: str) -> None:
    at = upload(start(), defective(kind))
    if not at.error:  # the file itself was readable: validation happens on "use"
        at.button(key="use_upload").click()
        at.run()
    assert not at.exception, at.exception
    messages = " ".join(e.value for e in at.error)
    assert DEFECTS[kind] in messages, messages
    assert "Traceback" not in messages


def test_duplicate_headers_are_accepted_and_reported() -> None:
    # issue 14: no longer a defect; the differing 'sex' columns are both kept, by position
    at = upload(start(), defective("duplicate"))
    assert not at.error, [e.value for e in at.error]
    notes = " ".join(i.value for i in at.info)
    assert "more than one column named 'sex'" in notes, notes
    assert "'sex (column 3)', 'sex (column 4)'" in notes, notes
