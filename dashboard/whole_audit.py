"""The whole audit of what the pages showed, for the pages that need all of it at once
(Overview, Export): computed once per table and settings, from the sections the pages already
computed, behind one button while it is not."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import streamlit as st

from core.audit import AuditResult
from core.data import AuditData
from dashboard.cache import diagnostics
from dashboard.state import pages_audit

#: Measured times of the default audit on this project's two-core machine, no page visited
#: first: ``(rows of the table, seconds)`` — the census demo (10,000 rows, its 5,000 test rows
#: audited), and 10⁶ rows of the scale table (benchmarks.streaming; random features and samples
#: keep the time far from linear in the rows).
MEASURED = ((10_000, 3.0), (1_000_000, 60.0))


def whole_audit(audit: AuditData, key: str) -> tuple[AuditResult, tuple[str, ...]]:
    """The audit at the pages' settings (:func:`dashboard.state.pages_audit`) with the sentences
    on settings two pages chose differently. While it is not computed, the page says what it
    will do and how long it may take, and stops until the button ``key`` is pressed."""
    settings, differences = pages_audit(audit)
    for difference in differences:
        st.info(difference, icon=":material/info:")
    with st.expander("Settings of this audit (taken from the pages, defaults elsewhere)"):
        st.dataframe(pd.DataFrame([{"setting": k, "value": str(v)} for k, v in
                                   dataclasses.asdict(settings).items()]),
                     hide_index=True, width="stretch")
    gate = st.empty()
    if not diagnostics.has_audit_result(settings, audit):
        with gate.container():
            st.info(f"The audit computes what every page shows, on the {audit.n:,} rows of "
                    f"{audit.name}, reusing what the pages already computed. "
                    f"{time_estimate(audit.n)}", icon=":material/timer:")
            if not st.button("Run the audit", type="primary", key=key):
                st.stop()
    bar = st.progress(0.0, text="Running the audit…")
    result = diagnostics.audit_result(settings, audit,
                                      progress=lambda f, m: bar.progress(f, text=m))
    bar.empty()
    gate.empty()
    return result, differences


def time_estimate(rows: int) -> str:
    """A sentence on how long the audit of ``rows`` rows may take: the two measured times
    (:data:`MEASURED`) joined by a power law in the rows, and the resamples at their
    defaults."""
    (n0, t0), (n1, t1) = MEASURED
    seconds = t0 * (max(rows, 1) / n0) ** (np.log(t1 / t0) / np.log(n1 / n0))
    seconds = max(seconds, 1.0)
    if seconds < 90:
        return (f"About {seconds:.0f} s on two CPU cores at the default resamples (measured: "
                f"{t0:.0f} s for a table of {n0:,} rows), less for what the pages computed.")
    return f"About {seconds / 60:.0f} minutes on two CPU cores at the default resamples."
