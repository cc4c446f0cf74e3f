"""Cached wrappers around ``core`` for the pages.

Streamlit's cache hashes arguments; the audit container itself is passed as ``_data``
(underscore: not hashed) and identified by its ``fingerprint``, which changes with every row,
probability, feature and group value.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

from core import local, metrics
from core.data import AuditData
from core.embedding import Embedding, embed, embedding_cache_key, prepare_features
from core.groups import group_calibration_table, group_reliability_tables
from core.klce import GridTestResult
from core.local_kernel import kernel_inputs
from core.skce import skce, skce_bootstrap
from core.stattests import TestResult, bound_test, hosmer_lemeshow, skce_test


@st.cache_data(show_spinner=False, max_entries=64)
def reliability_table(fingerprint: str, notion: str, class_index: int | None, n_bins: int,
                      strategy: str, interval: str, _data: AuditData) -> pd.DataFrame:
    return metrics.reliability_table(_data.probs, _data.y, n_bins=n_bins, strategy=strategy,
                                     notion=notion, interval=interval, class_index=class_index)


@st.cache_data(show_spinner="Bootstrapping the metrics…", max_entries=32)
def metrics_table(fingerprint: str, notion: str, n_bins: int, strategy: str, n_resamples: int,
                  method: str, _data: AuditData) -> pd.DataFrame:
    table = metrics.metrics_table(_data.probs, _data.y, notion=notion, n_bins=n_bins,
                                  strategy=strategy, n_resamples=n_resamples, method=method)
    low, high = skce_bootstrap(_data.probs, _data.y, n_resamples=min(n_resamples, 200),
                               method=method)
    skce_row = pd.DataFrame([{
        "metric": "SKCE (unbiased)", "value": skce(_data.probs, _data.y), "ci_low": low,
        "ci_high": high, "notion": "canonical",
        "description": "Squared kernel calibration error of the whole probability vector, "
                       "Gaussian kernel with median-heuristic bandwidth (Widmann et al. 2019); "
                       "0 when calibrated, can be slightly negative.",
    }])
    return pd.concat([table, skce_row], ignore_index=True)


@st.cache_data(show_spinner="Running the calibration tests…", max_entries=32)
def calibration_tests(fingerprint: str, notion: str, class_index: int | None,
                      n_resamples: int, _data: AuditData) -> dict[str, TestResult]:
    """The SKCE tests (canonical notion) and Hosmer–Lemeshow on the chosen notion."""
    conf, outcome = metrics.confidence_outcome(_data.probs, _data.y, notion, class_index)
    consistency = skce_test(_data.probs, _data.y, n_resamples=n_resamples)
    return {
        "consistency": consistency,
        "block": skce_test(_data.probs, _data.y, method="block"),
        # the bound test needs only the statistic the consistency test already computed
        "bound": bound_test(consistency.statistic, _data.n,
                            consistency.parameters["bandwidth"]),
        "hosmer-lemeshow": hosmer_lemeshow(conf, outcome),
    }


@st.cache_data(show_spinner="Computing per-group diagnostics…", max_entries=32)
def group_diagnostics(fingerprint: str, group: str, notion: str, class_index: int | None,
                      n_bins: int, strategy: str, _data: AuditData
                      ) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    labels = _data.groups[group].to_numpy()
    summary = group_calibration_table(_data.probs, _data.y, labels, notion, n_bins, strategy,
                                      class_index)
    tables = group_reliability_tables(_data.probs, _data.y, labels, notion, n_bins, strategy,
                                      class_index)
    return summary, tables


# --------------------------------------------------------------------------- local calibration


def _audit_inputs(data: AuditData, features: tuple[str, ...], class_index: int | None):
    X = data.feature_matrix(features) if features else None
    return data.probs, data.y, X, (class_index if not data.is_binary else None)


@st.cache_data(show_spinner=False, max_entries=32)
def median_bandwidths(fingerprint: str, features: tuple[str, ...], class_index: int | None,
                      _data: AuditData) -> tuple[float, float]:
    """The median-heuristic σ_p and σ_x the KLCE sliders are centred on."""
    probs, y, X, k = _audit_inputs(_data, features, class_index)
    inputs = kernel_inputs(probs, y, X, class_index=k)
    return inputs.prob_bandwidth, inputs.feature_bandwidth


@st.cache_data(show_spinner="Running the KLCE test…", max_entries=64)
def klce_test(fingerprint: str, features: tuple[str, ...], class_index: int | None,
              prob_bandwidth: float, feature_bandwidth: float, null: str, n_resamples: int,
              _data: AuditData) -> TestResult:
    probs, y, X, k = _audit_inputs(_data, features, class_index)
    return local.klce_test(probs, y, X, prob_bandwidth, feature_bandwidth, null=null,
                           n_resamples=n_resamples, class_index=k)


class ProcessMemo:
    """A small least-recently-used store shared by all sessions of the server process.

    For computations that report progress into a bar drawn outside them: Streamlit's
    ``st.cache_data`` records such calls and fails to replay them on a hit.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.store: OrderedDict = OrderedDict()

    def get(self, key, compute: Callable[[], object]):
        if key not in self.store:
            self.store[key] = compute()
            while len(self.store) > self.limit:
                self.store.popitem(last=False)
        self.store.move_to_end(key)
        return self.store[key]


