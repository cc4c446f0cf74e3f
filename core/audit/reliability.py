"""The Reliability section: the binned table, the metrics with bootstrap intervals, the
calibration tests and the per-group diagnostics, each a piece a cache keeps under the
settings it reads (:func:`core.audit.store.reads`).

Pieces: :func:`binned_table` (:func:`~core.metrics.reliability_table` with its consistency
band), :func:`summary_metrics` (the metrics table with bootstrap intervals plus the canonical
SKCE row, :func:`metrics_with_skce`), :func:`extended_rows` (smooth ECE, ICI family, calibration
slope and intercept, score decompositions, cumulative metrics), :func:`test_results`
(:func:`calibration_tests`: SKCE consistency, block z-test, bound test, Hosmer–Lemeshow,
Spiegelhalter, Cox, cumulative KS and Kuiper), :func:`group_tables` (per group attribute), and the
page's curves :func:`smooth_curve` and :func:`cumulative_curve`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from core import metrics
from core.audit.results import ReliabilitySection
from core.audit.settings import EXTENDED_RESAMPLES, ReliabilitySettings
from core.audit.store import Progress, SectionStore, section
from core.data.audit_data import AuditData
from core.kernels.computation import exact_seconds
from core.kernels.computation import summary as computation_summary
from core.kernels.rff import TEST_FEATURES
from core.local.groups import group_calibration_table, group_reliability_tables
from core.metrics import cumulative
from core.metrics.extended import extended_metrics_table
from core.metrics.skce_estimate import skce_summary
from core.metrics.smooth import SmoothReliability, smooth_reliability
from core.stattests import clinical as clinical_tests
from core.stattests import cumulative as cumulative_tests
from core.stattests.goodness_of_fit import hosmer_lemeshow
from core.stattests.result import TestResult, format_p_value
from core.stattests.skce import bound_test, skce_test

#: Name of the canonical SKCE row of :func:`metrics_with_skce`.
SKCE_ROW = "SKCE (unbiased)"
#: Most bootstrap resamples of the SKCE row (each is a column of one kernel pass).
SKCE_RESAMPLES = 200


def metrics_with_skce(probs: np.ndarray, y: np.ndarray, notion: str, n_bins: int,
                      strategy: str, n_resamples: int, method: str, seed: int = 0,
                      computation: str = "auto") -> pd.DataFrame:
    """:func:`core.metrics.metrics_table` plus the canonical SKCE with its bootstrap interval
    (at most :data:`SKCE_RESAMPLES` resamples), computed under the ``computation`` rule of
    :func:`core.stattests.skce.skce_test` (:func:`core.metrics.skce_estimate.skce_summary`). The
    SKCE row's
    ``computation`` and ``computation_reason`` columns say which ran (``"exact"``,
    ``"rff(1024)"``, ``"block(2)"``) and why; its description ends with that sentence.

    Parameters
    ----------
    probs : ndarray
        Predicted probabilities, ``(n, k)``.
    y : ndarray
        Labels.
    notion : str
        The calibration notion of the binned metrics.
    n_bins : int
        Bins.
    strategy : str
        ``"uniform"`` or ``"quantile"`` bins.
    n_resamples : int
        Bootstrap resamples of the intervals.
    method : str
        ``"basic"`` or ``"percentile"`` bootstrap interval.
    seed : int, default 0
        Seed of the bootstrap.
    computation : str, default "auto"
        The SKCE computation.
    """
    table = metrics.metrics_table(probs, y, notion=notion, n_bins=n_bins, strategy=strategy,
                                  n_resamples=n_resamples, method=method, seed=seed)
    result = skce_summary(probs, y, n_resamples=min(n_resamples, SKCE_RESAMPLES),
                          method=method, seed=seed, computation=computation)
    ran = {"computation": result.computation, "computation_reason": result.reason}
    skce_row = pd.DataFrame([{
        "metric": SKCE_ROW, "value": result.value, "estimate": result.value,
        # the SKCE is ≥ 0: its interval is clipped there (the estimate may be below it)
        "ci_low": float(np.clip(result.ci_low, 0.0, None)),
        "ci_high": float(np.clip(result.ci_high, 0.0, None)), "notion": "canonical",
        "description": "Squared kernel calibration error of the whole probability vector, "
                       "Gaussian kernel with median-heuristic bandwidth (Widmann et al. 2019); "
                       "0 when calibrated, can be slightly negative. "
                       + computation_summary(ran),
        **ran,
    }])
    return pd.concat([table, skce_row], ignore_index=True)


def skce_computation(table: pd.DataFrame, tests: dict[str, TestResult]) -> dict[str, str]:
    """Which computation ran for the SKCE row of :func:`metrics_with_skce` and the SKCE
    consistency test of :func:`calibration_tests`, as ``{"computation", "computation_reason"}``
    (:func:`core.kernels.computation.summary` turns it into the page's sentence): ``"exact"`` when
    both were exact, else the approximation's label, with both reasons.

    Parameters
    ----------
    table : DataFrame
        The metrics of :func:`metrics_with_skce`.
    tests : dict of str to TestResult
        The tests of :func:`calibration_tests`.
    """
    row = table.loc[table["metric"] == SKCE_ROW].iloc[0]
    test = tests["consistency"].parameters
    parts = {"SKCE row": (row["computation"], row["computation_reason"]),
             "consistency test": (test.get("computation", "exact"),
                                  test.get("computation_reason", ""))}
    approximate = {lab for lab, _ in parts.values() if lab != "exact"}
    label = approximate.pop() if len(approximate) == 1 else \
        ("rff" if approximate else "exact")  # different D: the sentence names each
    reason = "; ".join(f"{name} {lab}, {why}" if why else f"{name} {lab}"
                       for name, (lab, why) in parts.items())
    return {"computation": label, "computation_reason": reason}


def skce_exact_seconds(n: int, n_classes: int, n_bootstrap: int, test_resamples: int) -> float:
    """Estimated time here of the exact SKCE row (value and bootstrap) and the exact SKCE
    consistency test: ``(B + 1)·m`` residual columns each (m = 1 for binary problems).

    Parameters
    ----------
    n : int
        Rows.
    n_classes : int
        Classes.
    n_bootstrap : int
        Bootstrap resamples of the SKCE row.
    test_resamples : int
        Resamples of the consistency test.
    """
    m = 1 if n_classes == 2 else n_classes
    return (exact_seconds(n, (min(n_bootstrap, SKCE_RESAMPLES) + 1) * m)
            + exact_seconds(n, (test_resamples + 1) * m))


def extended_metrics(probs: np.ndarray, y: np.ndarray, notion: str, class_index: int | None,
                     n_resamples: int, method: str, seed: int = 0) -> pd.DataFrame:
    """The rows of :func:`core.metrics.extended.extended_metrics_table` (at most
    ``EXTENDED_RESAMPLES`` bootstrap resamples); ``class_index`` is used for classwise only."""
    return extended_metrics_table(probs, y, notion, class_index if notion == "classwise" else None,
                                  min(n_resamples, EXTENDED_RESAMPLES), seed=seed, method=method)


def smooth_diagram(probs: np.ndarray, y: np.ndarray, notion: str, class_index: int | None,
                   n_resamples: int = 200, seed: int = 0) -> SmoothReliability:
    """The smooth reliability diagram with its bootstrap band (:mod:`core.metrics.smooth`)."""
    return smooth_reliability(probs, y, notion, class_index if notion == "classwise" else None,
                              n_resamples=n_resamples, seed=seed)


def cumulative_path(probs: np.ndarray, y: np.ndarray, notion: str, class_index: int | None
                    ) -> cumulative.CumulativeDifferences:
    """The cumulative differences of :mod:`core.metrics.cumulative`."""
    return cumulative.cumulative_differences(
        probs, y, notion, class_index if notion == "classwise" else None)


def calibration_tests(probs: np.ndarray, y: np.ndarray, notion: str, class_index: int | None,
                      n_resamples: int, seed: int = 0, computation: str = "auto"
                      ) -> dict[str, TestResult]:
    """The SKCE tests (canonical notion), and on the chosen notion Hosmer–Lemeshow, the
    Spiegelhalter z test, Cox's slope/intercept test and the cumulative KS and Kuiper tests.
    A test that is undefined on these rows (e.g. Cox's with one outcome only) is left out.
    ``computation`` applies to the SKCE consistency test (:func:`core.stattests.skce.skce_test`);
    the bound test reuses its statistic.

    Parameters
    ----------
    probs : ndarray
        Predicted probabilities, ``(n, k)``.
    y : ndarray
        Labels.
    notion : str
        The calibration notion of the curve-based tests.
    class_index : int or None
        The class of the classwise notion.
    n_resamples : int
        Resamples B of the SKCE consistency test.
    seed : int, default 0
        Seed of the resampling.
    computation : str, default "auto"
        The SKCE computation (:mod:`core.kernels.computation`).
    """
    conf, outcome = metrics.confidence_outcome(probs, y, notion, class_index)
    consistency = skce_test(probs, y, n_resamples=n_resamples, seed=seed,
                            computation=computation, n_features=TEST_FEATURES)
    tests = {
        "consistency": consistency,
        # the same median-heuristic bandwidth, not computed again
        "block": skce_test(probs, y, consistency.parameters["bandwidth"], method="block"),
        # the bound test needs only the statistic the consistency test already computed
        "bound": bound_test(consistency.statistic, len(y), consistency.parameters["bandwidth"]),
        "hosmer-lemeshow": hosmer_lemeshow(conf, outcome),
    }
    if conf.ndim == 1:  # one confidence per row: the curve-based tests apply
        pair = (conf, outcome.astype(np.int64))
        for key, run in (("spiegelhalter", lambda: clinical_tests.spiegelhalter_test(*pair)),
                         ("cox", lambda: clinical_tests.cox_test(*pair)),
                         ("cumulative-ks", lambda: cumulative_tests.cumulative_test(*pair, "ks")),
                         ("cumulative-kuiper",
                          lambda: cumulative_tests.cumulative_test(*pair, "kuiper"))):
            try:
                tests[key] = run()
            except ValueError:
                continue
    return tests


#: Test key → (display name, detail from the result) of the curve-based tests in the table.
_CURVE_TESTS = {
    "spiegelhalter": ("Spiegelhalter z", lambda t: "two-sided, N(0, 1)"),
    "cox": ("Cox: intercept 0 and slope 1", lambda t: f"LR χ², df = 2; slope "
            f"{t.parameters['slope']:.3f}, intercept {t.parameters['intercept']:.3f}"),
    "cumulative-ks": ("Cumulative differences, KS", lambda t: "G/σ, Brownian sup |B|"),
    "cumulative-kuiper": ("Cumulative differences, Kuiper", lambda t: "H/σ, Brownian range"),
}


def tests_table(tests: dict[str, TestResult], notion: str) -> pd.DataFrame:
    """The tests of :func:`calibration_tests` as the Reliability page's table: columns
    ``test, notion, statistic, p-value, detail``; the SKCE tests, Hosmer–Lemeshow, then the
    curve-based tests that ran. The p-value is text (``core.stattests.result.format_p_value``:
    ``≤ 1/(B+1)`` at a resampling test's floor).

    Parameters
    ----------
    tests : dict of str to TestResult
        The tests of :func:`calibration_tests`.
    notion : str
        The notion of the curve-based tests.
    """
    consistency, block, hl = tests["consistency"], tests["block"], tests["hosmer-lemeshow"]

    def p(test: TestResult) -> str:
        return format_p_value(test.p_value, test.n_resamples)

    rows = [
        ("SKCE, consistency resampling", "canonical", consistency.statistic,
         p(consistency), f"B = {consistency.n_resamples}"),
        ("SKCE, block z-test (b = 2)", "canonical", block.statistic, p(block),
         f"z = {block.parameters['z']:.2f}"),
        ("SKCE, distribution-free bound", "canonical", tests["bound"].statistic,
         p(tests["bound"]), "Hoeffding bound, conservative"),
        ("Hosmer–Lemeshow", notion, hl.statistic, p(hl),
         f"df = {hl.parameters['degrees_of_freedom']}"),
    ]
    rows += [(name, notion, tests[key].statistic, p(tests[key]), detail(tests[key]))
             for key, (name, detail) in _CURVE_TESTS.items() if key in tests]
    return pd.DataFrame(rows, columns=["test", "notion", "statistic", "p-value", "detail"])


def group_diagnostics(audit: AuditData, group: str, notion: str, class_index: int | None,
                      n_bins: int, strategy: str
                      ) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Per-level summary table and reliability tables of one group attribute."""
    labels = audit.groups[group].to_numpy()
    summary = group_calibration_table(audit.probs, audit.y, labels, notion, n_bins, strategy,
                                      class_index)
    tables = group_reliability_tables(audit.probs, audit.y, labels, notion, n_bins, strategy,
                                      class_index)
    return summary, tables


def resolved(data: AuditData, settings: ReliabilitySettings) -> ReliabilitySettings:
    """``settings`` with the data's default notion for ``None`` and the class kept only for
    the classwise notion: the settings every piece is keyed by.

    Parameters
    ----------
    data : AuditData
        The audited rows.
    settings : ReliabilitySettings
        The page's settings.
    """
    notion = settings.notion or metrics.default_notion(data.probs)
    return replace(settings, notion=notion,
                   class_index=settings.class_index if notion == "classwise" else None)


@section(ReliabilitySettings,
         "DataFrame: one row per bin (:func:`core.metrics.reliability_table`)",
         reads=("notion", "class_index", "n_bins", "strategy", "interval"))
def binned_table(data: AuditData, settings: ReliabilitySettings,
                 progress: Progress | None = None, store=None) -> pd.DataFrame:
    """One row per bin (:func:`core.metrics.reliability_table`)."""
    return metrics.reliability_table(data.probs, data.y, n_bins=settings.n_bins,
                                     strategy=settings.strategy, notion=settings.notion,
                                     interval=settings.interval,
                                     class_index=settings.class_index)


@section(ReliabilitySettings,
         "DataFrame: the metrics table with intervals and the SKCE row",
         reads=("notion", "n_bins", "strategy", "n_bootstrap", "bootstrap_method",
                "computation", "seed"))
def summary_metrics(data: AuditData, settings: ReliabilitySettings,
                    progress: Progress | None = None, store=None) -> pd.DataFrame:
    """The binned metrics with bootstrap intervals and the SKCE row (:func:`metrics_with_skce`)."""
    return metrics_with_skce(data.probs, data.y, settings.notion, settings.n_bins,
                             settings.strategy, settings.n_bootstrap, settings.bootstrap_method,
                             settings.seed, settings.computation)


@section(ReliabilitySettings,
         "DataFrame: the extended metrics rows",
         reads=("notion", "class_index", "n_bootstrap", "bootstrap_method", "seed"))
def extended_rows(data: AuditData, settings: ReliabilitySettings,
                  progress: Progress | None = None, store=None) -> pd.DataFrame:
    """The rows from smooth ECE on (:func:`extended_metrics`)."""
    return extended_metrics(data.probs, data.y, settings.notion, settings.class_index,
                            settings.n_bootstrap, settings.bootstrap_method, settings.seed)


@section(ReliabilitySettings,
         "dict of str to TestResult: the tests that ran, by key",
         reads=("notion", "class_index", "test_resamples", "computation", "seed"))
def test_results(data: AuditData, settings: ReliabilitySettings,
                 progress: Progress | None = None, store=None) -> dict[str, TestResult]:
    """The calibration tests (:func:`calibration_tests`)."""
    return calibration_tests(data.probs, data.y, settings.notion, settings.class_index,
                             settings.test_resamples, settings.seed, settings.computation)


@section(ReliabilitySettings,
         "dict: group attribute → (summary table, reliability table per level)",
         reads=("notion", "class_index", "n_bins", "group_bins", "strategy"))
def group_tables(data: AuditData, settings: ReliabilitySettings,
                 progress: Progress | None = None, store=None
                 ) -> dict[str, tuple[pd.DataFrame, dict[str, pd.DataFrame]]]:
    """Group attribute → its per-level summary and reliability tables
    (:func:`group_diagnostics`, ``min(n_bins, group_bins)`` bins)."""
    return {g: group_diagnostics(data, g, settings.notion, settings.class_index,
                                 min(settings.n_bins, settings.group_bins), settings.strategy)
            for g in data.groups.columns}


@section(ReliabilitySettings,
         "SmoothReliability: the curve with its bootstrap band",
         reads=("notion", "class_index"))
def smooth_curve(data: AuditData, settings: ReliabilitySettings,
                 progress: Progress | None = None, store=None) -> SmoothReliability:
    """The smooth reliability diagram (:func:`smooth_diagram`)."""
    return smooth_diagram(data.probs, data.y, settings.notion, settings.class_index)


@section(ReliabilitySettings,
         "CumulativeDifferences: the path and its ±2σ range",
         reads=("notion", "class_index"))
def cumulative_curve(data: AuditData, settings: ReliabilitySettings,
                     progress: Progress | None = None, store=None
                     ) -> cumulative.CumulativeDifferences:
    """The cumulative differences (:func:`cumulative_path`)."""
    return cumulative_path(data.probs, data.y, settings.notion, settings.class_index)


@section(ReliabilitySettings, "ReliabilitySection: the table, metrics, tests and groups")
def reliability_section(data: AuditData, settings: ReliabilitySettings,
                        progress: Progress | None = None,
                        store: SectionStore | None = None) -> ReliabilitySection:
    """The Reliability page at ``settings`` on the audited rows ``data``, each piece from
    ``store`` (computed, or a cache's)."""
    store = store or SectionStore()
    settings = resolved(data, settings)
    summary = pd.concat([store.section(summary_metrics, data, settings),
                         store.section(extended_rows, data, settings)], ignore_index=True)
    return ReliabilitySection(store.section(binned_table, data, settings), summary,
                              store.section(test_results, data, settings),
                              store.section(group_tables, data, settings), settings.notion)
