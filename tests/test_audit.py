"""run_audit: one headless computation of what the pages show, checked against the pages."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.audit import AuditSettings, audit_part, feature_columns, run_audit
from core.data.demo import load_demo
from core.kernels.rff import TEST_FEATURES
from core.stattests.result import format_p_value, p_text
from dashboard.state import cached_demo
from tests.conftest import open_demo_page

DEMOS = ("census", "itrustworthy", "multiclass", "ensemble")
TIMEOUT = 300


def open_page(page: str, demo: str) -> AppTest:
    return open_demo_page(page, demo, timeout=TIMEOUT)


@pytest.fixture(scope="module", params=DEMOS)
def audited(request):
    progress: list[float] = []
    result = run_audit(cached_demo(request.param),
                       progress=lambda fraction, message: progress.append(fraction))
    return request.param, result, progress


def test_run_audit_matches_the_reliability_and_trust_pages(audited) -> None:
    demo, result, progress = audited
    assert progress[0] == 0.0 and progress[-1] == 1.0 and np.all(np.diff(progress) >= 0)
    at = open_page("reliability", demo)
    shown = at.dataframe[0].value.set_index("metric")
    computed = result.reliability.metrics.set_index("metric")
    assert list(shown.index) == list(computed.index)
    np.testing.assert_allclose(shown["value"], computed["value"], rtol=1e-12)
    tests = at.dataframe[1].value
    consistency = result.reliability.tests["consistency"]
    # the page prints p-values as text (issue 31: "≤ 1/(B+1)" at the floor)
    assert tests["p-value"].iloc[0] == format_p_value(consistency.p_value,
                                                      consistency.n_resamples)
    assert tests["statistic"].iloc[3] == pytest.approx(
        result.reliability.tests["hosmer-lemeshow"].statistic, rel=1e-12)
    assert f"Rows: **{result.rows:,}**" in " ".join(c.value for c in at.caption)

    at = open_page("trust", demo)
    verdicts = " ".join([e.value for e in at.error] + [s.value for s in at.success])
    aggregated = result.klce_grid.aggregated
    assert p_text(aggregated.p_value, aggregated.n_resamples) in verdicts
    assert result.klce_grid.n_resamples == AuditSettings().grid_resamples


def test_run_audit_matches_the_local_bias_and_findings_pages(audited) -> None:
    demo, result, _ = audited
    at = open_page("local_bias", demo)
    assert f"σ_p = {result.lcb.spec.prob_bandwidth:.3g}" in " ".join(c.value for c in at.caption)
    at = open_page("findings", demo)
    # the page's findings are the audit's, in the same order and with the same numbers
    computed = result.slices.findings
    assert result.slices.statement() in " ".join(i.value for i in at.info)
    if len(computed):
        shown = at.dataframe[0].value
        assert list(shown["slice"]) == list(computed["slice"])
        np.testing.assert_allclose(shown["gap"], computed["gap"], rtol=1e-12)
        floor_b = result.slices.n_resamples if result.slices.error_rate == "fwer" else 0
        assert list(shown["p_adjusted"]) == [format_p_value(p, floor_b, 3)
                                             for p in computed["p_adjusted"]]


def test_run_audit_sections_and_settings(audited) -> None:
    demo, result, _ = audited
    audit = load_demo(demo)
    data, part = audit_part(audit, "test")
    assert result.rows == data.n and result.part == part
    assert result.features == feature_columns(audit, None)
    assert result.settings == AuditSettings()
    assert result.fingerprint == audit.fingerprint
    assert set(result.reliability.groups) == set(audit.groups.columns)
    assert result.lce is not None
    # MLCE at γ is one point of the curve, and the curve falls towards the global MCE
    assert result.lce.mlce == pytest.approx(
        result.lce.curve.loc[np.isclose(result.lce.curve["gamma"], 0.2), "mlce"].iloc[0])
    assert result.lce.curve["mlce"].iloc[-1] >= result.lce.mce - 1e-12
    assert result.lce.curve["mlce"].iloc[0] >= result.lce.curve["mlce"].iloc[-1]


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="Unknown part 'holdout'"):
        AuditSettings(part="holdout")
    with pytest.raises(ValueError, match="grid_resamples must be a whole number"):
        AuditSettings(grid_resamples=0)
    with pytest.raises(ValueError, match="gamma"):
        AuditSettings(gamma=-1.0)
    with pytest.raises(ValueError, match="are not mapped"):
        feature_columns(load_demo("ensemble"), ("age",))


def test_the_skce_row_and_tests_record_which_computation_ran() -> None:
    from core import audit
    from core.kernels.computation import summary

    rng = np.random.default_rng(4)
    p = rng.uniform(size=3000)
    y = (rng.random(3000) < p ** 1.4).astype(np.int64)
    exact = audit.metrics_with_skce(p, y, "positive", 10, "uniform", 30, "basic",
                                    computation="exact")
    approx = audit.metrics_with_skce(p, y, "positive", 10, "uniform", 30, "basic",
                                     computation="rff")
    e, a = (t.set_index("metric").loc[audit.SKCE_ROW] for t in (exact, approx))
    assert e["computation"] == "exact" and a["computation"] == "rff(1024)"
    assert "random Fourier features (D = 1024)" in a["description"]
    # the binned rows are the same whatever computes the SKCE row
    np.testing.assert_array_equal(exact["value"].to_numpy()[:-1], approx["value"].to_numpy()[:-1])
    tests = audit.calibration_tests(p, y, "positive", None, 50, computation="rff")
    assert tests["consistency"].parameters["computation"] == f"rff({TEST_FEATURES})"
    note = audit.skce_computation(approx, tests)
    assert note["computation"] == "rff"  # the row's D = 1,024 and the test's D = 256
    assert summary(note).startswith("Computed with random Fourier features: SKCE row rff(1024)")
    assert f"consistency test rff({TEST_FEATURES})" in summary(note)
    exact_tests = audit.calibration_tests(p, y, "positive", None, 50, computation="exact")
    assert audit.skce_computation(exact, exact_tests)["computation"] == "exact"
    assert audit.skce_exact_seconds(3000, 2, 200, 500) > audit.skce_exact_seconds(3000, 2, 0, 1)


def test_sampled_local_sections_on_the_scale_table() -> None:
    """Large-data paths at small n, forced: the sampled LCB evaluates a sample of the rows,
    its mean in the planted region still stands out, and it says what ran; the LCE curve
    records a method and a bound per γ."""
    from core.audit import LandscapeSettings, LocalBiasSettings, lcb_section, lce_section
    from core.data.audit_data import AuditData
    from core.data.simulations import SCALE_FEATURES, scale_table

    data = AuditData.from_frame(scale_table(6000), label="label", prob="prob",
                                features=SCALE_FEATURES, groups=("region",))
    exact = lcb_section(data, LocalBiasSettings(tuple(SCALE_FEATURES)))
    assert exact.rows is None and exact.computation.startswith("Exact")
    section = lcb_section(data, LocalBiasSettings(tuple(SCALE_FEATURES), computation="sampled"))
    assert section.values.shape == section.rows.shape
    assert section.computation.startswith("Sampled") and "seed 0" in section.computation
    regions = data.groups["region"].to_numpy()
    north = (regions == "north")[section.rows]
    means = {r: np.nanmean(section.values[(regions == r)[section.rows]])
             for r in np.unique(regions)}
    assert max(means, key=lambda r: abs(means[r])) == "north"  # the planted bias, sampled
    assert means["north"] == pytest.approx(np.nanmean(section.values[north]))

    lce = lce_section(data, LandscapeSettings(tuple(SCALE_FEATURES), computation="binned"))
    assert set(lce.curve["method"]) == {"binned"} and (lce.curve["error_bound"] > 0).all()
    assert "binned grid (|error| ≤" in lce.computation


def test_the_lce_section_without_a_store_maps_the_features_once(monkeypatch) -> None:
    """The curve and its value at γ (0.2 is not on the curve) read the same feature map:
    without a store it is computed once, and the numbers are those of the audit's store."""
    from core.audit import LandscapeSettings, OnceStore, landscape, lce_section
    from core.data.audit_data import AuditData
    from core.data.simulations import SCALE_FEATURES, scale_table

    data = AuditData.from_frame(scale_table(3000), label="label", prob="prob",
                                features=SCALE_FEATURES, groups=("region",))
    settings = LandscapeSettings(tuple(SCALE_FEATURES))
    expected = lce_section(data, settings, store=OnceStore())
    embeds, embed = [], landscape.embed

    def counted(*args, **kwargs):
        embeds.append(1)
        return embed(*args, **kwargs)

    monkeypatch.setattr(landscape, "embed", counted)
    section = lce_section(data, settings)
    assert len(embeds) == 1
    assert section.curve.equals(expected.curve) and section.mlce == expected.mlce


