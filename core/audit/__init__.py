"""One headless audit: everything the pages show, computed by the same sections.

A *section* is one function of the audited rows and a frozen settings object, returning a
frozen result (:mod:`core.audit.store`). The app's pages, the report and the command line ask
for the same sections with the same settings objects: a page builds its section's settings
from its widgets and asks its store; :func:`run_audit` asks for every section at one
:class:`AuditSettings` and returns an :class:`AuditResult` that carries its settings, so a
caption or the report can state exactly what was computed.

Modules:

* ``settings`` — :class:`AuditSettings` and each section's settings, :func:`compose` (the
  audit of the sections the pages showed), :func:`settings_for`.
* ``store`` — :class:`SectionStore`, :class:`OnceStore` (each section computed once),
  :func:`section`, :func:`section_key`.
* ``results`` — the sections' results and :class:`AuditResult`.
* ``rows`` — the audited part, the audit features, LCB's reference and query rows, the
  columns slices are cut from.
* ``reliability`` — binned table, metrics with intervals, tests, groups, the page's curves.
* ``trust`` — the KLCE² bandwidth grid and its aggregated test.
* ``local_bias`` — LCB with cross-validated bandwidths and its profile with trends.
* ``findings`` — the slices tested for a calibration gap; one slice up close.
* ``landscape`` — MLCE against γ on a map of the audit features.
* ``runner`` — :func:`run_audit`.
* ``verdicts`` — one answer per question, each from its one primary test
  (:func:`audit_verdicts`).
"""

from core.audit.findings import slice_class, slice_lcb_points, slice_reliability, slice_section
from core.audit.landscape import (
    CURVE_GAMMAS,
    LCE_BINS,
    LCE_ROWS,
    curve_computation,
    curve_over_gammas,
    feature_map,
    lce_rows,
    lce_section,
)
from core.audit.local_bias import (
    PREDICTION,
    LcbProfile,
    ProfileSettings,
    axis_options,
    lcb_bandwidths,
    lcb_profile,
    lcb_section,
    lcb_values,
)
from core.audit.reliability import (
    SKCE_ROW,
    binned_table,
    calibration_tests,
    cumulative_curve,
    extended_rows,
    group_tables,
    metrics_with_skce,
    reliability_section,
    resolved,
    skce_computation,
    skce_exact_seconds,
    smooth_curve,
    summary_metrics,
    test_results,
    tests_table,
)
from core.audit.results import AuditResult, LcbSection, LceSection, ReliabilitySection, StreamInfo
from core.audit.rows import (
    audit_part,
    feature_columns,
    numeric_features,
    reference_and_query,
    slice_names,
)
from core.audit.runner import run_audit
from core.audit.settings import (
    EXTENDED_RESAMPLES,
    PARTS,
    AuditSettings,
    FindingsSettings,
    LandscapeSettings,
    LocalBiasSettings,
    PageSettings,
    ReliabilitySettings,
    TrustSettings,
    compose,
    default_bootstrap,
    settings_for,
)
from core.audit.store import OnceStore, SectionStore, section, section_key
from core.audit.trust import trust_section
from core.audit.verdicts import STATUSES, Verdict, audit_verdicts

__all__ = [
    "CURVE_GAMMAS", "EXTENDED_RESAMPLES", "LCE_BINS", "LCE_ROWS", "PARTS", "PREDICTION",
    "SKCE_ROW", "STATUSES", "AuditResult", "AuditSettings", "FindingsSettings",
    "LandscapeSettings", "LcbProfile", "LcbSection", "LceSection", "LocalBiasSettings",
    "OnceStore", "PageSettings", "ProfileSettings", "ReliabilitySection", "ReliabilitySettings",
    "SectionStore", "StreamInfo", "TrustSettings", "Verdict", "audit_part", "audit_verdicts",
    "axis_options", "binned_table", "calibration_tests", "compose", "cumulative_curve",
    "curve_computation", "curve_over_gammas", "default_bootstrap", "extended_rows",
    "feature_columns", "feature_map", "group_tables", "lcb_bandwidths", "lcb_profile",
    "lcb_section", "lcb_values", "lce_rows", "lce_section",
    "metrics_with_skce", "numeric_features", "reference_and_query", "reliability_section",
    "resolved", "run_audit", "section", "section_key", "settings_for", "skce_computation",
    "skce_exact_seconds", "slice_class", "slice_lcb_points", "slice_names", "slice_reliability",
    "slice_section", "smooth_curve", "summary_metrics", "test_results", "tests_table",
    "trust_section",
]
