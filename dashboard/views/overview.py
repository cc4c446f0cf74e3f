"""Overview page: one answer per question an auditor signs, each from its one primary test."""

from __future__ import annotations

import streamlit as st

from core.audit import audit_verdicts
from dashboard.state import active_audit, model_comparison, recalibration_comparison
from dashboard.whole_audit import whole_audit

BADGES = {"pass": ("green", ":material/check_circle:", "Pass"),
          "fail": ("red", ":material/cancel:", "Fail"),
          "inconclusive": ("orange", ":material/help:", "Inconclusive"),
          "not run": ("gray", ":material/radio_button_unchecked:", "Not run")}
PAGES = {"Reliability": "views/reliability.py", "Trust test": "views/trust.py",
         "Findings": "views/findings.py", "Recalibration": "views/recalibration.py",
         "Compare models": "views/compare.py"}

st.title("Overview")
st.caption("The questions an audit answers, one verdict each. Every verdict rests on one "
           "test declared in advance, at the level α the pages chose; the other tests of the "
           "same question are shown only where they disagree. \"Pass\" means no evidence of "
           "a problem, not a proof that there is none.")
audit = active_audit()
result, _ = whole_audit(audit, key="overview_run")
verdicts = audit_verdicts(result, recalibration_comparison(),
                          model_comparison(audit.fingerprint))
failed = sum(v.status == "fail" for v in verdicts)
ran = sum(v.status != "not run" for v in verdicts)
st.subheader(f"{ran} questions answered, {failed} failed" if ran else "No question answered")
for verdict in verdicts:
    color, icon, label = BADGES[verdict.status]
    with st.container(border=True):
        left, right = st.columns([1, 5])
        left.badge(label, icon=icon, color=color)
        right.markdown(f"**{verdict.question}** {verdict.answer}")
        right.caption(" · ".join(p for p in (verdict.number, verdict.error_rate) if p != "—"))
        if verdict.evidence:
            with right.expander("What qualifies this answer"):
                for line in verdict.evidence:
                    st.markdown(f"- {line}")
        right.page_link(PAGES[verdict.page], label=f"Detail: {verdict.page}",
                        icon=":material/arrow_forward:")
st.caption(f"Audited: {result.rows:,} rows ({result.part}) of {result.dataset}.")