def test_slice_helpers_on_a_sample_of_rows_and_a_slice_holding_every_row() -> None:
    """The Findings page's closer look: the LCB profile of a sample of the query rows marks
    the slice's rows and draws them against the slice's numeric column; the reliability of
    'all rows' has no rest."""
    import pandas as pd

    from core.audit import LcbSection, slice_lcb_points, slice_reliability
    from core.kernels.spec import KernelSpec
    from core.local.slice_space import enumerate_slices

    data = load_demo("census").split_part("test")
    family = enumerate_slices(data.feature_frame)
    k = next(k for k, s in enumerate(family.slices)
             if s.name.startswith("age ") and "race = Black" in s.name)
    rows = np.arange(0, data.n, 7)
    values = np.linspace(-0.1, 0.1, rows.size)
    section = LcbSection(values, KernelSpec(), pd.DataFrame(), "all rows", rows)
    points, x_name = slice_lcb_points(data, section, family.slices[k], ("age", "sex", "race"))
    assert x_name == "age" and len(points) == rows.size
    np.testing.assert_array_equal(points["inside"], family.mask(k)[rows])
    np.testing.assert_array_equal(points["age"], data.feature_frame["age"].to_numpy()[rows])
    inside, rest = slice_reliability(data, family.mask(0), "positive", None)
    assert rest is None and inside["count"].sum() == data.n


