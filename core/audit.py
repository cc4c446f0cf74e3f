"""One headless audit: everything the pages show, computed by the same functions.

The app's pages, the report and the command line all call the functions here — the pages
through their caches, one section at a time as the widgets ask; :func:`run_audit` calls them
all with one :class:`AuditSettings` and returns an :class:`AuditResult` that carries its
settings, so a caption or the report can state exactly what was computed.

Sections, in the order of the pages:

* **Reliability** — :func:`~core.metrics.reliability_table` with its consistency band,
  :func:`metrics_with_skce` (the metrics table with bootstrap intervals plus the canonical
  SKCE row) and :func:`extended_metrics` (smooth ECE, ICI family, calibration slope and
  intercept, score decompositions, cumulative metrics), the smooth reliability diagram and the
  cumulative differences (:func:`smooth_diagram`, :func:`cumulative_path`),
  :func:`calibration_tests` (SKCE consistency, block z-test, bound test, Hosmer–Lemeshow,
  Spiegelhalter, Cox, cumulative KS and Kuiper) and :func:`group_diagnostics` per group
  attribute.
* **Trust test** — the KLCE² bandwidth grid and its aggregated test
  (:func:`core.stattests.klce_grid.klce_grid_test`).
* **Local bias** — LCB with cross-validated bandwidths, the calibration split as reference
  and the test split as query (:func:`lcb_section`).
* **Findings** — the slices of the audit features and group attributes where the model is
  miscalibrated, with family-wise or false-discovery error control
  (:func:`slice_section`, :func:`core.local.slice_discovery.discover_slices`).
* **LCE landscape** — MLCE against γ over a map of the audit features (:func:`lce_section`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core import local, metrics
from core.data.audit_data import AuditData
from core.data.validation import check_choice, check_count, check_positive
from core.kernels import engine
from core.kernels.computation import COMPUTATIONS, exact_seconds
from core.kernels.computation import summary as computation_summary
from core.kernels.engine import CoreShare, in_threads, machine_workers, sharing
from core.kernels.resampling import row_sample
from core.kernels.rff import TEST_FEATURES
from core.kernels.spec import KernelSpec, one_vs_rest
from core.local.embedding import (
    Embedding,
    embed,
    landscape_coordinates,
    prepare_features,
    profile_coordinates,
)
from core.local.groups import group_calibration_table, group_reliability_tables
from core.local.lcb_estimate import LcbEstimate
from core.local.lcb_estimate import lcb_estimate as estimate_lcb
from core.local.lce_estimate import mlce_curve
from core.local.slice_discovery import (
    ERROR_RATES,
    SliceDiscovery,
    discover_slices,
    with_prediction,
)
from core.local.slice_space import Slice
from core.metrics import cumulative
from core.metrics.extended import extended_metrics_table
from core.metrics.skce_estimate import skce_summary
from core.metrics.smooth import SmoothReliability, smooth_reliability
from core.stattests import clinical as clinical_tests
from core.stattests import cumulative as cumulative_tests
from core.stattests.goodness_of_fit import hosmer_lemeshow
from core.stattests.klce import DEFAULT_NULL, NULLS
from core.stattests.klce_grid import GridTestResult
from core.stattests.result import TestResult, format_p_value
from core.stattests.skce import bound_test, skce_test

Progress = Callable[[float, str], None]

PARTS = ("test", "calibration", "train", "all")
#: γ grid of the MLCE curve (Luo et al., Fig. 1), the LCE page's.
CURVE_GAMMAS = tuple(float(g) for g in np.logspace(-3, 1.5, 13))
#: Confidence bins of the LCE (the paper's 15 equal-width bins).
LCE_BINS = 15
#: Most rows of the MLCE curve; beyond, a seeded sample of this many (the exact LCE sweep at
#: small γ takes several seconds per γ at 10⁶ rows on two cores).
LCE_ROWS = 200_000
#: Most bootstrap resamples of the extended metrics (each refits every curve).
EXTENDED_RESAMPLES = 100
#: Above this many rows the Reliability page offers fewer bootstrap resamples by default.
LARGE_ROWS = 100_000


def default_bootstrap(n: int) -> int:
    """The Reliability page's default bootstrap resamples: 200, or 50 above
    :data:`LARGE_ROWS` rows, where each resample of every metric costs a pass over the rows
    (about 0.3 s at 10⁶) while the intervals are already narrow; the page shows the value and
    the user may raise it."""
    return 50 if n > LARGE_ROWS else 200


@dataclass(frozen=True)
class AuditSettings:
    """Every setting of an audit; the defaults are the pages' defaults.

    ``part`` picks the rows audited (the test split by default when the data has one);
    ``features`` the audit features of the local tests (``None``: all mapped ones);
    ``class_index`` the class tested one-vs-rest in a multiclass problem (``None``: the
    positive class, or class 0 for multiclass); ``group`` the attribute of the per-group
    diagnostics (``None``: every group attribute).
    """

    part: str = "test"
    notion: str | None = None
    class_index: int | None = None
    n_bins: int = 15
    strategy: str = "uniform"
    interval: str = "wilson"
    n_bootstrap: int = 200
    bootstrap_method: str = "basic"
    test_resamples: int = 500
    group_bins: int = 10
    features: tuple[str, ...] | None = None
    null: str = DEFAULT_NULL
    grid_resamples: int = 200
    computation: str = "auto"
    grid_features: int = TEST_FEATURES
    embedding: str = "pca"
    gamma: float = 0.2
    slice_ranges: int = 4
    slice_depth: int = 2
    slice_resamples: int = 1000
    slice_notion: str | None = None
    error_rate: str = "fwer"
    alpha: float = 0.05
    seed: int = 0

    def __post_init__(self) -> None:
        check_choice(self.part, PARTS, "part", f"choose one of {', '.join(PARTS)}")
        check_choice(self.null, NULLS, "null", f"choose one of {', '.join(NULLS)}")
        check_choice(self.embedding, ("pca", "tsne", "umap"), "embedding method")
        check_choice(self.computation, COMPUTATIONS, "computation",
                     f"choose one of {', '.join(COMPUTATIONS)}")
        check_choice(self.error_rate, ERROR_RATES, "error rate",
                     "choose 'fwer' (family-wise) or 'fdr' (false discovery rate)")
        for name, minimum in (("n_bins", 1), ("n_bootstrap", 0), ("test_resamples", 1),
                              ("group_bins", 1), ("grid_resamples", 1), ("slice_ranges", 2),
                              ("slice_depth", 1), ("slice_resamples", 1), ("seed", 0),
                              ("grid_features", 2)):
            check_count(name, getattr(self, name), minimum)
        if self.slice_depth > 3:
            raise ValueError(f"slice_depth must be 1, 2 or 3 (columns in one slice), not "
                             f"{self.slice_depth}.")
        check_positive("gamma", self.gamma)
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must lie strictly between 0 and 1, not {self.alpha!r}.")


@dataclass(frozen=True)
class ReliabilitySection:
    table: pd.DataFrame  # one row per bin (metrics.reliability_table)
    metrics: pd.DataFrame  # metric, value, ci_low, ci_high, notion, description
    tests: dict[str, TestResult]
    groups: dict[str, tuple[pd.DataFrame, dict[str, pd.DataFrame]]]  # attribute → diagnostics
    notion: str


@dataclass(frozen=True)
class LcbSection:
    values: np.ndarray  # LCB of the evaluated query rows (NaN: no reference neighbours)
    spec: KernelSpec  # the cross-validated bandwidths
    cv_table: pd.DataFrame
    reference: str  # how reference and query rows were chosen
    rows: np.ndarray | None = None  # query rows of ``values`` (None: all, in order)
    computation: str = "exact"  # what ran, one sentence (LcbEstimate.describe)
    exact_seconds: float = 0.0  # estimated time of the exact computation


@dataclass(frozen=True)
class LceSection:
    curve: pd.DataFrame  # gamma, mlce, mean_lce, method, error_bound
    mlce: float  # at settings.gamma
    mce: float  # the binned MCE the curve tends to (top-label, 15 bins)
    map: str  # what the LCE kernel runs on
    computation: str = ""  # which computations ran over γ and their worst-case error


@dataclass(frozen=True)
class StreamInfo:
    """How a streamed audit (:func:`core.stream_audit.run_stream_audit`) read a table larger
    than memory: its source, rows and partitions, the engine, the seeded sample of the
    sections that are not sums over rows, and which numbers came from all rows and which
    from the sample (one phrase each), the class balance of the audited rows and the time of
    each pass."""

    source: str
    rows: int
    partitions: int
    engine: str
    sample_rows: int
    sample_fingerprint: str
    exact: tuple[str, ...]
    sampled: tuple[str, ...]
    class_balance: pd.DataFrame = field(repr=False)
    passes: tuple[tuple[str, float], ...] = ()
    batch_rows: int = 0  # the most rows of a batch (core.kernels.memory.MemoryPlan)
    memory_target: int = 0  # the peak (bytes) the batches were sized for
    memory_budget: int = 0  # the budget (bytes) the plan kept within
    batching: str = ""  # the plan in words (MemoryPlan.describe)

    def describe(self) -> str:
        """One sentence for a report: all rows for the sums, the sample for the rest."""
        return (f"Streamed from {self.source} on {self.engine}"
                f"{f' in {self.batching}' if self.batching else ''}: "
                f"{'; '.join(self.exact)} over all audited rows; "
                f"{'; '.join(self.sampled)} on a seeded sample of {self.sample_rows:,} of the "
                f"{self.rows:,} rows.")


@dataclass(frozen=True)
class AuditResult:
    """What :func:`run_audit` found, with the settings and the rows it used (``stream``: how a
    streamed audit read its table, ``None`` in memory)."""

    settings: AuditSettings
    dataset: str
    fingerprint: str
    rows: int
    part: str
    features: tuple[str, ...]
    reliability: ReliabilitySection
    klce_grid: GridTestResult
    lcb: LcbSection
    lce: LceSection | None
    slices: SliceDiscovery
    notes: tuple[str, ...] = field(default=())
    stream: StreamInfo | None = None


# --------------------------------------------------------------------------- rows and inputs


def audit_part(audit: AuditData, part: str) -> tuple[AuditData, str]:
    """The rows audited: one split (when the data has it and it is not empty) or all rows."""
    check_choice(part, PARTS, "part", f"choose one of {', '.join(PARTS)}")
    if audit.split is None or part == "all" or not np.any(audit.split == part):
        return audit, "all rows"
    return audit.split_part(part), part


def feature_columns(audit: AuditData, features: tuple[str, ...] | None) -> tuple[str, ...]:
    """The audit features used (``None``: every mapped feature), checked against the data."""
    return feature_columns_of(tuple(audit.feature_frame.columns), features)


def feature_columns_of(mapped: tuple[str, ...], features: tuple[str, ...] | None
                       ) -> tuple[str, ...]:
    """:func:`feature_columns` against the ``mapped`` audit features (a streamed table's)."""
    mapped = tuple(mapped)
    if features is None:
        return mapped
    unknown = [f for f in features if f not in mapped]
    if unknown:
        raise ValueError(f"Audit feature(s) {', '.join(map(repr, unknown))} are not mapped; "
                         f"the mapped audit features are {', '.join(map(repr, mapped)) or 'none'}.")
    return tuple(features)


def local_inputs(audit: AuditData, features: tuple[str, ...], class_index: int | None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, KernelSpec]:
    """``(probs, y, X, spec)`` of the local statistics: no features → ``X = None``; binary
    data ignores ``class_index`` (the positive class is tested)."""
    X = audit.feature_matrix(features) if features else None
    return audit.probs, audit.y, X, KernelSpec(class_index=tested_class(audit, class_index))


def tested_class(audit: AuditData, class_index: int | None) -> int | None:
    """The class the local statistics test one-vs-rest: ``None`` (the positive class) for
    binary data, else ``class_index`` (class 0 when not given)."""
    return None if audit.is_binary else (0 if class_index is None else class_index)


def reference_and_query(audit: AuditData) -> tuple[AuditData, AuditData, str]:
    """LCB's labelled reference rows and the rows it is evaluated at (paper §4: reference =
    calibration split, query = test split; without both, all rows leave-one-out)."""
    if audit.split is not None and {"calibration", "test"} <= set(audit.split):
        return (audit.split_part("calibration"), audit.split_part("test"),
                "reference: calibration split, evaluated on the test split")
    return audit, audit, "all rows, each left out of its own estimate"


# --------------------------------------------------------------------------- reliability


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
    ``"rff(1024)"``, ``"block(2)"``) and why; its description ends with that sentence."""
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
    both were exact, else the approximation's label, with both reasons."""
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
    consistency test: ``(B + 1)·m`` residual columns each (m = 1 for binary problems)."""
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
    the bound test reuses its statistic."""
    conf, outcome = metrics.confidence_outcome(probs, y, notion, class_index)
    consistency = skce_test(probs, y, n_resamples=n_resamples, seed=seed,
                            computation=computation, n_features=TEST_FEATURES)
    tests = {
        "consistency": consistency,
        "block": skce_test(probs, y, method="block"),
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
    ``≤ 1/(B+1)`` at a resampling test's floor)."""
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


def reliability_section(data: AuditData, settings: AuditSettings,
                        sections: Sections | None = None) -> ReliabilitySection:
    """The Reliability page at ``settings`` on the audited rows ``data`` (each piece from
    ``sections``: computed, or a cache's)."""
    sections = sections or Sections()
    notion = settings.notion or metrics.default_notion(data.probs)
    class_index = settings.class_index if notion == "classwise" else None
    table = sections.reliability_table(data, notion, class_index, settings)
    summary = pd.concat([sections.metrics(data, notion, settings),
                         sections.extended(data, notion, class_index, settings)],
                        ignore_index=True)
    tests = sections.tests(data, notion, class_index, settings)
    groups = {g: sections.groups(data, g, notion, class_index, settings)
              for g in data.groups.columns}
    return ReliabilitySection(table, summary, tests, groups, notion)


class Sections:
    """The computations an audit is made of, one method a piece, each computing it.

    :func:`run_audit` asks an instance for every piece. A subclass may answer from a cache:
    the app's Export page passes the pages' own caches
    (``dashboard.cache.diagnostics.PageSections``), so a report at the settings the pages
    used reuses what they already computed instead of computing it again.
    """

    def reliability_table(self, data: AuditData, notion: str, class_index: int | None,
                          settings: AuditSettings) -> pd.DataFrame:
        return metrics.reliability_table(data.probs, data.y, n_bins=settings.n_bins,
                                         strategy=settings.strategy, notion=notion,
                                         interval=settings.interval, class_index=class_index)

    def metrics(self, data: AuditData, notion: str, settings: AuditSettings) -> pd.DataFrame:
        return metrics_with_skce(data.probs, data.y, notion, settings.n_bins,
                                 settings.strategy, settings.n_bootstrap,
                                 settings.bootstrap_method, settings.seed,
                                 settings.computation)

    def extended(self, data: AuditData, notion: str, class_index: int | None,
                 settings: AuditSettings) -> pd.DataFrame:
        return extended_metrics(data.probs, data.y, notion, class_index, settings.n_bootstrap,
                                settings.bootstrap_method, settings.seed)

    def tests(self, data: AuditData, notion: str, class_index: int | None,
              settings: AuditSettings) -> dict[str, TestResult]:
        return calibration_tests(data.probs, data.y, notion, class_index,
                                 settings.test_resamples, settings.seed, settings.computation)

    def groups(self, data: AuditData, group: str, notion: str, class_index: int | None,
               settings: AuditSettings) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
        return group_diagnostics(data, group, notion, class_index,
                                 min(settings.n_bins, settings.group_bins), settings.strategy)

    def klce_grid(self, data: AuditData, features: tuple[str, ...], settings: AuditSettings,
                  progress: Progress | None = None) -> GridTestResult:
        return klce_grid(data, features, settings.class_index, settings.null,
                         settings.grid_resamples, settings.seed, progress=progress,
                         computation=settings.computation, n_features=settings.grid_features)

    def lcb(self, audit: AuditData, features: tuple[str, ...],
            settings: AuditSettings) -> LcbSection:
        return lcb_section(audit, features, settings.class_index)

    def slices(self, data: AuditData, names: tuple[str, ...], settings: AuditSettings,
               progress: Progress | None = None) -> SliceDiscovery:
        return slice_section(data, names, settings, progress=progress)

    def lce(self, data: AuditData, features: tuple[str, ...], settings: AuditSettings,
            progress: Progress | None = None) -> LceSection | None:
        return lce_section(data, features, settings.embedding, settings.gamma, settings.seed,
                           progress=progress)


# --------------------------------------------------------------------------- local


def klce_grid(data: AuditData, features: tuple[str, ...], class_index: int | None,
              null: str, n_resamples: int, seed: int = 0,
              progress: Progress | None = None, computation: str = "auto",
              n_features: int = TEST_FEATURES) -> GridTestResult:
    """The Trust page's bandwidth grid and aggregated KLCE test (``computation``: see
    :mod:`core.kernels.computation`; random Fourier features with ``n_features`` per grid point)."""
    probs, y, X, spec = local_inputs(data, features, class_index)
    return local.klce_grid_test(probs, y, X, null=null, n_resamples=n_resamples, seed=seed,
                                progress=progress, spec=spec, computation=computation,
                                n_features=n_features)


def lcb_bandwidths(reference: AuditData, features: tuple[str, ...],
                   class_index: int | None) -> tuple[float, float, pd.DataFrame]:
    """LCB bandwidths by leave-one-out cross-validation on the reference rows."""
    probs, y, X, spec = local_inputs(reference, features, class_index)
    return local.select_bandwidths(probs, y, X, class_index=spec.class_index)


def lcb_values(reference: AuditData, query: AuditData, features: tuple[str, ...],
               class_index: int | None, prob_bandwidth: float,
               feature_bandwidth: float) -> np.ndarray:
    """LCB (eq. 7) of every query row from the reference rows (leave-one-out when the query
    rows are the reference rows), exactly (:func:`lcb_estimate` chooses)."""
    return lcb_estimate(reference, query, features, class_index, prob_bandwidth,
                        feature_bandwidth, computation="exact").values


def lcb_estimate(reference: AuditData, query: AuditData, features: tuple[str, ...],
                 class_index: int | None, prob_bandwidth: float, feature_bandwidth: float,
                 computation: str = "auto", seed: int = 0) -> LcbEstimate:
    """LCB of the query rows, exact or sampled (:func:`core.local.lcb_estimate.lcb_estimate`: exact
    while that takes at most about 10 s, else 50,000 seeded query rows from 20,000 seeded
    reference rows)."""
    probs, y, X, spec = local_inputs(reference, features, class_index)
    spec = spec.with_bandwidths(prob_bandwidth, feature_bandwidth)
    if query is reference:
        return estimate_lcb(probs, y, X, spec=spec, computation=computation, seed=seed)
    q_probs, _, q_X, _ = local_inputs(query, features, class_index)
    return estimate_lcb(probs, y, X, q_probs, q_X, spec=spec, computation=computation,
                        seed=seed)


def numeric_features(audit: AuditData, features: tuple[str, ...]) -> list[str]:
    """The chosen audit features that are numeric (LCB is drawn against one of them)."""
    return [c for c in features if pd.api.types.is_numeric_dtype(audit.feature_frame[c])]


def lcb_section(audit: AuditData, features: tuple[str, ...], class_index: int | None,
                computation: str = "auto", seed: int = 0, select=None,
                estimate_with=None) -> LcbSection:
    """The Local bias page's defaults: cross-validated bandwidths and the LCB of the query
    rows (exact, or sampled on large data: :func:`lcb_estimate`). ``select`` and
    ``estimate_with`` replace :func:`lcb_bandwidths` and :func:`lcb_estimate` (the app's
    caches of them)."""
    reference, query, how = reference_and_query(audit)
    sigma_p, sigma_x, cv_table = (select or lcb_bandwidths)(reference, features, class_index)
    estimate = (estimate_with or lcb_estimate)(reference, query, features, class_index, sigma_p,
                                               sigma_x, computation, seed)
    spec = KernelSpec(sigma_p, sigma_x, class_index=tested_class(audit, class_index))
    return LcbSection(estimate.values, spec, cv_table, how, estimate.rows,
                      estimate.describe(), estimate.plan.exact_seconds)


def slice_names(audit: AuditData, features: tuple[str, ...]) -> tuple[str, ...]:
    """The columns slices are made of by default: the audit features ``features`` and every
    group attribute that is not among them."""
    return tuple(features) + tuple(g for g in audit.groups.columns if g not in features)


def slice_frame(audit: AuditData, names: tuple[str, ...]) -> pd.DataFrame:
    """The named audit features and group attributes, as given (categoricals as text)."""
    columns = []
    for name in names:
        if name in audit.feature_frame.columns:
            columns.append(audit.feature_frame[name])
        elif name in audit.groups.columns:
            columns.append(audit.groups[name])
        else:
            known = [*audit.feature_frame.columns, *audit.groups.columns]
            raise ValueError(f"{name!r} is neither an audit feature nor a group attribute; "
                             f"choose from {', '.join(map(repr, known)) or 'none'}.")
    return pd.concat(columns, axis=1) if columns else pd.DataFrame(index=range(audit.n))


def slice_section(data: AuditData, names: tuple[str, ...], settings: AuditSettings,
                  progress: Progress | None = None) -> SliceDiscovery:
    """The Findings page at ``settings``: every slice of the named audit features and group
    attributes of the audited rows tested for a calibration gap
    (:func:`core.local.slice_discovery.discover_slices`)."""
    return discover_slices(
        data.probs, data.y, slice_frame(data, names), alpha=settings.alpha,
        error_rate=settings.error_rate, n_ranges=settings.slice_ranges,
        depth=settings.slice_depth, n_resamples=settings.slice_resamples,
        notion=settings.slice_notion if not data.is_binary else None,
        class_names=data.classes, seed=settings.seed, progress=progress)


def slice_class(discovery: SliceDiscovery, class_name: str) -> int | None:
    """The class a row of the slice table tests one vs rest (``None``: the positive class of
    a binary model, or the top label)."""
    if discovery.notion != "classwise" or len(discovery.classes) == 1:
        return None
    return discovery.classes.index(class_name)


def slice_reliability(data: AuditData, inside: np.ndarray, notion: str,
                      class_index: int | None, n_bins: int = 10
                      ) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Equal-mass reliability tables of a slice's rows and of the other rows (``None`` when
    the slice holds every row), on the notion its test used (``classwise`` with
    ``class_index``, ``positive`` or ``top-label``), with at most ``n_bins`` bins of at least
    30 rows."""
    notion = "classwise" if class_index is not None else notion
    tables: list[pd.DataFrame | None] = []
    for rows in (inside, ~inside):
        if not rows.any():
            tables.append(None)
            continue
        bins = max(1, min(n_bins, int(rows.sum()) // 30))
        tables.append(metrics.reliability_table(data.probs[rows], data.y[rows], n_bins=bins,
                                                strategy="quantile", notion=notion,
                                                class_index=class_index))
    return tables[0], tables[1]


def slice_lcb_points(query: AuditData, values: np.ndarray, rows: np.ndarray | None,
                     piece: Slice, names: tuple[str, ...], class_index: int | None
                     ) -> tuple[pd.DataFrame, str]:
    """The LCB of the evaluated query rows (``rows``: a sample, ``None``: all) with whether
    each lies in the slice ``piece``, beside the numeric column the slice is cut on (else the
    first numeric one, else the prediction)."""
    rows = np.arange(query.n) if rows is None else rows
    frame = with_prediction(slice_frame(query, names), query.probs).iloc[rows].reset_index(
        drop=True)
    numeric = [c.feature for c in piece.conditions if c.low is not None and c.low != c.high]
    numeric += [n for n in names if pd.api.types.is_numeric_dtype(frame[n])]
    if numeric:
        x_name = numeric[0]
        x = pd.to_numeric(frame[x_name], errors="coerce").to_numpy(dtype=float)
    else:
        x_name = "predicted probability"
        x = one_vs_rest(query.probs[rows], query.y[rows], tested_class(query, class_index))[0]
    return pd.DataFrame({x_name: x, "lcb": values, "inside": piece.mask(frame)}), x_name


def feature_map(data: AuditData, features: tuple[str, ...], method: str, seed: int = 0,
                progress: Progress | None = None) -> tuple[np.ndarray, Embedding | None]:
    """Coordinates for the LCE, as the LCE landscape page computes them: a 2-D embedding of the
    standardised audit features (:func:`core.local.embedding.landscape_coordinates`), or, for a
    single encoded feature column, that column z-scored (a 1-D profile, no embedding)."""
    encoded = data.feature_matrix(features)
    if encoded.shape[1] == 1:
        return profile_coordinates(encoded[:, 0]), None
    X = prepare_features(encoded, data.encoded_names(features))
    embedding = embed(X, method=method, n_components=2, seed=seed, progress=progress)
    return landscape_coordinates(embedding.coords), embedding


def lce_rows(n: int, seed: int = 0) -> np.ndarray | None:
    """The rows of the MLCE curve: all (``None``) up to :data:`LCE_ROWS`, else a seeded
    sample of that many (:func:`core.kernels.resampling.row_sample`)."""
    return None if n <= LCE_ROWS else row_sample(n, LCE_ROWS, seed)


def lce_section(data: AuditData, features: tuple[str, ...], method: str, gamma: float,
                seed: int = 0, progress: Progress | None = None,
                computation: str = "auto", map_with=None, curve_with=None
                ) -> LceSection | None:
    """MLCE over γ (Luo et al. Fig. 1) on a map of the audit features; ``None`` when no
    audit feature is chosen. ``computation`` is the LCE method
    (:func:`core.local.lce_plan.plan_method`:
    ``"auto"`` keeps exact sums on small data and takes the binned grid or the exact sweep on
    large data). The map is fitted to every row; beyond :data:`LCE_ROWS` rows the curve is
    computed on a seeded sample of them (:func:`lce_rows`, the LCE landscape page's too), and
    the section says so. ``map_with`` and ``curve_with`` replace :func:`feature_map` and
    :func:`core.local.lce_estimate.mlce_curve` (the app's caches of them)."""
    if not features:
        return None

    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(fraction, message)

    coords, embedding = (map_with or feature_map)(data, features, method, seed,
                                                  lambda f, m: report(0.2 * f, m))
    conf, correct = metrics.confidence_outcome(data.probs, data.y, "top-label")
    rows = lce_rows(data.n, seed)
    if rows is not None:
        conf, correct, coords = conf[rows], correct[rows], coords[rows]
    gammas = sorted({*CURVE_GAMMAS, float(gamma)})
    curve = (curve_with or mlce_curve)(conf, correct, coords, gammas, n_bins=LCE_BINS,
                                       method=computation,
                                       progress=lambda f, m: report(0.2 + 0.8 * f, m))
    at = float(curve.loc[np.isclose(curve["gamma"], gamma), "mlce"].iloc[0])
    mce = metrics.mce(data.probs, data.y, LCE_BINS, "uniform", notion="top-label")
    described = "the standardised feature" if embedding is None else \
        f"a 2-D {method.upper() if method == 'pca' else method} map of the standardised features"
    sampled = "" if rows is None else \
        f" The curve is computed on a seeded sample of {rows.size:,} of the {data.n:,} rows."
    return LceSection(curve, at, mce, described, curve_computation(curve) + sampled)


def curve_computation(curve: pd.DataFrame) -> str:
    """One sentence: which LCE computation ran at which γ of an MLCE curve, with the largest
    worst-case error of the binned points."""
    names = {"pairs": "exact pair sums", "sweep": "the exact sweep",
             "binned": "the binned grid"}
    parts = []
    for name, rows in curve.groupby("method", sort=False):
        low, high = rows["gamma"].min(), rows["gamma"].max()
        where = f"γ = {low:.3g}" if low == high else f"γ from {low:.3g} to {high:.3g}"
        bound = f" (|error| ≤ {rows['error_bound'].max():.2g})" if name == "binned" else ""
        parts.append(f"{names.get(name, name)}{bound} at {where}")
    return "Computed by " + "; ".join(parts) + "."


# --------------------------------------------------------------------------- the audit


def run_audit(audit: AuditData, settings: AuditSettings | None = None,
              progress: Progress | None = None,
              sections: Sections | None = None,
              core_free: Callable[[], None] | None = None) -> AuditResult:
    """Compute every page's numbers for ``audit`` at ``settings`` (default: the pages').

    Parameters
    ----------
    audit : AuditData
        The validated data.
    settings : AuditSettings, optional
        What to compute; the defaults are the pages' defaults.
    progress : callable, optional
        ``progress(fraction, message)``, called as the sections finish.
    sections : Sections, optional
        Where each piece comes from (default: computed; the app passes its caches).
    core_free : callable, optional
        Called once, from a lane's thread, when the lanes run side by side and the first of
        them has finished while the other still runs, so a core is free (the command line
        starts its figure browser then).

    Returns
    -------
    AuditResult
        The sections with the settings and the rows they used.
    """
    settings = settings or AuditSettings()
    concurrent = sections is None and engine.current().name == "threads"
    sections = sections or Sections()
    data, part = audit_part(audit, settings.part)
    features = feature_columns(audit, settings.features)
    # each lane's fraction done, and the latest message (a counter orders them)
    latest = {"reliability": (0.0, 0, "Reliability: metrics, bootstrap intervals and tests…"),
              "local": (0.0, 0, "Trust test: KLCE² over the bandwidth grid…")}
    weights = {"reliability": 0.4, "local": 0.6}
    counter = [0]

    def lane(name: str, start: float, width: float):
        def report(fraction: float, message: str) -> None:
            counter[0] += 1
            latest[name] = (start + width * fraction, counter[0], message)
            if not concurrent:
                tick()
        return report

    def reliability_lane() -> ReliabilitySection:
        done = lane("reliability", 0.0, 1.0)
        done(0.0, "Reliability: metrics, bootstrap intervals and tests…")
        section = reliability_section(data, settings, sections)
        done(1.0, "Reliability: done")
        return section

    def local_lane() -> tuple:
        grid = sections.klce_grid(data, features, settings,
                                  lambda f, m: lane("local", 0.0, 0.4)(f, f"Trust test: {m}"))
        lane("local", 0.4, 0.0)(0.0, "Local bias: cross-validated bandwidths and LCB…")
        bias = sections.lcb(audit, features, settings)
        slices = sections.slices(data, slice_names(audit, features), settings,
                                 lambda f, m: lane("local", 0.5, 0.15)(f, f"Findings: {m}"))
        lane("local", 0.65, 0.0)(0.0, "LCE landscape: map of the audit features and MLCE "
                                      "over γ…")
        lce = sections.lce(data, features, settings, lane("local", 0.65, 0.35))
        return grid, bias, slices, lce

    def tick() -> None:
        if progress is not None:
            message = max(latest.values(), key=lambda item: item[1])[2]
            progress(sum(weights[k] * latest[k][0] for k in latest), message)

    # On this machine's threads the Reliability page's numbers and the local pages' run side
    # by side, sharing the cores (:class:`~core.kernels.engine.CoreShare`: one thread each
    # while both run, which measured 1.4 s faster at 10⁶ rows than each lane's pools taking
    # both cores); an app's cached sections and a cluster or GPU engine run one after the
    # other.
    if concurrent:
        tick()  # the start (0), before either lane reports
        share, first_done = CoreShare(2), threading.Lock()

        def run_lane(name: str):
            with sharing(share):
                result = reliability_lane() if name == "reliability" else local_lane()
            if core_free is not None and first_done.acquire(blocking=False):
                core_free()  # the first lane to finish: the other still runs
            return result

        reliability, (grid, bias, slices, lce) = in_threads(
            run_lane, ["reliability", "local"], n_jobs=min(2, machine_workers()), tick=tick)
    else:
        reliability = reliability_lane()
        grid, bias, slices, lce = local_lane()
    notes = () if features else ("No audit features are mapped: the KLCE test uses the "
                                 "prediction kernel only and there is no LCE landscape.",)
    if progress is not None:
        progress(1.0, "Audit complete")
    return AuditResult(settings, audit.name, audit.fingerprint, data.n, part, features,
                       reliability, grid, bias, lce, slices, notes)


def settings_for(audit: AuditData, overrides: dict) -> AuditSettings:
    """:class:`AuditSettings` with ``overrides`` (field → value) that fit ``audit``: audit
    features it does not map and a class index beyond its classes are dropped (they come
    from widgets of an earlier dataset), as is a notion it has no use for. Without an
    ``n_bootstrap`` the Reliability page's default for this size applies
    (:func:`default_bootstrap`)."""
    fields = dict(overrides)
    fields.setdefault("n_bootstrap", default_bootstrap(audit.n))  # the Reliability page's
    if fields.get("features") is not None:
        mapped = set(audit.feature_frame.columns)
        fields["features"] = tuple(f for f in fields["features"] if f in mapped)
    if fields.get("class_index") is not None and not 0 <= fields["class_index"] < \
            audit.n_classes:
        del fields["class_index"]
    notions = ("positive", "top-label") if audit.is_binary else ("top-label", "classwise")
    if fields.get("notion") is not None and fields["notion"] not in notions:
        del fields["notion"]
    return AuditSettings(**fields)
