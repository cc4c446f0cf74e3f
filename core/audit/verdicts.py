"""One answer per question an auditor signs: the verdicts of an audit.

Each question has one pre-declared primary test, so its answer does not depend on which of
several numbers a reader picks; the other tests of the same question are evidence that
qualifies the answer (named and explained when they disagree), never a second answer.

* *calibrated overall?* — the SKCE consistency test (Widmann et al. 2019);
* *calibrated locally?* — the aggregated KLCE test over the 5 × 5 bandwidth grid
  (I-trustworthy eq. 4; the largest standardised statistic over the grid, shared resamples);
* *where is it miscalibrated?* — the slice findings, with family-wise (max-|T| step-down) or
  false-discovery error control;
* *which repair?* — :data:`core.recalibration.RECOMMENDATION_RULE`;
* *promote the challenger?* — :data:`core.compare.DECISION_RULE`.

A verdict is ``"pass"`` (the primary test finds no evidence of a problem; not a proof of
calibration), ``"fail"`` (it does), ``"inconclusive"`` (the evidence points both ways, e.g. no
slice is flagged while the model fails globally) or ``"not run"`` (the question needs a page
that was not run: the Recalibration or Compare models page).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from core.audit.results import AuditResult
from core.compare.decision import DECISION_RULE, DO_NOT_PROMOTE, PROMOTE, decide
from core.recalibration.decision import RECOMMENDATION_RULE, recommend
from core.stattests.result import p_text

#: The statuses of a verdict, best first.
STATUSES = ("pass", "inconclusive", "fail", "not run")
#: Secondary tests of the overall question, by key of the Reliability section's tests.
SECONDARY = {"hosmer-lemeshow": "Hosmer–Lemeshow", "spiegelhalter": "Spiegelhalter's z",
             "cox": "Cox's slope and intercept", "cumulative-ks": "the cumulative KS test",
             "cumulative-kuiper": "the cumulative Kuiper test"}


@dataclass(frozen=True)
class Verdict:
    """The answer to one question of the audit.

    Attributes
    ----------
    key : str
        ``overall``, ``local``, ``findings``, ``repair`` or ``promote``.
    question : str
        The question, as an auditor asks it.
    status : str
        One of :data:`STATUSES`.
    answer : str
        The answer in one sentence.
    number : str
        The one number behind it: the primary test's p-value, the recommended method, or
        the paired Brier-score difference of a comparison.
    error_rate : str
        What the primary test's error rate is and where it is measured.
    evidence : tuple of str
        Secondary results that qualify the answer (disagreeing tests, named and explained).
    page : str
        The page that shows the detail.
    """

    key: str
    question: str
    status: str
    answer: str
    number: str
    error_rate: str
    evidence: tuple[str, ...] = ()
    page: str = ""

    def as_record(self) -> dict:
        """The verdict as a JSON object (``results.json``'s ``verdicts``)."""
        return {"key": self.key, "question": self.question, "status": self.status,
                "answer": self.answer, "number": self.number, "error_rate": self.error_rate,
                "evidence": list(self.evidence), "page": self.page}


def overall_verdict(result: AuditResult) -> Verdict:
    """Calibrated overall? The SKCE consistency test; the other global tests as evidence.

    Parameters
    ----------
    result : AuditResult
        The audit.

    Returns
    -------
    Verdict
        Its answer.
    """
    alpha, tests = result.settings.alpha, result.reliability.tests
    primary = tests["consistency"]
    rejects = primary.p_value <= alpha
    others = [f"{name} {'rejects' if tests[key].p_value <= alpha else 'does not reject'} "
              f"({p_text(tests[key].p_value, tests[key].n_resamples)})"
              for key, name in SECONDARY.items()
              if key in tests and (tests[key].p_value <= alpha) != rejects]
    evidence = (f"Disagreeing secondary test(s): {'; '.join(others)}. They test other "
                "aspects (bins, the mean, slope and intercept, the running sum) and are not "
                "corrected for being several; the verdict rests on the primary test.",) \
        if others else ()
    return Verdict(
        "overall", "Is the model calibrated overall?", "fail" if rejects else "pass",
        ("Miscalibrated overall: the predicted probabilities do not match the observed "
         "rates." if rejects else
         "No evidence of miscalibration overall (this is not a proof of calibration)."),
        f"SKCE consistency test {p_text(primary.p_value, primary.n_resamples)}",
        f"at most {alpha:g} false alarms on a calibrated model (α; its size is measured in "
        "the intervals and level studies)", evidence, "Reliability")


def local_verdict(result: AuditResult) -> Verdict:
    """Calibrated locally, over the audit features? The aggregated KLCE test.

    Parameters
    ----------
    result : AuditResult
        The audit.

    Returns
    -------
    Verdict
        Its answer.
    """
    alpha, test = result.settings.alpha, result.klce_grid.aggregated
    rejects = test.p_value <= alpha
    scope = ", ".join(result.features) if result.features else "the predictions alone"
    grid = result.klce_grid.p_values
    cells = int((grid <= alpha).sum())
    evidence = ()
    if not rejects and cells:
        evidence = (f"{cells} of the {grid.size} bandwidth pairs have p ≤ {alpha:g} on their "
                    "own; read one at a time they would overstate the evidence, which is why "
                    "the verdict is the grid's aggregated test.",)
    return Verdict(
        "local", "Is the model calibrated locally, for every kind of person?",
        "fail" if rejects else "pass",
        (f"Not locally calibrated over {scope}: somewhere the predictions are off even "
         "where the overall rates match." if rejects else
         f"No evidence of local miscalibration over {scope} at any bandwidth of the grid."),
        f"aggregated KLCE test {p_text(test.p_value, test.n_resamples)}",
        f"at most {alpha:g} false alarms on a locally calibrated model (α; the null's level "
        "is measured in the KLCE null study)", evidence, "Trust test")


def findings_verdict(result: AuditResult, others_fail: bool) -> Verdict:
    """Where is it miscalibrated? The slice findings.

    Parameters
    ----------
    result : AuditResult
        The audit.
    others_fail : bool
        Whether the overall or local verdict fails (then an empty list is inconclusive).

    Returns
    -------
    Verdict
        Its answer.
    """
    slices = result.slices
    rate = "family-wise error rate" if slices.error_rate == "fwer" else "false discovery rate"
    found = slices.findings
    if len(found):
        named = "; ".join(f"{row.slice} (gap {row.gap:+.3f})"  # most significant first
                          for row in found.head(3).itertuples())
        status, answer = "fail", f"Miscalibrated in {len(found)} slice(s): {named}."
    elif others_fail:
        status = "inconclusive"
        answer = (f"No slice of {slices.n_tested:,} tested is flagged, although the model "
                  "fails globally or locally: the problem is spread out, or lies along columns "
                  "that were not tested.")
    else:
        status, answer = "pass", f"No slice of the {slices.n_tested:,} tested is flagged."
    return Verdict(
        "findings", "Where is it miscalibrated, and for whom?", status, answer,
        f"{len(found)} finding(s) among {slices.n_tested:,} slices",
        f"{rate} at most {slices.alpha:g} over all the slices together (the slices study)",
        (), "Findings")


def repair_verdict(comparison: pd.DataFrame | None, alpha: float) -> Verdict:
    """Which recalibration repairs it? The recommendation rule over a comparison.

    Parameters
    ----------
    comparison : DataFrame or None
        The Recalibration page's table (``None``: not run).
    alpha : float
        Level of the rule's tests.

    Returns
    -------
    Verdict
        Its answer.
    """
    question = "Which recalibration repairs it?"
    if comparison is None or comparison.empty:
        return Verdict("repair", question, "not run", "Not run: open the Recalibration page "
                       "(or `calibration-atlas audit --recalibrate`).", "—", RECOMMENDATION_RULE,
                       (), "Recalibration")
    if "brier_worse_p" not in comparison:  # a table without the rule's paired Brier test
        return Verdict("repair", question, "inconclusive", "The comparison has no paired "
                       "Brier test, which the rule needs: rerun it on the Recalibration page.",
                       "—", RECOMMENDATION_RULE, (), "Recalibration")
    choice = recommend(comparison, alpha)
    return Verdict("repair", question, "pass" if choice.method else "fail", choice.reason,
                   f"recommended: {choice.method or 'none'}", RECOMMENDATION_RULE, (),
                   "Recalibration")


def promote_verdict(comparison) -> Verdict:
    """Promote the challenger? The paired comparison rule.

    Parameters
    ----------
    comparison : ComparisonResult or None
        A champion–challenger comparison (``None``: not run).

    Returns
    -------
    Verdict
        Its answer.
    """
    question = "Should the challenger replace the model in production?"
    if comparison is None:
        return Verdict("promote", question, "not run", "Not run: open Compare models with a "
                       "second prediction column (or `calibration-atlas compare`).", "—",
                       DECISION_RULE, (), "Compare models")
    decision = decide(comparison)
    status = {PROMOTE: "pass", DO_NOT_PROMOTE: "fail"}.get(decision.decision, "inconclusive")
    return Verdict("promote", question, status, decision.headline,
                   _brier_difference(comparison.table), DECISION_RULE,
                   tuple(decision.reasons), "Compare models")


def _brier_difference(table: pd.DataFrame) -> str:
    """The comparison's one number: the paired Brier-score difference and its p-value (the
    decision itself is the verdict's answer, not repeated here)."""
    rows = table[table["criterion"] == "brier"]
    if not len(rows):
        return "—"
    row = rows.iloc[0]
    return f"Brier score B − A = {row['difference']:+.3g} ({p_text(row['p_value'])})"


def audit_verdicts(result: AuditResult, recalibration: pd.DataFrame | None = None,
                   comparison=None) -> tuple[Verdict, ...]:
    """The five verdicts of an audit, in the order an auditor asks.

    Parameters
    ----------
    result : AuditResult
        The audit.
    recalibration : DataFrame, optional
        The recalibration comparison table (``None``: not run).
    comparison : ComparisonResult, optional
        A champion–challenger comparison (``None``: not run).

    Returns
    -------
    tuple of Verdict
        Overall, local, findings, repair, promote.
    """
    overall, local = overall_verdict(result), local_verdict(result)
    failing = "fail" in (overall.status, local.status)
    return (overall, local, findings_verdict(result, failing),
            repair_verdict(recalibration, result.settings.alpha), promote_verdict(comparison))
