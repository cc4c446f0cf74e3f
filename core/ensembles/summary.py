"""The three credal-set tests side by side: one settings value in, one comparison out.

The app's Ensembles page asks one question — is some convex combination of the members
calibrated? — and shows Algorithm 1 (learned λ(x)) beside the paper's two baselines on the
same test rows (:mod:`core.ensembles.test`). This module takes the members and features of an
:class:`~core.data.audit_data.AuditData` (on at most :data:`ENSEMBLE_ROWS` rows), runs the three
with one
progress bar and tabulates them, so the page and the ``credal`` command only draw and write.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from core.data.audit_data import AuditData
from core.ensembles.calibration_errors import ESTIMATORS
from core.ensembles.test import (
    WEIGHT_LABELS,
    WEIGHTS,
    CredalTestResult,
    credal_test,
    null_description,
)
from core.kernels.resampling import row_sample

Progress = Callable[[float, str], None]
#: Share of the progress bar each test takes (the learned one trains a network first; with
#: ``null="refit"`` it trains B + 1 networks).
PROGRESS_SHARES = {"learned": 0.6, "mean": 0.15, "sampled": 0.25}
REFIT_PROGRESS_SHARES = {"learned": 0.9, "mean": 0.03, "sampled": 0.07}
#: The credal-set tests run on at most this many rows (a seeded sample): the CE estimators'
#: leave-one-out kernel densities cost test rows² per resample.
ENSEMBLE_ROWS = 20_000


@dataclass(frozen=True)
class CredalSettings:
    """Everything a credal-set comparison depends on besides the data (a hashable value).

    Attributes
    ----------
    estimator : str
        Key of :data:`core.ensembles.calibration_errors.ESTIMATORS`.
    n_resamples : int
        B, bootstrap resamples per test.
    split : tuple of float
        Optimisation, validation and test fractions.
    alpha : float
        Significance level of the verdicts.
    seed : int
        Seeds the split, the network and the resampling.
    null : str
        ``"bootstrap"`` (Algorithm 1), ``"consistency"`` or ``"refit"`` (:func:`credal_test`).
    """

    estimator: str = "ce2"
    n_resamples: int = 100
    split: tuple[float, float, float] = (0.6, 0.2, 0.2)
    alpha: float = 0.05
    seed: int = 0
    null: str = "bootstrap"


@dataclass(frozen=True)
class CredalComparison:
    """The three tests of one data set under one :class:`CredalSettings`.

    Attributes
    ----------
    results : mapping
        ``weights key -> CredalTestResult`` for ``learned``, ``mean`` and ``sampled``.
    settings : CredalSettings
    """

    results: Mapping[str, CredalTestResult]
    settings: CredalSettings
    members: tuple[str, ...] = ()
    features: tuple[str, ...] = ()

    def verdict(self) -> str:
        """The learned test's verdict at α in one sentence, with the null that was used."""
        learned, alpha = self.results["learned"], self.settings.alpha
        null = null_description(self.settings.null, "learned")
        where = f"{learned.rows.size:,} test rows, {null}"
        if learned.rejects(alpha):
            text = (f"No convex combination of the members is calibrated: the credal-set test "
                    f"with learned weights λ(x) rejects (p = {learned.p_value:.4f} ≤ α = "
                    f"{alpha:g}; {where}).")
            if self.settings.null != "refit":
                text += (" This null holds the learned λ(x) fixed and is liberal when λ(x) is "
                         "learned from a few hundred rows; confirm with the refit null.")
            return text
        return (f"Consistent with a calibrated credal set: the test with learned weights λ(x) "
                f"does not reject (p = {learned.p_value:.4f} > α = {alpha:g}; {where}).")

    def weights_table(self) -> pd.DataFrame:
        """Per member, the learned weights λ_m(x) on the tested rows: their mean and the
        share of rows where the member has the largest weight."""
        weights = self.results["learned"].weights
        names = self.members or tuple(f"member {m + 1}" for m in range(weights.shape[1]))
        largest = np.bincount(np.argmax(weights, axis=1), minlength=weights.shape[1])
        return pd.DataFrame({"member": names, "mean_weight": weights.mean(axis=0),
                             "largest_weight_share": largest / max(1, weights.shape[0])})

    def table(self) -> pd.DataFrame:
        """One row per test: weights, statistic, p-value (and the paper's), verdict at α."""
        label = ESTIMATORS[self.settings.estimator].label
        rows = []
        for key, result in self.results.items():
            rows.append({
                "test": WEIGHT_LABELS[key], "weights": key, "estimator": label,
                "statistic": result.statistic, "p_value": result.p_value,
                "p_value_paper": result.p_value_paper,
                "verdict": "rejects" if result.rejects(self.settings.alpha) else "does not reject",
                "null": null_description(self.settings.null, key),
            })
        return pd.DataFrame(rows)


