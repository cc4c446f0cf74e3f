"""Tests of canonical calibration with the SKCE (Widmann, Lindsten & Zachariah 2019): the
consistency-resampling test through the tile engine (or random Fourier features), the
asymptotic block z-test and a distribution-free bound test, each a
:class:`~core.stattests.result.TestResult`. The estimators themselves are in
:mod:`core.metrics.skce_estimate`.
"""

from __future__ import annotations

import numpy as np

from core.data.distributions import norm_sf
from core.data.validation import check_choice, check_count
from core.kernels import engine
from core.kernels.computation import plan as computation_plan
from core.kernels.resampling import (
    bernoulli_residuals,
    categorical_labels,
    row_bernoulli_residuals,
    row_categorical_labels,
)
from core.kernels.rff import DEFAULT_FEATURES, FourierMap, accumulate
from core.kernels.tiles import quadratic_forms
from core.metrics.skce_estimate import block_estimates, skce_inputs
from core.stattests.result import TestResult, resampling_result

#: Upper bound on resampled residual columns per tile-engine pass (memory n × columns × 8 B).
MAX_COLUMNS = 4096
SKCE_METHODS = ("consistency", "block", "bound")
#: Seconds the plan sizes the random-feature consistency test to (half the 4 s of a bandwidth
#: grid's pass, :data:`~core.kernels.computation.RFF_SECONDS`): one prediction kernel, most of
#: whose time is the B redrawn labels of every row. At 10⁶ rows the plan then takes D = 32 and
#: B = 250 instead of D = 64 and B = 500; on the same 200 tables of 10⁵ rows
#: (``python -m benchmarks.skce_plan``) the two plans rejected calibrated models at 0.035 and
#: 0.025 (the level is exact for any D and B) and mildly over-confident ones (slope 0.98) at
#: 0.660 ± 0.033 and 0.650 ± 0.034, the smaller plan in half the time.
TEST_SECONDS = 2.0


# --------------------------------------------------------------------------- SKCE tests


def skce_test(
    probs: np.ndarray,
    y: np.ndarray,
    bandwidth: float | None = None,
    method: str = "consistency",
    n_resamples: int = 1000,
    seed: int = 0,
    block_size: int = 2,
    computation: str = "auto",
    n_features: int = DEFAULT_FEATURES,
) -> TestResult:
    """Test H0 "the model is calibrated" (canonical calibration) with the SKCE.

    ``consistency``: the unbiased SKCE against its distribution under labels redrawn from the
    predictions (consistency resampling, Widmann et al. 2019 §5); all B resamples are columns
    of one residual matrix, so the tile engine makes one pass (a few for many classes, to bound
    memory).
    ``block``: the asymptotic z-test of Widmann et al. 2019 — the block estimates ĥ_k (block
    size b) are i.i.d. with mean SKCE, so ``z = mean(ĥ) / (sd(ĥ)/√⌊n/b⌋)`` and p = 1 − Φ(z).
    ``bound``: a distribution-free test from Hoeffding's inequality for U-statistics: the
    summand h is bounded by ``|h| ≤ sup k · ‖r‖‖r'‖ ≤ 2``, so under H0
    ``P(SKCE_u ≥ t) ≤ exp(−⌊n/2⌋ t² / 8)``; valid for any n, conservative.

    ``computation`` applies to the consistency test (:mod:`core.kernels.computation`): ``"exact"``
    tiles, ``"rff"`` random Fourier features with ``n_features`` features (labels redrawn
    chunk by chunk; the level stays exact, :mod:`core.kernels.rff`), ``"block"`` the block z-test,
    ``"auto"`` exact while it takes a few seconds here, else random features with D and B
    sized to the data (:func:`core.kernels.computation.plan`). ``parameters["computation"]``
    says which ran and why.

    Parameters
    ----------
    probs : array_like
        ``(n,)`` P(y = 1) of a binary model, or ``(n, m)`` class probabilities.
    y : array_like
        ``(n,)`` integer labels ``0..m-1``.
    bandwidth : float, optional
        σ of the Gaussian kernel on prediction vectors; ``None``: the median heuristic.
    method : {"consistency", "block", "bound"}
        The test (above).
    n_resamples : int, default 1000
        Consistency resamples B.
    seed : int, default 0
        Seed of the resamples (and of the random features).
    block_size : int, default 2
        Block size b of the ``"block"`` test.
    computation : {"auto", "exact", "rff", "block"}
        How the kernel sums are computed (:mod:`core.kernels.computation`).
    n_features : int
        Random Fourier features D of ``"rff"``.

    Returns
    -------
    TestResult
        The SKCE statistic, its p-value and the resampled null.
    """
    check_choice(method, SKCE_METHODS, "SKCE test", f"use one of {SKCE_METHODS}")
    Z, R, sigma = skce_inputs(probs, y, bandwidth)
    n_resamples = check_count("n_resamples", n_resamples, 1)
    n = Z.shape[0]
    label, reason = method, "as asked"
    if method == "consistency":
        chosen = computation_plan(computation, n, n_resamples, n_features,
                                  per_resample=R.shape[1], seconds=TEST_SECONDS)
        label, reason = chosen.label, chosen.reason
        n_resamples, n_features = chosen.n_resamples, chosen.n_features
    if method == "block" or label == "block":
        return _block_test(Z, R, sigma, block_size)
    if method == "bound":
        return bound_test(float(quadratic_forms(Z, R, sigma).sum() / (n * (n - 1))), n, sigma)
    if label == "exact":
        values = _consistency_statistics(Z, R, sigma, n_resamples, np.random.default_rng(seed))
    else:
        values = _fourier_consistency(Z, R, sigma, n_resamples, n_features, seed)
    return resampling_result(values[0], values[1:], "consistency", bandwidth=sigma,
                             estimator="unbiased", seed=seed,
                             engine=engine.current().describe(), computation=label,
                             computation_reason=reason)


