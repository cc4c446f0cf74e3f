"""AppTest: the Reliability page on a binary and a multiclass demo."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.kernels.rff import TEST_FEATURES
from dashboard.state import cached_demo, set_active
from tests.conftest import APP

TIMEOUT = 180


def open_reliability(demo: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    set_active(cached_demo(demo), f"demo: {demo}", session=at.session_state)
    at.run()
    at.switch_page("views/reliability.py")
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Reliability"
    return at


def metric_names(at: AppTest) -> list[str]:
    return list(at.dataframe[0].value["metric"])


def test_binary_demo_page() -> None:
    at = open_reliability("census")
    assert at.radio(key="rel_part").value == "test"
    assert at.selectbox(key="rel_notion").options == ["positive", "top-label"]
    assert "ECE (L1)" in metric_names(at) and "SKCE (unbiased)" in metric_names(at)
    # the census model is globally calibrated: the SKCE test does not reject on the test split
    assert any("finds no evidence of miscalibration" in s.value for s in at.success)
    tests = at.dataframe[1].value
    assert list(tests["notion"]) == ["canonical"] * 3 + ["positive"] * 5
    assert {"Spiegelhalter z", "Cox: intercept 0 and slope 1", "Cumulative differences, KS",
            "Cumulative differences, Kuiper"} <= set(tests["test"])
    assert {"Smooth ECE", "ICI", "E90", "Calibration slope", "Brier reliability (REL)",
            "Log-loss refinement", "Cumulative Kuiper (H)", "ACE (top-label)"} <= set(
        metric_names(at))
    assert [t.label for t in at.tabs] == ["Binned", "Smooth", "Cumulative differences"]
    assert any("bandwidth σ = " in c.value for c in at.caption)
    meanings = [m.value for m in at.expander[0].markdown]
    assert any(m.startswith("**Smooth ECE**") and "fixed point" in m for m in meanings)
    groups = at.dataframe[2].value
    assert set(groups["group"]) == {"Female", "Male"}
    at.selectbox(key="rel_group").set_value("race").run()
    assert not at.exception, at.exception
    assert "Black" in set(at.dataframe[2].value["group"])
    at.slider(key="rel_bins").set_value(8)
    at.radio(key="rel_strategy").set_value("quantile").run()
    assert not at.exception, at.exception


def test_multiclass_demo_page_with_class_selector() -> None:
    at = open_reliability("multiclass")
    assert at.selectbox(key="rel_notion").options == ["top-label", "classwise"]
    # the overconfident model is caught by the kernel test
    assert any("rejects calibration" in e.value for e in at.error)
    at.selectbox(key="rel_notion").set_value("classwise").run()
    assert not at.exception, at.exception
    classes = at.selectbox(key="rel_class")
    assert classes.options == ["water", "forest", "grassland", "cropland", "urban"]
    classes.set_value(3).run()
    assert not at.exception, at.exception
    extended = at.dataframe[0].value.set_index("metric")
    assert extended.loc["Smooth ECE", "notion"] == "classwise: class 3"
    assert any("classwise" in c.value for c in at.caption)


def test_page_without_groups_or_split() -> None:
    at = open_reliability("itrustworthy")
    assert any("Map group attributes" in i.value for i in at.info)


def test_page_says_which_skce_computation_ran_and_offers_run_exact(monkeypatch) -> None:
    # With the automatic threshold at 0 s every SKCE computation is approximate: the page says
    # so in one sentence and offers the exact run, which then replaces it.
    from core.kernels import computation
    from dashboard.cache.diagnostics import forget_sections

    forget_sections()
    monkeypatch.setattr(computation, "AUTO_SECONDS", 0.0)
    at = open_reliability("census")
    notes = [i.value for i in at.info if "random Fourier features" in i.value]
    assert len(notes) == 1 and "SKCE row rff(1024)" in notes[0]
    assert f"consistency test rff({TEST_FEATURES})" in notes[0]  # the tests' D
    [button] = [b for b in at.button if b.key == "rel_skce_exact"]
    assert button.label.startswith("Run exact (about ")
    button.click().run()
    assert not at.exception, at.exception
    assert not any("random Fourier features" in i.value for i in at.info)
    assert any(c.value.startswith("Computed exactly") for c in at.caption)
    forget_sections()


def test_every_displayed_interval_contains_its_displayed_estimate() -> None:
    """Issue 31: the metrics table shows each error's estimate inside its interval ("≈ 0
    (below the noise)" reads as 0), and the tests' p-values at the resampling floor read
    "≤ 1/(B+1)"."""
    at = open_reliability("census")
    shown = at.dataframe[0].value
    assert list(shown.columns[:3]) == ["metric", "estimate", "interval"]
    checked = 0
    for row in shown.itertuples():
        if row.interval == "—":
            continue
        low, high = (float(x) for x in row.interval.strip("[]").split(", "))
        point = 0.0 if row.estimate.startswith("≈ 0") else float(row.estimate)
        # both printed with four decimals: compare at that precision
        assert low - 5e-5 <= point <= high + 5e-5, (row.metric, row.estimate, row.interval)
        checked += 1
    assert checked >= 15
    p_values = list(at.dataframe[1].value["p-value"])
    assert all(isinstance(p, str) for p in p_values)
    assert not any(p in ("0.0000", "0.0050") for p in p_values)
