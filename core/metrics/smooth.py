"""Smooth calibration: the smooth ECE and the smooth reliability diagram.

Błasiok & Nakkiran (2023), "Smooth ECE: Principled Reliability Diagrams via Kernel
Smoothing" (ICLR 2024; reference code: the ``relplot`` package). For confidences
``f_i ∈ [0, 1]`` and binary outcomes ``y_i`` of a calibration notion
(:func:`core.metrics.binned.confidence_outcome`), with the *reflected* Gaussian kernel on [0, 1]

    K̃_σ(t, f) = Σ_{k∈ℤ} [φ_σ(t − f − 2k) + φ_σ(t + f − 2k)]

(the law of ``f + N(0, σ²)`` folded back into [0, 1] at both ends, so ``∫₀¹ K̃_σ(t, f) dt = 1``)
the paper smooths the residuals and the predictions:

    r̂_σ(t) = Σ_i K̃_σ(t, f_i)(y_i − f_i) / Σ_i K̃_σ(t, f_i)       (smoothed residual)
    δ̂_σ(t) = (1/n) Σ_i K̃_σ(t, f_i)                               (density of the predictions)
    smECE_σ = ∫₀¹ |r̂_σ(t)| δ̂_σ(t) dt = ∫₀¹ |(1/n) Σ_i K̃_σ(t, f_i)(y_i − f_i)| dt.

The smooth reliability diagram draws ``μ̂_σ(t) = t + r̂_σ(t)`` with a width proportional to
``δ̂_σ(t)``, so smECE is visibly the density-weighted distance of the curve from the diagonal.
The bandwidth is the paper's fixed point: ``σ*`` with ``smECE_σ* = σ*`` (``smECE_σ`` does not
increase with σ, so the fixed point is unique); ``smECE_σ*`` is then a consistent calibration
measure, within constant factors of the distance to calibration from below and its square
root from above. Smoothing never adds error: ``|E[K̃(t,f)(y − f)]| ≤ E[K̃(t,f)|E[y|f] − f|]``
and ``∫ K̃(t, f) dt = 1`` give ``smECE_σ ≤ ECE`` (the true, unbinned ECE) for every σ.

Computation (linear in n): every row's mass is split linearly between the two nearest points
of a grid of ``GRID_INTERVALS + 1`` points on [0, 1] (``h = 1/8192``), the grid is mirrored
into one period [0, 2) of the reflected kernel, and the smoothing is a circular convolution by
FFT with the sampled, wrapped Gaussian; the integral is the trapezoid rule on the grid. The
gridding widens the kernel's variance by ``h²/6`` — a relative change below 10⁻³ for the
smallest bandwidth used, ``MIN_BANDWIDTH`` = 0.001 (the reference code's floor too). The
fixed point is found by Brent's method to 10⁻⁶ (the reference code bisects ten times, to
2⁻¹⁰); below ``MIN_BANDWIDTH`` the floor is used and then smECE < σ.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq

from core.data.validation import check_count, check_positive, check_probs_labels, check_seed
from core.metrics.binning import SortedGroups, grouped_sums
from core.metrics.intervals import bootstrap_interval, check_level
from core.metrics.scores import (
    confidence_outcome_of,
    one_confidence_per_row,
    resolve_notion,
    scores,
)

#: Intervals of the grid the rows are binned onto (spacing h = 1 / GRID_INTERVALS).
GRID_INTERVALS = 8192
#: Smallest bandwidth the fixed-point search considers (as relplot's ``eps``).
MIN_BANDWIDTH = 1e-3
#: Curve points whose density is below this fraction of the peak density are left undrawn
#: (NaN): there the FFT's rounding (about 1e-16 of the peak) would dominate the ratio r̂.
DENSITY_FLOOR = 1e-9


# --------------------------------------------------------------------------- the grid


def _node_shares(conf: np.ndarray, outcome: np.ndarray, weights: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Each row's left grid node and its residual's and mass's shares of that node and the
    next, ``(left, [resid·(1 − frac), resid·frac, mass·(1 − frac), mass·frac])`` with
    ``conf·m = left + frac``, residual ``w(y − f)/Σw`` and mass ``w/Σw`` (``weights``:
    each row's ``w``, default 1)."""
    m = GRID_INTERVALS
    x = conf * m
    left = np.minimum(x.astype(np.int64), m - 1)
    frac = x - left
    rest = 1.0 - frac
    if weights is None:
        total = float(conf.shape[0])
        resid, mass = (outcome - conf) / total, 1.0 / total
    else:
        total = float(weights.sum())
        resid, mass = weights * (outcome - conf) / total, weights / total
    return left, np.stack([resid * rest, resid * frac, mass * rest, mass * frac])


