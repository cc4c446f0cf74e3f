"""The app's store of the audit's sections, and the few page pieces that are not sections.

Every section a page shows is a ``core.audit`` function of the data and a frozen settings
object. :data:`STORE` keeps each result under :func:`core.audit.section_key` — the section,
the data's fingerprint and the settings it reads — in one per-process memo shared by all
sessions, so the Export page's report (:func:`audit_result`) asks the same store for the same
sections and finds what the pages computed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from core.audit import AuditResult, AuditSettings, SectionStore, run_audit, section_key
from core.data import AuditData
from core.local import LceMethod, LceResult, confidence_bins, lce_result, plan_method
from core.report import audit_figures as draw_audit_figures
from dashboard.cache.memo import ProcessMemo

Progress = Callable[[float, str], None]

#: Sections kept per process (the largest hold a value per row, or an embedding).
_SECTIONS = ProcessMemo(limit=96)


class PageStore(SectionStore):
    """The sections of every page and of the report, kept under their settings."""

    def section(self, section: Callable, data: AuditData, settings,
                progress: Progress | None = None):
        return _SECTIONS.get(section_key(section, data, settings),
                             lambda: super(PageStore, self).section(section, data, settings,
                                                                    progress))

    def has(self, section: Callable, data: AuditData, settings) -> bool:
        """Whether :meth:`section` would answer at once."""
        return section_key(section, data, settings) in _SECTIONS


STORE = PageStore()


def forget_sections() -> None:
    """Empty the store (every session's sections are computed afresh)."""
    _SECTIONS.clear()


def section(compute: Callable, data: AuditData, settings, progress: Progress | None = None,
            spinner: str | None = None):
    """``compute`` (a ``core.audit`` section) of ``data`` at ``settings`` from :data:`STORE`,
    under a spinner saying ``spinner`` while it is computed."""
    if spinner is None or STORE.has(compute, data, settings):
        return STORE.section(compute, data, settings, progress)
    with st.spinner(spinner):
        return STORE.section(compute, data, settings, progress)


# --------------------------------------------------------------------------- LCE at one γ


@st.cache_data(show_spinner="Computing the local calibration errors…", max_entries=64)
def lce_values(fingerprint: str, gamma: float, signed: bool, _coords: np.ndarray,
               _conf: np.ndarray, _correct: np.ndarray, computation: str = "auto"
               ) -> LceResult:
    """LCE at γ on the map keyed by ``fingerprint`` (the data's and the map's settings), with
    the computation that ran (:func:`core.local.lce_result`)."""
    return lce_result(_conf, _correct, _coords, gamma, signed=signed, method=computation)


@st.cache_data(show_spinner=False, max_entries=64)
def lce_plan(fingerprint: str, gamma: float, _coords: np.ndarray, _conf: np.ndarray,
             computation: str = "auto") -> LceMethod:
    """What :func:`lce_values` would run (to say so before running it)."""
    sizes = np.bincount(confidence_bins(_conf))
    return plan_method(_coords, gamma, computation, bin_sizes=sizes[sizes > 0])


# --------------------------------------------------------------------------- export

_AUDITS = ProcessMemo(limit=4)


def audit_result(settings: AuditSettings, data: AuditData,
                 progress: Progress | None = None) -> AuditResult:
    """:func:`core.audit.run_audit` of ``data`` at ``settings``, memoised per process, each
    section from :data:`STORE` (what the pages computed at the same settings)."""
    return _AUDITS.get((data.fingerprint, settings),
                       lambda: run_audit(data, settings, progress=progress, store=STORE))


def has_audit_result(settings: AuditSettings, data: AuditData) -> bool:
    """Whether :func:`audit_result` would answer at once."""
    return (data.fingerprint, settings) in _AUDITS


_FIGURES = ProcessMemo(limit=4)


def audit_figures(result: AuditResult, data: AuditData) -> tuple:
    """:func:`core.report.audit_figures`, memoised per process with the audit."""
    return _FIGURES.get((data.fingerprint, result.settings),
                        lambda: draw_audit_figures(result, data))