def _fourier_consistency(Z: np.ndarray, R: np.ndarray, sigma: float, n_resamples: int,
                         n_features: int, seed: int) -> np.ndarray:
    """The consistency statistics under random Fourier features (:mod:`core.kernels.rff`): every
    resample's m residual columns are drawn row by row (the counter-based generator, so any
    chunking gives the same draws) and summed per resample."""
    n, m = R.shape
    fourier = FourierMap.draw(Z.shape[1], n_features, seed)
    sums = accumulate(Z / sigma, consistency_columns(Z, R, n_resamples, seed), fourier)
    return sums.plain().reshape(-1, m).sum(axis=1) / (n * (n - 1))


def consistency_columns(Z: np.ndarray, R: np.ndarray, n_resamples: int, seed: int,
                        offset: int = 0):
    """The residual columns of the SKCE consistency test for rows ``offset + …`` of the data:
    the observed ``R`` then B resamples in the layout of :func:`_redrawn_residuals`, labels
    drawn by :func:`core.kernels.resampling.row_bernoulli_residuals` (binary) or
    :func:`core.kernels.resampling.row_categorical_labels` at the rows' global numbers."""
    def columns(rows: slice) -> np.ndarray:
        start = offset + rows.start
        z = Z[rows]
        if z.shape[1] == 1:
            redrawn = np.sqrt(2.0) * row_bernoulli_residuals(z[:, 0] / np.sqrt(2.0), start,
                                                             n_resamples, seed)
        else:
            redrawn = residuals_of_labels(z, row_categorical_labels(z, start, n_resamples,
                                                                    seed))
        return np.hstack([R[rows], redrawn])

    return columns


def bound_test(statistic: float, n: int, bandwidth: float) -> TestResult:
    """The distribution-free test of an unbiased SKCE ``statistic`` on n rows:
    ``p = exp(−⌊n/2⌋ max(t, 0)² / 8)`` (Hoeffding, ``|h| ≤ 2``; see :func:`skce_test`).

    Parameters
    ----------
    statistic : float
        The unbiased SKCE estimate.
    n : int
        Rows it was computed on.
    bandwidth : float
        Its kernel bandwidth, recorded in the result.

    Returns
    -------
    TestResult
    """
    p = float(np.exp(-(n // 2) * max(statistic, 0.0) ** 2 / 8.0))
    return TestResult(float(statistic), min(p, 1.0), np.empty(0), "bound", 0,
                      {"bandwidth": bandwidth, "estimator": "unbiased"})


def _consistency_statistics(
    Z: np.ndarray, R: np.ndarray, sigma: float, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Unbiased SKCE of the observed labels (first) and of B label vectors redrawn from the
    predictions, the observed residuals riding as the first columns of the first pass."""
    n, m = R.shape
    chunks, pending = [], R
    for size in _chunk_sizes(n_resamples, max(1, MAX_COLUMNS // m)) or [0]:
        E = np.hstack([pending, _redrawn_residuals(Z, size, rng)]) if pending is not None \
            else _redrawn_residuals(Z, size, rng)
        pending = None
        chunks.append(quadratic_forms(Z, E, sigma).reshape(-1, m).sum(axis=1))
    return np.concatenate(chunks) / (n * (n - 1))


def _redrawn_residuals(Z: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, size·m)`` residuals of labels redrawn from the predictions, in the layout of
    :func:`core.metrics.skce_estimate.prediction_residuals` (binary: the √2-scaled one-dimensional
    form)."""
    if Z.shape[1] == 1:
        return np.sqrt(2.0) * bernoulli_residuals(Z[:, 0] / np.sqrt(2.0), size, rng)
    return residuals_of_labels(Z, categorical_labels(Z, size, rng))


def residuals_of_labels(Z: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``(n, B·m)``: ``e_{y*} − p`` of each row's B drawn labels, resample after resample."""
    n, size = labels.shape
    E = -np.repeat(Z[:, None, :], size, axis=1)
    np.put_along_axis(E, labels[:, :, None],
                      np.take_along_axis(E, labels[:, :, None], axis=2) + 1.0, axis=2)
    return E.reshape(n, size * Z.shape[1])


def _chunk_sizes(total: int, size: int) -> list[int]:
    return [min(size, total - start) for start in range(0, total, size)]


def _block_test(Z: np.ndarray, R: np.ndarray, sigma: float, block_size: int) -> TestResult:
    estimates = block_estimates(Z, R, sigma, block_size)
    mean = float(estimates.mean())
    se = float(estimates.std(ddof=1) / np.sqrt(estimates.size)) if estimates.size > 1 else np.inf
    z = mean / se if se > 0 else (np.inf if mean > 0 else 0.0)
    return TestResult(mean, float(norm_sf(z)), np.empty(0), "block", 0, {
        "bandwidth": sigma, "block_size": block_size, "n_blocks": int(estimates.size),
        "z": float(z), "standard_error": se, "computation": f"block({block_size})",
    })

