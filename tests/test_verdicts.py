"""One answer per question: the verdicts follow their primary tests, the report and results.json
open with them, and the Overview page shows them (issue 31)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from core.audit import AuditSettings, audit_verdicts, run_audit
from core.data import load_demo
from core.report.schema import report_document
from tests.conftest import open_demo_page

SMALL = AuditSettings(n_bootstrap=20, test_resamples=100, grid_resamples=100,
                      slice_resamples=200)


@pytest.fixture(scope="module")
def census():
    data = load_demo("census")
    return data, run_audit(data, SMALL)


def test_each_verdict_is_its_primary_test(census) -> None:
    _, result = census
    overall, local, findings, repair, promote = audit_verdicts(result)
    alpha = result.settings.alpha
    consistency = result.reliability.tests["consistency"]
    assert overall.status == ("fail" if consistency.p_value <= alpha else "pass")
    assert local.status == ("fail" if result.klce_grid.aggregated.p_value <= alpha else "pass")
    flagged = len(result.slices.findings)
    assert findings.status == ("fail" if flagged else
                               "inconclusive" if "fail" in (overall.status, local.status)
                               else "pass")
    assert (repair.status, promote.status) == ("not run", "not run")
    # a disagreeing secondary test is named, an agreeing one is not
    for key, test in result.reliability.tests.items():
        if key in ("hosmer-lemeshow", "cox") and (test.p_value <= alpha) != (
                consistency.p_value <= alpha):
            assert any(key.split("-")[0].capitalize()[:3] in line for line in overall.evidence)


def test_the_repair_verdict_follows_the_recommendation_rule(census) -> None:
    _, result = census
    table = pd.DataFrame({"method": ["uncalibrated", "isotonic", "temperature"],
                          "ece": [0.05, 0.01, 0.02], "klce_p": [0.001, 0.4, 0.3],
                          "brier_worse_p": [1.0, 0.6, 0.01]})
    repair = audit_verdicts(result, table)[3]
    assert repair.status == "pass" and "isotonic" in repair.number
    table["klce_p"] = 0.001
    assert audit_verdicts(result, table)[3].status == "fail"


def test_results_json_and_the_html_report_open_with_the_verdicts(census) -> None:
    from core.report.html import verdicts_section

    data, result = census
    document = report_document(result, data)
    assert [v["key"] for v in document["verdicts"]] == \
        ["overall", "local", "findings", "repair", "promote"]
    assert {v["status"] for v in document["verdicts"]} <= {"pass", "fail", "inconclusive",
                                                           "not run"}
    assert verdicts_section(result, None).startswith("<h2>Verdicts</h2>")


def test_the_overview_page_shows_the_five_verdicts() -> None:
    at = open_demo_page("overview", "census")
    at.button(key="overview_run").click().run()
    assert not at.exception, at.exception
    questions = " ".join(m.value for m in at.markdown)
    for question in ("calibrated overall", "calibrated locally", "Where is it",
                     "Which recalibration", "challenger"):
        assert question in questions


def test_the_compare_page_shows_the_trust_pages_klce_verdict_for_the_champion() -> None:
    """One number per question: the champion's local-calibration p-value on Compare models is
    the Trust page's aggregated test at its defaults (the same section, from the same store)."""
    trust = open_demo_page("trust", "census")
    verdict = " ".join(m.value for m in [*trust.error, *trust.success]
                       if "max over" in m.value)
    compare = open_demo_page("compare", "census")
    lines = next(m.value for m in compare.markdown if "aggregated KLCE p" in m.value)
    champion = re.search(r"champion \(A\).*?aggregated KLCE p = ([^)]+)\)", lines).group(1)
    assert verdict and (f"p {champion}" in verdict or f"p = {champion}" in verdict), \
        (champion, verdict)


def test_the_promote_verdict_states_the_brier_difference_not_the_decision_again(census) -> None:
    from core.compare import compare_models

    rng = np.random.default_rng(3)
    p = rng.uniform(0.05, 0.95, 4000)
    y = (rng.uniform(size=p.size) < p).astype(int)
    worse = np.clip(p + 0.15 * (p > 0.5), 0.01, 0.99)  # B overconfident on half the rows
    comparison = compare_models(y, {"A": p, "B": worse}, criteria=("brier",))
    verdict = audit_verdicts(census[1], None, comparison)[4]
    assert verdict.status == "fail" and verdict.answer.startswith("Do not promote")
    assert verdict.number.startswith("Brier score B − A = +") and "p " in verdict.number
    assert "promote" not in verdict.number.lower()