_GRIDS = ProcessMemo(limit=16)
_EMBEDDINGS = ProcessMemo(limit=8)


def klce_grid(fingerprint: str, features: tuple[str, ...], class_index: int | None, null: str,
              n_resamples: int, data: AuditData,
              progress: Callable[[float, str], None] | None = None) -> GridTestResult:
    """The bandwidth-grid test, memoised per process (:class:`ProcessMemo`)."""
    probs, y, X, k = _audit_inputs(data, features, class_index)
    return _GRIDS.get(
        (fingerprint, features, class_index, null, n_resamples),
        lambda: local.klce_grid_test(probs, y, X, null=null, n_resamples=n_resamples,
                                     class_index=k, progress=progress),
    )


def reference_and_query(audit: AuditData) -> tuple[AuditData, AuditData, str]:
    """LCB's labelled reference rows and the rows it is evaluated at (paper §4: reference =
    calibration split, query = test split; without a split, all rows leave-one-out)."""
    if audit.split is not None and {"calibration", "test"} <= set(audit.split):
        return (audit.split_part("calibration"), audit.split_part("test"),
                "reference: calibration split, evaluated on the test split")
    return audit, audit, "all rows, each left out of its own estimate"


@st.cache_data(show_spinner="Cross-validating the LCB bandwidths…", max_entries=32)
def lcb_bandwidths(fingerprint: str, features: tuple[str, ...], class_index: int | None,
                   _reference: AuditData) -> tuple[float, float, pd.DataFrame]:
    probs, y, X, k = _audit_inputs(_reference, features, class_index)
    return local.select_bandwidths(probs, y, X, class_index=k)


@st.cache_data(show_spinner="Estimating the local bias…", max_entries=32)
def lcb_values(fingerprint: str, features: tuple[str, ...], class_index: int | None,
               prob_bandwidth: float, feature_bandwidth: float, _reference: AuditData,
               _query: AuditData) -> np.ndarray:
    probs, y, X, k = _audit_inputs(_reference, features, class_index)
    if _query is _reference:
        return local.lcb(probs, y, X, prob_bandwidth=prob_bandwidth,
                         feature_bandwidth=feature_bandwidth, class_index=k)
    q_probs, _, q_X, _ = _audit_inputs(_query, features, class_index)
    return local.lcb(probs, y, X, q_probs, q_X, prob_bandwidth, feature_bandwidth,
                     class_index=k)


# --------------------------------------------------------------------------- LCE landscape


def embedding(fingerprint: str, features: tuple[str, ...], method: str, data: AuditData,
              progress: Callable[[float, str], None] | None = None) -> Embedding:
    """2-D embedding of the standardised audit features, memoised per process
    (:class:`ProcessMemo`)."""
    names = [n for n in data.feature_names if n in features or n.split("=", 1)[0] in features]

    def compute() -> Embedding:
        X = prepare_features(data.feature_matrix(features), names)
        return embed(X, method=method, n_components=2, seed=0, progress=progress)

    return _EMBEDDINGS.get(embedding_cache_key(fingerprint, method, 2, 0, features=features),
                           compute)


@st.cache_data(show_spinner="Computing the local calibration errors…", max_entries=64)
def lce_values(fingerprint: str, features: tuple[str, ...], method: str, gamma: float,
               signed: bool, _coords: np.ndarray, _conf: np.ndarray,
               _correct: np.ndarray) -> np.ndarray:
    return local.lce(_conf, _correct, _coords, gamma, signed=signed)


@st.cache_data(show_spinner="Computing MLCE over γ…", max_entries=32)
def mlce_curve(fingerprint: str, features: tuple[str, ...], method: str,
               gammas: tuple[float, ...], _coords: np.ndarray, _conf: np.ndarray,
               _correct: np.ndarray) -> pd.DataFrame:
    return local.mlce_curve(_conf, _correct, _coords, list(gammas))