def tested_rows(data: AuditData) -> np.ndarray:
    """The rows of ``data`` the tests see, in order: all of them, or a seeded sample of
    :data:`ENSEMBLE_ROWS` (:func:`core.kernels.resampling.row_sample`, seed 0). A result's ``rows``
    index into these.

    Parameters
    ----------
    data : AuditData
        The ensemble's audited rows.
    """
    return row_sample(data.n, ENSEMBLE_ROWS, 0)


def ensemble_inputs(data: AuditData, members: Sequence[int], features: Sequence[str]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(members (n, M, K), y, X (n, d))`` of the chosen members (indices into
    ``data.member_names``) and features on :func:`tested_rows`."""
    if data.members is None:
        raise ValueError("The dataset has no ensemble member columns: map at least two "
                         "members (one probability column each, or one per class).")
    rows = tested_rows(data)
    X = data.feature_matrix(tuple(features))[rows] if features else np.zeros((rows.size, 0))
    return data.members[rows][:, list(members)], data.y[rows], X


def compare_weights(members: np.ndarray, y: np.ndarray, X: np.ndarray,
                    settings: CredalSettings = CredalSettings(),  # noqa: B008 (frozen value)
                    progress: Progress | None = None) -> CredalComparison:
    """Run :func:`core.ensembles.credal_test` with each weight choice on the same split.

    Parameters
    ----------
    members : ndarray of shape (n, M) or (n, M, K)
        Member probabilities (P(y = 1) for binary members).
    y : ndarray of shape (n,)
        Integer labels.
    X : ndarray of shape (n, d)
        Instance features for λ(x).
    settings : CredalSettings
        Estimator, resamples, split, α and seed (the same for all three tests).
    progress : callable, optional
        ``progress(fraction, message)`` across the three tests.

    Returns
    -------
    CredalComparison
    """
    results = {}
    done = 0.0
    shares = REFIT_PROGRESS_SHARES if settings.null == "refit" else PROGRESS_SHARES
    for key in WEIGHTS:
        share = shares[key]

        def report(fraction: float, message: str, start: float = done, share: float = share,
                   key: str = key) -> None:
            if progress is not None:
                progress(min(start + share * fraction, 1.0), f"{WEIGHT_LABELS[key]}: {message}")

        results[key] = credal_test(
            members, y, X, estimator=settings.estimator, weights=key,
            n_resamples=settings.n_resamples, split=settings.split, alpha=settings.alpha,
            seed=settings.seed, progress=report, null=settings.null)
        done += share
    return CredalComparison(results=results, settings=settings)


def compare_ensemble(data: AuditData, members: Sequence[int], features: Sequence[str],
                     settings: CredalSettings = CredalSettings(),  # noqa: B008 (frozen value)
                     progress: Progress | None = None) -> CredalComparison:
    """:func:`compare_weights` on the chosen members (indices into ``data.member_names``) and
    features of ``data`` (:func:`ensemble_inputs`), with their names recorded for the page,
    the report and the command line.

    Parameters
    ----------
    data : AuditData
        A table with ensemble members.
    members : sequence of int
        Indices into ``data.member_names`` (at least two).
    features : sequence of str
        Audit features the weights λ(x) may depend on.
    settings : CredalSettings
        Estimator, resamples, split, level, seed and null.
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    CredalComparison
        The three tests (learned, mean, sampled) with the members' and features' names.
    """
    comparison = compare_weights(*ensemble_inputs(data, members, features), settings,
                                 progress=progress)
    return replace(comparison, members=tuple(data.member_names[m] for m in members),
                   features=tuple(features))
