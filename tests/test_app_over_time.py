"""AppTest: the Over time page on the drifting monitoring demo (verdict, figures, table, a
weekly period) and on a table without a time column."""

from __future__ import annotations

from tests.conftest import open_demo_page


def test_over_time_page_on_the_drifting_demo() -> None:
    at = open_demo_page("over_time", "census-stream")
    assert at.title[0].value == "Over time"
    verdict = at.error[0].value
    assert verdict.startswith("No alarm through 2026-05; alarm raised in month 2026-06 for "
                              "race = Black")
    table = at.dataframe[0].value
    assert {"all", "race = Black", "sex = Male"} <= set(table["group"])
    assert table["period"].iloc[0] == "2025-01" and table["period"].iloc[-1] == "2026-12"
    assert len(at.get("plotly_chart")) == 5  # metric, e-process, 2 per group, challenger
    at.selectbox(key="ot_period").set_value("week")
    at.select_slider(key="ot_draws").set_value(0)  # weekly cells without intervals: faster
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert "alarm raised in week 2026-W" in at.error[0].value
    at.radio(key="ot_metric").set_value("ece").run()
    assert not at.exception, at.exception


def test_over_time_page_without_a_time_column() -> None:
    at = open_demo_page("over_time", "census")
    assert any("no time column" in info.value for info in at.info)


def test_an_uploaded_table_with_a_time_column_is_monitored() -> None:
    import hashlib

    import pandas as pd
    from streamlit.testing.v1 import AppTest

    from core.monitor import drifting_stream
    from tests.conftest import APP

    p, y, _ = drifting_stream(3_000, 1, onset=1_500, shift=1.5)
    frame = pd.DataFrame({"week": [f"2026-W{1 + i // 100:02d}" for i in range(3_000)],
                          "p": p.round(6), "y": y})
    content = frame.to_csv(index=False).encode()
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.run()
    at.file_uploader(key="upload_file").set_value(("weekly.csv", content, "text/csv")).run()
    key = f"map_{hashlib.sha1(content).hexdigest()[:10]}"
    at.selectbox(key=f"{key}_time").set_value("week").run()
    at.button(key="use_upload").click().run()  # 'week' was guessed as a feature too
    assert "mapped both as an audit feature and as the time column" in at.error[0].value
    at.multiselect(key=f"{key}_features").set_value([]).run()
    at.button(key="use_upload").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["active_audit"].times.is_dates
    at.switch_page("views/over_time.py")
    at.run()
    assert not at.exception, at.exception
    assert "alarm raised in month 2026-" in at.error[0].value
