"""Cached wrappers for the Recalibration page.

The comparison and its slow views report progress into a bar, so they are memoised per
process (:class:`dashboard.cache.memo.ProcessMemo`) on the dataset fingerprint and the frozen
:class:`~core.recalibration.CompareSettings`; the quick reliability tables are cached
with ``st.cache_data`` on the same key (the comparison itself passed unhashed).
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from core.data import AuditData
from core.recalibration import (
    CompareSettings,
    Comparison,
    lcb_before_after,
    mlce_curves,
    reliability_tables,
)
from dashboard.cache.memo import ProcessMemo

_COMPARISONS = ProcessMemo(limit=8)


def comparison(audit: AuditData, settings: CompareSettings,
               progress: Callable[[float, str], None] | None = None) -> Comparison:
    return _COMPARISONS.get((audit.fingerprint, settings),
                            lambda: settings.run(audit, progress))


@st.cache_data(show_spinner="Drawing the reliability diagrams…", max_entries=16)
def reliability(fingerprint: str, settings: CompareSettings, _result: Comparison
                ) -> dict[str, pd.DataFrame]:
    return reliability_tables(_result)


_VIEWS = ProcessMemo(limit=32)


def curves(fingerprint: str, settings: CompareSettings, gammas: tuple[float, ...],
           result: Comparison, progress: Callable[[float, str], None] | None = None
           ) -> dict[str, pd.DataFrame]:
    return _VIEWS.get(("curves", fingerprint, settings, gammas),
                      lambda: mlce_curves(result, gammas, progress))


def lcb_trend(fingerprint: str, settings: CompareSettings, method: str, feature: str,
              result: Comparison, progress: Callable[[float, str], None] | None = None
              ) -> pd.DataFrame:
    return _VIEWS.get(("lcb", fingerprint, settings, method, feature),
                      lambda: lcb_before_after(result, method, feature, progress=progress))