def test_pieces_side_by_side_give_the_numbers_of_one_after_the_other() -> None:
    """The audit's pieces, taken by two threads sharing the cores (one thread each): the same
    numbers as the sections run one after the other on all threads."""
    from core.audit import SectionStore

    data = cached_demo("itrustworthy")
    settings = AuditSettings(n_bootstrap=20, test_resamples=50, grid_resamples=50,
                             slice_resamples=50)
    side_by_side = run_audit(data, settings)
    in_turn = run_audit(data, settings, store=SectionStore())
    np.testing.assert_allclose(
        side_by_side.reliability.metrics.select_dtypes("number").to_numpy(),
        in_turn.reliability.metrics.select_dtypes("number").to_numpy(),
        rtol=1e-12, atol=1e-15, equal_nan=True)
    for key, test in side_by_side.reliability.tests.items():
        assert test.p_value == pytest.approx(in_turn.reliability.tests[key].p_value, rel=1e-12)
    assert side_by_side.klce_grid.aggregated.p_value == \
        pytest.approx(in_turn.klce_grid.aggregated.p_value, rel=1e-12)
    np.testing.assert_allclose(side_by_side.lcb.values, in_turn.lcb.values, rtol=1e-12,
                               equal_nan=True)
    assert side_by_side.lce.mlce == pytest.approx(in_turn.lce.mlce, rel=1e-12)
    assert side_by_side.slices.table.equals(in_turn.slices.table)


def test_a_once_store_computes_each_section_once_and_shares_it_between_threads() -> None:
    """The store of one audit: a section asked for again (from another thread too, while it
    is being computed) is computed once; a section that failed is not kept."""
    import threading
    import time
    from dataclasses import dataclass

    from core.audit import OnceStore, section

    @dataclass(frozen=True)
    class Settings:
        value: int = 1

        def keeping(self, *names):
            return self

    @dataclass(frozen=True)
    class Rows:
        fingerprint: str = "rows"

    calls, failures = [], []

    @section(Settings, "int: the value")
    def slow(data, settings, progress=None, store=None):
        calls.append(threading.current_thread().name)
        time.sleep(0.3)
        return settings.value * 10

    @section(Settings, "int: never")
    def failing(data, settings, progress=None, store=None):
        failures.append(1)
        raise ValueError("no")

    store, answers = OnceStore(), []
    threads = [threading.Thread(target=lambda: answers.append(
        store.section(slow, Rows(), Settings()))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [10, 10, 10] and len(calls) == 1
    assert store.section(slow, Rows(), Settings(2)) == 20 and len(calls) == 2
    for _ in range(2):
        with pytest.raises(ValueError, match="no"):
            store.section(failing, Rows(), Settings())
    assert len(failures) == 2
