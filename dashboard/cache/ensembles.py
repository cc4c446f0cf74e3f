"""Cached wrappers around :mod:`core.ensembles` for the Ensembles page.

The comparison reports progress into a bar drawn outside it, so it is memoised per server
process (:class:`dashboard.cache.memo.ProcessMemo`) rather than with ``st.cache_data``, keyed on the
data's fingerprint, the chosen members and features, and the frozen settings value.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from core import metrics
from core.data import AuditData
from core.ensembles import CredalComparison, CredalSettings, compare_ensemble
from dashboard.cache.memo import ProcessMemo

_COMPARISONS = ProcessMemo(limit=8)


def credal_comparison(fingerprint: str, members: tuple[int, ...], features: tuple[str, ...],
                      settings: CredalSettings, data: AuditData,
                      progress: Callable[[float, str], None] | None = None
                      ) -> CredalComparison:
    """The three credal-set tests (:func:`core.ensembles.summary.compare_ensemble`)."""
    return _COMPARISONS.get(
        (fingerprint, members, features, settings),
        lambda: compare_ensemble(data, members, features, settings, progress=progress),
    )


@st.cache_data(show_spinner=False, max_entries=32)
def reliability_tables(fingerprint: str, members: tuple[int, ...], features: tuple[str, ...],
                       settings: CredalSettings, _comparison: CredalComparison
                       ) -> dict[str, pd.DataFrame]:
    """Reliability tables of the ensemble mean and the learned combination on the test rows
    (P(y = 1) for binary data, top-label confidence otherwise)."""
    tables = {}
    for key, title in (("mean", "ensemble mean"), ("learned", "learned combination λ(x)")):
        result = _comparison.results[key]
        probs = result.combined[:, 1] if result.combined.shape[1] == 2 else result.combined
        tables[title] = metrics.reliability_table(probs, result.labels, n_bins=10)
    return tables
