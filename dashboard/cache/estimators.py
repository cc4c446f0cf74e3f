"""Cached calls into ``core.estimators`` for the Estimators page.

The selection reports progress into a bar drawn outside it, so it is memoised per process
(:class:`dashboard.cache.memo.ProcessMemo`) rather than with ``st.cache_data``, which cannot
replay such calls; the key is the data fingerprint and the frozen settings value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict

import pandas as pd
import streamlit as st

from core import estimators
from core.data import AuditData
from core.estimators import EstimatorSelection, SelectionSettings
from dashboard.cache.memo import ProcessMemo

_SELECTIONS = ProcessMemo(limit=16)


def selection(fingerprint: str, settings: SelectionSettings, data: AuditData,
              progress: Callable[[float, str], None] | None = None) -> EstimatorSelection:
    """:func:`core.estimators.select` on the rows of ``data``, memoised per process."""
    return _SELECTIONS.get(
        (fingerprint, settings),
        lambda: estimators.select(data.probs, data.y, progress=progress, **asdict(settings)),
    )


@st.cache_data(show_spinner=False, max_entries=32)
def estimates(fingerprint: str, settings: SelectionSettings, _selection: EstimatorSelection,
              _data: AuditData) -> pd.DataFrame:
    """The selected estimates beside the binned ECE² of the Reliability page."""
    return estimators.estimates_table(_selection, _data.probs, _data.y)