class _Gridded:
    """Residual and prediction masses of one (confidence, outcome) vector on the grid,
    mirrored into one period of the reflected kernel: their spectra (one FFT each), reused for
    every σ."""

    def __init__(self, spectra: np.ndarray) -> None:
        self.spectra = spectra

    @classmethod
    def of_rows(cls, conf: np.ndarray, outcome: np.ndarray,
                weights: np.ndarray | None = None) -> _Gridded:
        """The rows' masses gridded (``weights``: each row's weight, default 1)."""
        left, shares = _node_shares(conf, outcome, weights)
        return cls(_spectra(grouped_sums(left, shares, GRID_INTERVALS + 1)))

    def smoothed(self, sigma: float, rows: slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
        """The smoothed rows on the evaluation grid ``t_j = j/m`` (:func:`_evaluation_intervals`):
        ``(1/n) Σ K̃_σ(t_j, f_i)(y_i − f_i)`` (row 0) and ``δ̂_σ(t_j)`` (row 1), and the grid."""
        m = _evaluation_intervals(sigma)
        spectrum = self.spectra[rows, : m + 1] * _kernel_spectrum(sigma, m)
        conv = np.fft.irfft(spectrum, 2 * m, axis=-1)[..., : m + 1] * (m / GRID_INTERVALS)
        return conv, np.linspace(0.0, 1.0, m + 1)

    def smooth_ece(self, sigma: float) -> float:
        residual, t = self.smoothed(sigma, slice(0, 1))
        return float(np.trapezoid(np.abs(residual[0]), t))


def _spectra(shares: Sequence[np.ndarray]) -> np.ndarray:
    """The two periods' spectra from the node sums ``(residual on left nodes, residual on right
    nodes, mass on left, mass on right)``: the right shares moved one node on, each grid
    mirrored into one period [0, 2) of the reflected kernel, one real FFT each."""
    m = GRID_INTERVALS
    periods = np.empty((2, 2 * m))
    for row in range(2):
        grid, on_right = shares[2 * row], shares[2 * row + 1]
        grid[1:] += on_right[:-1]
        periods[row, : m + 1] = grid
        periods[row, m + 1:] = grid[m - 1:0:-1]  # the mirror image 2 − t
        periods[row, 0] += grid[0]  # the images of 0 and 1 fall on themselves
        periods[row, m] += grid[m]
    return np.fft.rfft(periods, axis=1)


def _evaluation_intervals(sigma: float) -> int:
    """Intervals of the grid the smoothed functions are evaluated on: a power of two from
    1024 up to ``GRID_INTERVALS`` with spacing at most σ/16. The smoothed functions have no
    Fourier content above frequency ``m`` there (see :func:`_kernel_spectrum`), so the coarser
    grid samples the same functions."""
    m = 1024
    while m < 16.0 / sigma and m < GRID_INTERVALS:
        m *= 2
    return m


def _kernel_spectrum(sigma: float, m: int) -> np.ndarray:
    """DFT coefficients ``0..m`` of the wrapped Gaussian sampled on one period [0, 2).

    The Gaussian wrapped with period 2 has Fourier coefficients ``exp(−σ²(πk)²/2)/2``; by
    Poisson summation the DFT of its ``2·GRID_INTERVALS`` samples is ``GRID_INTERVALS`` times
    that plus aliases below ``exp(−σ²π²GRID_INTERVALS²/2)`` < 1e-140 for σ ≥ MIN_BANDWIDTH, so
    the samples never need to be formed. Beyond ``k = m ≥ 16/σ`` the coefficients are below
    ``exp(−1250)``: dropping them is exact in floating point.
    """
    k = np.arange(m + 1, dtype=np.float64)
    return GRID_INTERVALS * np.exp(-0.5 * (sigma * np.pi * k) ** 2)


def _fixed_point(gridded: _Gridded) -> float:
    """σ* with smECE_σ* = σ* (Brent's method), or the floor ``MIN_BANDWIDTH``."""

    def gap(sigma: float) -> float:
        return gridded.smooth_ece(sigma) - sigma

    if gap(MIN_BANDWIDTH) <= 0.0:
        return MIN_BANDWIDTH
    if gap(1.0) >= 0.0:
        return 1.0
    return float(brentq(gap, MIN_BANDWIDTH, 1.0, xtol=1e-6, rtol=1e-9))


# --------------------------------------------------------------------------- public API


def _pairs(probs: ArrayLike, y: ArrayLike, notion: str | None,
           class_index: int | None) -> tuple[list[tuple[np.ndarray, np.ndarray]], str]:
    """Validated (confidence, outcome) pairs: one, or one per class (classwise, no class)."""
    p, labels = check_probs_labels(probs, y)
    notion = resolve_notion(notion, p)
    if notion == "classwise" and class_index is None:
        return scores(p, labels, notion), notion
    return [confidence_outcome_of(p, labels, notion, class_index)], notion


def _check_bandwidth(bandwidth: float | None) -> float | None:
    if bandwidth is None:
        return None
    sigma = check_positive("bandwidth", bandwidth)
    if sigma > 1.0:
        raise ValueError(f"bandwidth must be at most 1 (the width of [0, 1]), not {bandwidth!r}.")
    return sigma


def select_bandwidth(probs: ArrayLike, y: ArrayLike, notion: str | None = None,
                     class_index: int | None = None) -> float:
    """The fixed-point bandwidth ``σ*`` of Błasiok & Nakkiran (2023): ``smECE_σ* = σ*``.

    Parameters
    ----------
    probs, y
        Predictions and labels (DESIGN.md conventions).
    notion, class_index
        Which (confidence, outcome) pair (:func:`core.metrics.binned.confidence_outcome`); the
        classwise notion needs ``class_index`` here.

    Returns
    -------
    float
        ``σ*`` in ``[MIN_BANDWIDTH, 1]``.
    """
    pairs, notion = _pairs(probs, y, notion, class_index)
    if len(pairs) > 1:
        raise ValueError("The bandwidth is chosen for one confidence at a time: with the "
                         "'classwise' notion pass class_index to choose the class.")
    return _fixed_point(_Gridded.of_rows(*pairs[0]))


def smooth_ece_of(conf: np.ndarray, outcome: np.ndarray) -> tuple[float, float]:
    """``(smECE_σ*, σ*)`` of one validated (confidence, outcome) pair (no input checks)."""
    gridded = _Gridded.of_rows(conf, outcome)
    sigma = _fixed_point(gridded)
    return gridded.smooth_ece(sigma), sigma


class ResampledSmoothEce:
    """``smECE_σ*`` of bootstrap resamples of one (confidence, outcome) pair whose rows are
    sorted by confidence, each resample given by its rows' counts (summing to the rows).

    Each row's shares of its two grid nodes are computed once; a resample then costs one
    weighted segmented sum over the rows (:class:`~core.metrics.binning.SortedGroups`) and
    the FFTs of the fixed-point search. The value is :func:`smooth_ece_of` of the rows repeated
    by their counts, to rounding (the same shares, summed in another order).
    """

    def __init__(self, conf: np.ndarray, outcome: np.ndarray) -> None:
        left, self._shares = _node_shares(conf, outcome)
        self._groups = SortedGroups(left, GRID_INTERVALS + 1)

    def __call__(self, counts: np.ndarray) -> float:
        gridded = _Gridded(_spectra(self._groups.sums(self._shares * counts)))
        return gridded.smooth_ece(_fixed_point(gridded))


def smooth_ece(probs: ArrayLike, y: ArrayLike, bandwidth: float | None = None,
               notion: str | None = None, class_index: int | None = None) -> float:
    """Smooth ECE (Błasiok & Nakkiran 2023, the SmoothECE ``smECE_σ*``).

    ``smECE_σ = ∫₀¹ |(1/n) Σ_i K̃_σ(t, f_i)(y_i − f_i)| dt`` with the reflected Gaussian kernel
    (module docstring) and, by default, σ at the paper's fixed point ``smECE_σ = σ``.

    Parameters
    ----------
    probs, y
        Predictions and labels (DESIGN.md conventions).
    bandwidth
        A fixed σ in (0, 1] instead of the fixed point.
    notion, class_index
        The (confidence, outcome) pair. ``notion=None``: positive for binary problems,
        top-label otherwise. Classwise without ``class_index``: the unweighted mean over
        classes, each class with its own fixed point.

    Returns
    -------
    float
        smECE in [0, 1]; 0 for a calibrated model in the limit of many rows.
    """
    sigma = _check_bandwidth(bandwidth)
    pairs, _ = _pairs(probs, y, notion, class_index)
    values = []
    for conf, outcome in pairs:
        gridded = _Gridded.of_rows(conf, outcome)
        values.append(gridded.smooth_ece(_fixed_point(gridded) if sigma is None else sigma))
    return float(np.mean(values))


@dataclass(frozen=True)
class SmoothReliability:
    """The smooth reliability diagram and the smooth ECE with their bootstrap uncertainty.

    Attributes
    ----------
    grid : ndarray
        Evaluation points t in [0, 1].
    curve : ndarray
        ``μ̂(t) = t + r̂_σ(t)`` (NaN where the density is below ``DENSITY_FLOOR`` of its peak).
    density : ndarray
        ``δ̂_σ(t)``, the reflected-kernel density of the confidences (integrates to 1).
    band_low, band_high : ndarray
        Pointwise ``level`` percentile band of μ̂ over the bootstrap resamples (σ held fixed).
    smece, smece_low, smece_high : float
        smECE at σ and its basic bootstrap interval (σ re-chosen in every resample).
    bandwidth : float
        σ used.
    """

    grid: np.ndarray = field(repr=False)
    curve: np.ndarray = field(repr=False)
    density: np.ndarray = field(repr=False)
    band_low: np.ndarray = field(repr=False)
    band_high: np.ndarray = field(repr=False)
    smece: float
    smece_low: float
    smece_high: float
    bandwidth: float
    notion: str
    class_index: int | None
    n: int
    n_resamples: int
    level: float


def _curve(gridded: _Gridded, sigma: float, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``μ̂(t)`` (NaN where the density is negligible) and ``δ̂(t)`` at the points t."""
    (residual, density), grid = gridded.smoothed(sigma)
    r = np.interp(t, grid, residual)
    d = np.interp(t, grid, density)
    usable = d > DENSITY_FLOOR * density.max()
    mu = np.divide(r, d, out=np.full_like(t, np.nan), where=usable) + t
    return mu, d


def smooth_reliability(
    probs: ArrayLike,
    y: ArrayLike,
    notion: str | None = None,
    class_index: int | None = None,
    bandwidth: float | None = None,
    n_resamples: int = 200,
    level: float = 0.95,
    seed: int | None = 0,
    n_points: int = 201,
    progress: Callable[[float, str], None] | None = None,
) -> SmoothReliability:
    """Smooth reliability diagram (Błasiok & Nakkiran 2023, §4) with a bootstrap band.

    The curve ``μ̂_σ(t) = t + r̂_σ(t)`` and the density ``δ̂_σ(t)`` at ``n_points`` equally
    spaced t, σ at the fixed point unless ``bandwidth`` is given. Uncertainty as in the
    reference code's ``prepare_rel_diagram``: ``n_resamples`` bootstrap resamples of the rows
    (seeded); the band is the pointwise central ``level`` range of μ̂* at the same σ, and the
    smECE interval is the basic bootstrap interval with σ* re-chosen in each resample (the
    whole estimator resampled). ``n_resamples=0`` leaves band and interval NaN. Cost:
    O(n + GRID_INTERVALS·log) per resample.

    Parameters
    ----------
    probs, y
        Predictions and labels (DESIGN.md conventions).
    notion, class_index
        The (confidence, outcome) pair; the classwise notion needs ``class_index``.
    bandwidth
        A fixed σ in (0, 1] instead of the fixed point.
    n_resamples, level, seed
        Bootstrap resamples, interval level and seed.
    n_points
        Evaluation points of the curve (at least 2).
    progress
        Optional ``progress(fraction, message)`` called during the bootstrap.

    Returns
    -------
    SmoothReliability
    """
    sigma = _check_bandwidth(bandwidth)
    n_resamples = check_count("n_resamples", n_resamples, 0)
    n_points = check_count("n_points", n_points, 2)
    level = check_level(level)
    seed = check_seed(seed)
    conf, outcome, notion = one_confidence_per_row(probs, y, notion, class_index,
                                                   "A smooth reliability diagram")
    gridded = _Gridded.of_rows(conf, outcome)
    chosen = _fixed_point(gridded) if sigma is None else sigma
    value = gridded.smooth_ece(chosen)
    t = np.linspace(0.0, 1.0, n_points)
    mu, density = _curve(gridded, chosen, t)
    band_low = np.full(n_points, np.nan)
    band_high = np.full(n_points, np.nan)
    low = high = np.nan
    if n_resamples:
        n = conf.shape[0]
        rng = np.random.default_rng(seed)
        curves = np.empty((n_resamples, n_points))
        values = np.empty(n_resamples)
        for r in range(n_resamples):
            counts = np.bincount(rng.integers(0, n, n), minlength=n).astype(np.float64)
            resample = _Gridded.of_rows(conf, outcome, counts)
            curves[r] = _curve(resample, chosen, t)[0]
            values[r] = resample.smooth_ece(_fixed_point(resample) if sigma is None else sigma)
            if progress is not None and (r + 1) % 10 == 0:
                progress((r + 1) / n_resamples, "Bootstrapping the smooth reliability curve…")
        alpha = 1.0 - level
        with warnings.catch_warnings():  # all-NaN columns (no data near t) stay NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            band_low, band_high = np.nanquantile(curves, [alpha / 2, 1 - alpha / 2], axis=0)
        low, high = bootstrap_interval(values, value, level, "basic", (0.0, 1.0))
    return SmoothReliability(
        grid=t, curve=mu, density=density, band_low=band_low, band_high=band_high,
        smece=value, smece_low=low, smece_high=high, bandwidth=chosen, notion=notion,
        class_index=class_index, n=int(conf.shape[0]), n_resamples=n_resamples, level=level,
    )
