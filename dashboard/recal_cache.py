"""Cached wrappers for the Recalibration page.

The comparison reports progress into a bar, so it is memoised per process
(:class:`dashboard.cache.ProcessMemo`) on the dataset fingerprint and the frozen
:class:`~core.recalibration.compare.CompareSettings`; its views are cached with
``st.cache_data`` on the same key (the comparison itself is passed unhashed).
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from core.data import AuditData
from core.recalibration.compare import (
    CompareSettings,
    Comparison,
    lcb_before_after,
    mlce_curves,
    reliability_tables,
)
from dashboard.cache import ProcessMemo

_COMPARISONS = ProcessMemo(limit=8)


def comparison(audit: AuditData, settings: CompareSettings,
               progress: Callable[[float, str], None] | None = None) -> Comparison:
    return _COMPARISONS.get((audit.fingerprint, settings),
                            lambda: settings.run(audit, progress))


@st.cache_data(show_spinner="Drawing the reliability diagrams…", max_entries=16)
def reliability(fingerprint: str, settings: CompareSettings, _result: Comparison
                ) -> dict[str, pd.DataFrame]:
    return reliability_tables(_result)


@st.cache_data(show_spinner="Computing MLCE over γ…", max_entries=16)
def curves(fingerprint: str, settings: CompareSettings, gammas: tuple[float, ...],
           _result: Comparison) -> dict[str, pd.DataFrame]:
    return mlce_curves(_result, gammas)


@st.cache_data(show_spinner="Estimating the local bias before and after…", max_entries=32)
def lcb_trend(fingerprint: str, settings: CompareSettings, method: str, feature: str,
              _result: Comparison) -> pd.DataFrame:
    return lcb_before_after(_result, method, feature)
