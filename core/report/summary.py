"""The plain-language summary at the top of the report: what the audit found, in sentences.

Each :class:`Finding` reads one result at the audit's level α — global calibration (SKCE
consistency test and ECE with its interval), Hosmer–Lemeshow, the worst group, local
calibration (the aggregated KLCE test over the bandwidth grid), the miscalibrated slices
(:mod:`core.local.slice_discovery`, with the error rate it controls), MLCE against the global
MCE, and the recalibration comparison and the ensemble's credal-set test when they are given.
``level`` is ``"ok"`` (no evidence of a problem), ``"problem"`` (evidence of miscalibration)
or ``"info"``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.audit.results import AuditResult
from core.ensembles.summary import CredalComparison
from core.metrics.intervals import BELOW_NOISE, format_estimate, format_interval
from core.recalibration.decision import recommend
from core.stattests.result import p_text

#: How many slice findings the summary names.
TOP_FINDINGS = 3
#: Groups smaller than this are not named as the worst group (their MCE is mostly noise).
MIN_GROUP_ROWS = 100


@dataclass(frozen=True)
class Finding:
    """One sentence of the summary."""

    topic: str  # global, groups, local, slices, lce, recalibration, ensemble, notes
    level: str  # ok, problem, info
    text: str


def _p(p_value: float, n_resamples: int = 0) -> str:
    return p_text(p_value, n_resamples)


def global_findings(result: AuditResult) -> list[Finding]:
    """The SKCE consistency test with the ECE and its interval; Hosmer–Lemeshow."""
    section, alpha = result.reliability, result.settings.alpha
    test = section.tests["consistency"]
    metrics = section.metrics.set_index("metric")
    ece = ""
    if "ECE (L1)" in metrics.index:
        row = metrics.loc["ECE (L1)"]
        interval = ("" if np.isnan(row["ci_low"])
                    else f", 95% interval {format_interval(row['ci_low'], row['ci_high'], 3)}")
        estimate = row["estimate"] if "estimate" in row.index else row["value"]
        shown = format_estimate(estimate, digits=3)
        raw = (f" (bias-corrected; the plug-in value is {row['value']:.3f})"
               if shown == BELOW_NOISE or abs(estimate - row["value"]) >= 5e-4 else "")
        ece = (f" The binned ECE is {shown}{raw}{interval} ({section.notion} notion).")
    if test.p_value <= alpha:
        text = (f"Globally miscalibrated: the SKCE consistency test rejects calibration "
                f"({_p(test.p_value, test.n_resamples)}, B = {test.n_resamples}, "
                f"α = {alpha:g}).{ece}")
        found = [Finding("global", "problem", text)]
    else:
        text = (f"No evidence of global miscalibration: the SKCE consistency test does not "
                f"reject ({_p(test.p_value, test.n_resamples)}, B = {test.n_resamples}, "
                f"α = {alpha:g}).{ece}")
        found = [Finding("global", "ok", text)]
    hl = section.tests.get("hosmer-lemeshow")
    if hl is not None and np.isfinite(hl.p_value):
        verdict = "rejects" if hl.p_value <= alpha else "does not reject"
        found.append(Finding("global", "problem" if hl.p_value <= alpha else "ok",
                             f"Hosmer–Lemeshow {verdict} calibration ({_p(hl.p_value)}, "
                             f"statistic {hl.statistic:.2f})."))
    return found


def group_findings(result: AuditResult) -> list[Finding]:
    """The group with the largest MCE among groups of at least :data:`MIN_GROUP_ROWS` rows."""
    worst = None
    for attribute, (summary, _) in result.reliability.groups.items():
        measured = summary.dropna(subset=["mce"])
        measured = measured[measured["rows"] >= MIN_GROUP_ROWS]
        if len(measured):
            row = measured.loc[measured["mce"].idxmax()]
            if worst is None or row["mce"] > worst[1]["mce"]:
                worst = (attribute, row)
    if worst is None:
        return []
    attribute, row = worst
    return [Finding("groups", "info",
                    f"Largest group-wise MCE: {row['mce']:.3f} for {attribute} = "
                    f"{row['group']} ({int(row['rows']):,} rows; groups of at least "
                    f"{MIN_GROUP_ROWS} rows).")]


def local_findings(result: AuditResult) -> list[Finding]:
    """The aggregated KLCE test over the bandwidth grid."""
    grid, alpha = result.klce_grid, result.settings.alpha
    scope = ", ".join(result.features) if result.features else "the predictions alone"
    pairs = grid.p_values.size
    p = grid.aggregated.p_value
    if p <= alpha:
        return [Finding("local", "problem",
                        f"Not locally calibrated over {scope}: the aggregated KLCE test over "
                        f"{pairs} bandwidth pairs rejects ({_p(p, grid.n_resamples)}, "
                        f"null {grid.null}, "
                        f"B = {grid.n_resamples}).")]
    return [Finding("local", "ok",
                    f"No evidence of local miscalibration over {scope} at any of {pairs} "
                    f"bandwidth pairs: the aggregated KLCE test does not reject "
                    f"({_p(p, grid.n_resamples)}, "
                    f"null {grid.null}, B = {grid.n_resamples}).")]


def describe_slice(row: pd.Series, classes: int) -> str:
    """``race = Black ∧ age 58–88 (class 'urban')`` from a row of the slice table."""
    return row["slice"] + (f" (class '{row['class']}')" if classes > 1 else "")


def slice_findings(result: AuditResult) -> list[Finding]:
    """The flagged slices not explained by a flagged parent, with their intervals, and the
    error rate that the flags control (:meth:`SliceDiscovery.statement`)."""
    slices = result.slices
    if slices.n_tested == 0:
        return [Finding("slices", "info", slices.statement())]
    found = slices.findings
    if found.empty:
        return [Finding("slices", "info", f"No miscalibrated slice found. {slices.coverage()} "
                                          f"{slices.statement()} "
                        "A slice that is not flagged is not shown to be calibrated.")]
    interval = "simultaneous" if slices.error_rate == "fwer" else "selection-adjusted"
    floor_b = slices.n_resamples if slices.error_rate == "fwer" else 0
    parts = []
    for _, row in found.head(TOP_FINDINGS).iterrows():
        direction = "underestimates" if row["gap"] > 0 else "overestimates"
        parts.append(f"{describe_slice(row, len(slices.classes))} ({int(row['rows']):,} rows): "
                     f"the model {direction} the rate by {abs(row['gap']):.3f} ({interval} "
                     f"{1 - slices.alpha:.0%} interval {row['ci_low']:+.3f} to "
                     f"{row['ci_high']:+.3f}, adjusted "
                     f"{p_text(row['p_adjusted'], floor_b)})")
    more = len(found) - len(parts)
    listed = int(slices.table["significant"].sum()) - len(found)
    extra = (f" {more:,} more finding{'s' if more != 1 else ''} in the table." if more else "") \
        + (f" {listed:,} flagged slice{'s' if listed != 1 else ''} listed under a finding "
           "whose gap they share." if listed else "")
    return [Finding("slices", "problem", f"Miscalibrated slices: {'; '.join(parts)}.{extra} "
                                         f"{slices.statement()}")]


def lce_findings(result: AuditResult) -> list[Finding]:
    """MLCE at γ against the binned global MCE."""
    lce = result.lce
    if lce is None:
        return []
    ratio = lce.mlce / lce.mce if lce.mce > 0 else np.inf
    spread = (f"{ratio:.1f} times the global MCE ({lce.mce:.3f})" if np.isfinite(ratio)
              else f"against a global MCE of {lce.mce:.3f}")
    return [Finding("lce", "info",
                    f"Largest local calibration error (MLCE, top-label, γ = "
                    f"{result.settings.gamma:g}) is {lce.mlce:.3f}, {spread}.")]


def recalibration_findings(comparison: pd.DataFrame | None, alpha: float) -> list[Finding]:
    """The recommended method (:func:`core.recalibration.recommend`) when the table carries
    the Brier check, else the method with the lowest ECE and whether it passes the KLCE
    test."""
    if comparison is None or comparison.empty:
        return []
    if "brier_worse_p" in comparison:
        choice = recommend(comparison, alpha)
        return [Finding("recalibration", "info" if choice.method else "problem",
                        f"Recalibration: {choice.reason} Rule: {choice.rule}")]
    ranked = comparison.dropna(subset=["ece"]).sort_values("ece")
    if ranked.empty:
        return []
    best = ranked.iloc[0]
    local = ("and the KLCE test no longer rejects local calibration"
             if best["klce_p"] > alpha else "but the KLCE test still rejects local calibration")
    return [Finding("recalibration", "info",
                    f"Of {len(comparison)} recalibration methods compared, {best['method']} "
                    f"has the lowest ECE ({best['ece']:.3f}; Brier {best['brier']:.3f}), "
                    f"{local} (p = {best['klce_p']:.4f}).")]


def credal_findings(credal: CredalComparison | None) -> list[Finding]:
    """The credal-set test with learned weights, when it was run."""
    if credal is None:
        return []
    rejects = credal.results["learned"].rejects(credal.settings.alpha)
    return [Finding("ensemble", "problem" if rejects else "ok", credal.verdict())]


def findings(result: AuditResult, comparison: pd.DataFrame | None = None,
             credal: CredalComparison | None = None) -> tuple[Finding, ...]:
    """Every finding, in reading order.

    Parameters
    ----------
    result : AuditResult
        From :func:`core.audit.run_audit`.
    comparison : pandas.DataFrame, optional
        The recalibration comparison table (columns of
        :data:`core.report.schema.COMPARISON_COLUMNS`).
    credal : CredalComparison, optional
        The credal-set tests of the ensemble members.

    Returns
    -------
    tuple of Finding
    """
    notes = [Finding("notes", "info", note) for note in result.notes]
    return tuple([*global_findings(result), *group_findings(result), *local_findings(result),
                  *slice_findings(result), *lce_findings(result),
                  *recalibration_findings(comparison, result.settings.alpha),
                  *credal_findings(credal), *notes])
