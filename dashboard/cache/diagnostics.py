"""Cached wrappers around ``core`` for the pages.

Streamlit's cache hashes arguments; the audit container itself is passed as ``_data``
(underscore: not hashed) and identified by its ``fingerprint``, which changes with every row,
probability, feature and group value.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

from core import audit, local, metrics
from core.data.audit_data import AuditData
from core.kernels.spec import inputs_for
from core.local.embedding import (
    Embedding,
    embed,
    embedding_cache_key,
    landscape_coordinates,
    prepare_features,
)
from core.local.lcb_estimate import LcbEstimate
from core.local.lce_estimate import LceResult, lce_result
from core.local.lce_inputs import confidence_bins
from core.local.lce_plan import LceMethod, plan_method
from core.report import charts
from core.stattests.klce_grid import GridTestResult
from core.stattests.result import TestResult
from dashboard.cache import findings
from dashboard.cache.memo import ProcessMemo


@st.cache_data(show_spinner=False, max_entries=64)
def reliability_table(fingerprint: str, notion: str, class_index: int | None, n_bins: int,
                      strategy: str, interval: str, _data: AuditData) -> pd.DataFrame:
    return metrics.reliability_table(_data.probs, _data.y, n_bins=n_bins, strategy=strategy,
                                     notion=notion, interval=interval, class_index=class_index)


@st.cache_data(show_spinner="Bootstrapping the metrics…", max_entries=32)
def metrics_table(fingerprint: str, notion: str, n_bins: int, strategy: str, n_resamples: int,
                  method: str, computation: str, _data: AuditData) -> pd.DataFrame:
    return audit.metrics_with_skce(_data.probs, _data.y, notion, n_bins, strategy, n_resamples,
                                   method, computation=computation)


@st.cache_data(show_spinner="Bootstrapping the smooth and curve-based metrics…", max_entries=32)
def extended_metrics(fingerprint: str, notion: str, class_index: int | None, n_resamples: int,
                     method: str, _data: AuditData) -> pd.DataFrame:
    return audit.extended_metrics(_data.probs, _data.y, notion, class_index, n_resamples, method)


@st.cache_data(show_spinner="Smoothing the reliability curve…", max_entries=32)
def smooth_diagram(fingerprint: str, notion: str, class_index: int | None, _data: AuditData):
    return audit.smooth_diagram(_data.probs, _data.y, notion, class_index)


@st.cache_data(show_spinner=False, max_entries=32)
def cumulative_path(fingerprint: str, notion: str, class_index: int | None, _data: AuditData):
    return audit.cumulative_path(_data.probs, _data.y, notion, class_index)


@st.cache_data(show_spinner="Running the calibration tests…", max_entries=32)
def calibration_tests(fingerprint: str, notion: str, class_index: int | None,
                      n_resamples: int, computation: str, _data: AuditData
                      ) -> dict[str, TestResult]:
    return audit.calibration_tests(_data.probs, _data.y, notion, class_index, n_resamples,
                                   computation=computation)


@st.cache_data(show_spinner="Computing per-group diagnostics…", max_entries=32)
def group_diagnostics(fingerprint: str, group: str, notion: str, class_index: int | None,
                      n_bins: int, strategy: str, _data: AuditData
                      ) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    return audit.group_diagnostics(_data, group, notion, class_index, n_bins, strategy)


# --------------------------------------------------------------------------- local calibration


@st.cache_data(show_spinner=False, max_entries=32)
def median_bandwidths(fingerprint: str, features: tuple[str, ...], class_index: int | None,
                      _data: AuditData) -> tuple[float, float]:
    """The median-heuristic σ_p and σ_x the KLCE sliders are centred on."""
    probs, y, X, spec = audit.local_inputs(_data, features, class_index)
    inputs = inputs_for(probs, y, X, spec)
    return inputs.prob_bandwidth, inputs.feature_bandwidth


@st.cache_data(show_spinner="Running the KLCE test…", max_entries=64)
def klce_test(fingerprint: str, features: tuple[str, ...], class_index: int | None,
              prob_bandwidth: float, feature_bandwidth: float, null: str, n_resamples: int,
              _data: AuditData, computation: str = "auto") -> TestResult:
    probs, y, X, spec = audit.local_inputs(_data, features, class_index)
    return local.klce_test(probs, y, X, null=null, n_resamples=n_resamples,
                           spec=spec.with_bandwidths(prob_bandwidth, feature_bandwidth),
                           computation=computation, n_features=audit.TEST_FEATURES)


_GRIDS = ProcessMemo(limit=16)
_EMBEDDINGS = ProcessMemo(limit=8)


def klce_grid(fingerprint: str, features: tuple[str, ...], class_index: int | None, null: str,
              n_resamples: int, data: AuditData,
              progress: Callable[[float, str], None] | None = None,
              computation: str = "auto") -> GridTestResult:
    """The bandwidth-grid test, memoised per process (:class:`ProcessMemo`)."""
    return _GRIDS.get(
        (fingerprint, features, class_index, null, n_resamples, computation),
        lambda: audit.klce_grid(data, features, class_index, null, n_resamples,
                                progress=progress, computation=computation),
    )


reference_and_query = audit.reference_and_query


@st.cache_data(show_spinner="Cross-validating the LCB bandwidths…", max_entries=32)
def lcb_bandwidths(fingerprint: str, features: tuple[str, ...], class_index: int | None,
                   _reference: AuditData) -> tuple[float, float, pd.DataFrame]:
    return audit.lcb_bandwidths(_reference, features, class_index)


@st.cache_data(show_spinner="Estimating the local bias (LCB)…", max_entries=32)
def lcb_values(fingerprint: str, features: tuple[str, ...], class_index: int | None,
               prob_bandwidth: float, feature_bandwidth: float, _reference: AuditData,
               _query: AuditData, computation: str = "auto") -> LcbEstimate:
    """LCB of the query rows, exact or sampled (:func:`core.audit.lcb_estimate`)."""
    return audit.lcb_estimate(_reference, _query, features, class_index, prob_bandwidth,
                              feature_bandwidth, computation)


# --------------------------------------------------------------------------- LCE landscape


def embedding(fingerprint: str, features: tuple[str, ...], method: str, data: AuditData,
              progress: Callable[[float, str], None] | None = None) -> Embedding:
    """2-D embedding of the standardised audit features, memoised per process
    (:class:`ProcessMemo`)."""
    def compute() -> Embedding:
        X = prepare_features(data.feature_matrix(features), data.encoded_names(features))
        return embed(X, method=method, n_components=2, seed=0, progress=progress)

    return _EMBEDDINGS.get(embedding_cache_key(fingerprint, method, 2, 0, features=features),
                           compute)


@st.cache_data(show_spinner="Computing the local calibration errors…", max_entries=64)
def lce_values(fingerprint: str, features: tuple[str, ...], method: str, gamma: float,
               signed: bool, _coords: np.ndarray, _conf: np.ndarray,
               _correct: np.ndarray, computation: str = "auto") -> LceResult:
    """LCE at γ with the computation that ran (:func:`core.local.lce_estimate.lce_result`)."""
    return lce_result(_conf, _correct, _coords, gamma, signed=signed, method=computation)


@st.cache_data(show_spinner=False, max_entries=64)
def lce_plan(fingerprint: str, features: tuple[str, ...], method: str, gamma: float,
             _coords: np.ndarray, _conf: np.ndarray, computation: str = "auto") -> LceMethod:
    """What :func:`lce_values` would run (to say so before running it)."""
    sizes = np.bincount(confidence_bins(_conf))
    return plan_method(_coords, gamma, computation, bin_sizes=sizes[sizes > 0])


_CURVES = ProcessMemo(limit=32)


def mlce_curve(fingerprint: str, features: tuple[str, ...], method: str,
               gammas: tuple[float, ...], coords: np.ndarray, conf: np.ndarray,
               correct: np.ndarray, computation: str = "auto",
               progress: Callable[[float, str], None] | None = None) -> pd.DataFrame:
    """MLCE over γ, memoised per process (:class:`ProcessMemo`: it reports progress)."""
    return _CURVES.get(
        (fingerprint, features, method, gammas, computation),
        lambda: local.mlce_curve(conf, correct, coords, list(gammas), method=computation,
                                 progress=progress))


# --------------------------------------------------------------------------- export

_AUDITS = ProcessMemo(limit=4)


class PageSections(audit.Sections):
    """The audit's pieces (:class:`core.audit.Sections`) from the pages' own caches, called
    with the arguments the pages use: an Export at the settings of the pages reuses what
    they computed — the reliability table, metrics, tests, group tables, the KLCE grid, the
    LCB bandwidths and estimate, the slice findings, the embedding and the MLCE curve — and
    computes only the rest. A seed other than the pages' 0 computes afresh (the pages'
    caches hold seed 0)."""

    def reliability_table(self, data, notion, class_index, settings):
        return reliability_table(data.fingerprint, notion, class_index, settings.n_bins,
                                 settings.strategy, settings.interval, data)

    def metrics(self, data, notion, settings):
        if settings.seed:
            return super().metrics(data, notion, settings)
        return metrics_table(data.fingerprint, notion, settings.n_bins, settings.strategy,
                             settings.n_bootstrap, settings.bootstrap_method,
                             settings.computation, data)

    def extended(self, data, notion, class_index, settings):
        if settings.seed:
            return super().extended(data, notion, class_index, settings)
        return extended_metrics(data.fingerprint, notion, class_index, settings.n_bootstrap,
                                settings.bootstrap_method, data)

    def tests(self, data, notion, class_index, settings):
        if settings.seed:
            return super().tests(data, notion, class_index, settings)
        return calibration_tests(data.fingerprint, notion, class_index,
                                 settings.test_resamples, settings.computation, data)

    def groups(self, data, group, notion, class_index, settings):
        return group_diagnostics(data.fingerprint, group, notion, class_index,
                                 min(settings.n_bins, settings.group_bins), settings.strategy,
                                 data)

    def klce_grid(self, data, features, settings, progress=None):
        if settings.seed or settings.grid_features != audit.TEST_FEATURES:
            return super().klce_grid(data, features, settings, progress)
        return klce_grid(data.fingerprint, features, settings.class_index, settings.null,
                         settings.grid_resamples, data, progress, settings.computation)

    def lcb(self, data, features, settings):
        def select(reference, chosen, class_index):
            return lcb_bandwidths(reference.fingerprint, chosen, class_index, reference)

        def estimate(reference, query, chosen, class_index, sigma_p, sigma_x, computation,
                     seed):
            return lcb_values(reference.fingerprint + query.fingerprint, chosen, class_index,
                              sigma_p, sigma_x, reference, query, computation)

        return audit.lcb_section(data, features, settings.class_index, select=select,
                                 estimate_with=estimate)

    def slices(self, data, names, settings, progress=None):
        if settings.seed:
            return super().slices(data, names, settings, progress)
        # the Findings page's key: its settings hold only the slice fields
        page = audit.AuditSettings(alpha=settings.alpha, error_rate=settings.error_rate,
                                   slice_depth=settings.slice_depth,
                                   slice_ranges=settings.slice_ranges,
                                   slice_resamples=settings.slice_resamples,
                                   slice_notion=settings.slice_notion)
        return findings.discovery(data.fingerprint, names, page, data, progress)

    def lce(self, data, features, settings, progress=None):
        if settings.seed:
            return super().lce(data, features, settings, progress)

        def coordinates(data_, chosen, method, seed, report):
            if data_.feature_matrix(chosen).shape[1] == 1:
                return audit.feature_map(data_, chosen, method, seed, report)
            fitted = embedding(data_.fingerprint, chosen, method, data_, report)
            return landscape_coordinates(fitted.coords), fitted

        def curve(conf, correct, coords, gammas, n_bins, method, progress):
            shown = mlce_curve(data.fingerprint, features, settings.embedding,
                               audit.CURVE_GAMMAS, coords, conf, correct, method, progress)
            extra = tuple(g for g in gammas if g not in audit.CURVE_GAMMAS)
            if extra:  # the report's γ, when the page's curve does not hold it
                shown = pd.concat([shown, mlce_curve(data.fingerprint, features,
                                                     settings.embedding, extra, coords, conf,
                                                     correct, method)])
            return shown.sort_values("gamma", kind="stable").reset_index(drop=True)

        return audit.lce_section(data, features, settings.embedding, settings.gamma,
                                 progress=progress, map_with=coordinates, curve_with=curve)


def audit_result(settings: audit.AuditSettings, data: AuditData,
                 progress: Callable[[float, str], None] | None = None) -> audit.AuditResult:
    """:func:`core.audit.run_audit` of ``data`` at ``settings``, memoised per process
    (:class:`ProcessMemo`; the settings are a frozen, hashable value), each piece from the
    pages' caches (:class:`PageSections`)."""
    return _AUDITS.get((data.fingerprint, settings),
                       lambda: audit.run_audit(data, settings, progress=progress,
                                               sections=PageSections()))


def has_audit_result(settings: audit.AuditSettings, data: AuditData) -> bool:
    """Whether :func:`audit_result` would answer at once."""
    return (data.fingerprint, settings) in _AUDITS.store


_FIGURES = ProcessMemo(limit=4)


def audit_figures(result: audit.AuditResult, data: AuditData) -> tuple:
    """:func:`core.report.charts.audit_figures`, memoised per process with the audit."""
    return _FIGURES.get((data.fingerprint, result.settings),
                        lambda: charts.audit_figures(result, data))

