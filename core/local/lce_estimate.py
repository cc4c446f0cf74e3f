"""Local calibration error (LCE) and maximum local calibration error (MLCE).

Luo et al., "Local Calibration: Metrics and Recalibration". For a data set
``D = ((x_1, y_1), …, (x_n, y_n))`` with top-label confidences ``c_i`` and correctness
``o_i = 1[f(x_i) = y_i]``, and ``β(x)`` the indices of the points whose confidence lies in the
same confidence bin as ``x``, the LCE at ``x`` is (paper eq. 4)::

    LCE_γ(x) = | Σ_{i∈β(x)} (c_i − o_i) k_γ(x, x_i)  /  Σ_{i∈β(x)} k_γ(x, x_i) |

with the Laplacian kernel on a feature embedding ``φ(x) ∈ ℝ^d`` (paper §3.2)::

    k_γ(x, x') = exp(−‖φ(x) − φ(x')‖₁ / (d·γ))

and the MLCE is its maximum, ``MLCE_γ = max_x LCE_γ(x)`` (paper eq. 5). Here ``x`` runs over
the data points themselves, so ``x`` is one of the ``x_i`` (it is part of ``D``) and enters
both sums with ``k_γ(x, x) = 1``; the denominator is therefore at least 1. The signed value
(the paper's SLCE, App. D) drops the absolute value: it is *confidence minus accuracy*, so a
positive value means the model is over-confident near ``x`` and a negative one
under-confident — the opposite sign of the reliability table's ``gap`` (frequency minus
confidence) in :mod:`core.metrics`.

Limits (paper Lemma 1 / Lemma 2, Fig. 1):

* ``γ → ∞``: ``k_γ → 1``, every point's LCE becomes its bin's ``|conf(B) − acc(B)|`` and the
  MLCE becomes the binned MCE with the same bins (``gamma=numpy.inf`` computes this limit).
* ``γ → 0``: only the point itself (and exact duplicates of its features in its bin) keeps
  weight, so ``LCE(x_j) → |c_j − o_j|`` and ``MLCE → max_j |c_j − o_j|``: the confidence of
  the most confidently wrong prediction. For a classifier that makes any mistake at a
  confidence near 1 this is ≈ 1 — the plateau at small γ of Fig. 1.

Conventions shared with the reliability diagram: ``conf``/``correct`` are top-label
(``core.metrics.binned.confidence_outcome(probs, y, "top-label")``), bins are ``n_bins`` equal-width
bins, right-closed as in :func:`core.metrics.bin_indices` (a confidence of exactly 1.0 is in
the last bin, one exactly on an inner edge in the bin below it).

Three evaluation methods (:func:`core.local.lce_plan.plan_method` chooses; every result says
which ran):

* ``"pairs"`` — per bin, one :func:`core.kernels.tiles.kernel_matmul` of the bin's points
  against themselves with ``V = [c − o, 1]`` gives numerator and denominator in one tiled
  pass; no n×n matrix, memory O(n + tile²), time O(Σ_b n_b² · d). Any d. (This module.)
* ``"sweep"`` (1-D and 2-D features) — exact to rounding in O(n log² n)
  (:mod:`core.local.lce_sweep`).
* ``"binned"`` (2-D features only) — a cloud-in-cell grid convolved with the kernel as a
  recursive filter, with an error bound (:mod:`core.local.lce_grid`).

``"exact"`` is the cheaper of the two exact methods; ``"auto"`` keeps the pair sums on small
data and otherwise takes the grid where its worst-case bound is at most
:data:`core.local.lce_plan.AUTO_MAX_ERROR` (and it is cheaper), else the sweep. Input
checks and confidence bins shared by the methods are in :mod:`core.local.lce_inputs`;
per-bin summaries and CDFs of the values in :mod:`core.local.lce_summary`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from core.data.validation import check_count
from core.kernels.engine import in_threads
from core.kernels.tiles import kernel_matmul
from core.local.lce_grid import binned_sums, binned_sums_over
from core.local.lce_inputs import (
    LCE_TILE,
    check_features,
    check_gamma,
    check_vectors,
    confidence_bins,
)
from core.local.lce_plan import LceMethod, plan_method, plan_methods
from core.local.lce_sweep import sweep_sums_bin


def _check_n_jobs(n_jobs: int | None) -> int | None:
    return None if n_jobs is None else check_count("n_jobs", n_jobs, 1)


def _bin_groups(bins: np.ndarray) -> list[np.ndarray]:
    """Row indices of every non-empty bin (ascending rows within each bin)."""
    order = np.argsort(bins, kind="stable")
    cuts = np.flatnonzero(np.diff(bins[order])) + 1
    return np.split(order, cuts)


# --------------------------------------------------------------------------- exact method


def _exact_sums(
    residual: np.ndarray,
    features: np.ndarray,
    groups: list[np.ndarray],
    gamma: float,
    tile_size: int,
    n_jobs: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Numerator ``Σ_{i∈β} (c_i − o_i) k(x_j, x_i)`` and denominator ``Σ_{i∈β} k(x_j, x_i)``.

    One :func:`kernel_matmul` per bin with ``V = [c − o, 1]`` (paper eq. 4, both sums at once).
    """
    n = residual.shape[0]
    sums = np.empty((n, 2))
    V = np.column_stack([residual, np.ones(n)])
    for rows in groups:
        points = features[rows]
        sums[rows] = kernel_matmul(points, points, V[rows], gamma, kind="laplacian",
                                   tile_size=tile_size, n_jobs=n_jobs)
    return sums[:, 0], sums[:, 1]


# --------------------------------------------------------------------------- LCE and MLCE


@dataclass(frozen=True)
class _Prepared:
    """Validated inputs shared by every γ of a curve."""

    residual: np.ndarray  # c − o
    features: np.ndarray
    groups: list[np.ndarray]

    @property
    def bin_sizes(self) -> np.ndarray:
        return np.array([rows.size for rows in self.groups])


def _prepare(conf: ArrayLike, correct: ArrayLike, features: ArrayLike, n_bins: int) -> _Prepared:
    c, o = check_vectors(conf, correct)
    x = check_features(features, c.shape[0])
    bins = confidence_bins(c, n_bins)
    return _Prepared(c - o, x, _bin_groups(bins))


def _sweep_signed(data: _Prepared, gammas: Sequence[float],
                  progress: Callable[[float, str], None] | None = None) -> np.ndarray:
    """Signed eq. 4 at every γ by the sweep: ``(len(gammas), n)``. The weights ``c − o + 1``
    and ``1`` are non-negative; the numerator is their difference. The confidence bins are
    independent, so they are shared out among this machine's threads, largest first."""
    n = data.residual.shape[0]
    out = np.empty((len(gammas), n))
    done = [0]

    def sweep(rows: np.ndarray) -> None:
        weights = np.vstack([data.residual[rows] + 1.0, np.ones(rows.size)])
        sums = sweep_sums_bin(data.features[rows], weights, gammas)
        out[:, rows] = (sums[:, 0] - sums[:, 1]) / sums[:, 1]
        done[0] += rows.size

    def tick() -> None:
        if progress is not None:
            progress(done[0] / n, f"exact sweep at {len(gammas)} bandwidth(s): "
                                  f"{done[0]:,} of {n:,} rows")

    in_threads(sweep, sorted(data.groups, key=len, reverse=True), tick=tick)
    return np.clip(out, -1.0, 1.0)


def _signed_lce(
    data: _Prepared,
    gamma: float,
    plan: LceMethod,
    tile_size: int,
    n_jobs: int | None,
) -> np.ndarray:
    """Signed eq. 4 (``numerator / denominator``), clipped to [−1, 1] against round-off."""
    if plan.name == "sweep":
        return _sweep_signed(data, [gamma])[0]
    if plan.name == "binned":
        num, den = binned_sums(data.residual, data.features, data.groups, gamma,
                                plan.grid_size)
    else:
        num, den = _exact_sums(data.residual, data.features, data.groups, gamma, tile_size,
                               n_jobs)
    return np.clip(num / den, -1.0, 1.0)


@dataclass(frozen=True)
class LceResult:
    """LCE values (eq. 4) with the computation that produced them.

    Attributes
    ----------
    values : ndarray
        LCE of every row, signed or absolute, as asked.
    gamma : float
        The bandwidth γ.
    signed : bool
        Whether the values are signed.
    method : LceMethod
        The computation that ran.
    """

    values: np.ndarray  # (n,) signed or absolute, as asked
    gamma: float
    signed: bool
    method: LceMethod


def lce_result(
    conf: ArrayLike,
    correct: ArrayLike,
    features: ArrayLike,
    gamma: float,
    n_bins: int = 15,
    signed: bool = False,
    method: str = "auto",
    grid_size: int | None = None,
    tile_size: int = LCE_TILE,
    n_jobs: int | None = None,
) -> LceResult:
    """:func:`lce` with the :class:`LceMethod` that ran (for a caption: which computation,
    its error bound, and what the exact one would cost).

    Parameters
    ----------
    conf, correct, features, gamma, n_bins, signed, method, grid_size, tile_size, n_jobs
        As :func:`lce`.

    Returns
    -------
    LceResult
    """
    data = _prepare(conf, correct, features, n_bins)
    g = check_gamma(gamma, data.features.shape[1])
    if grid_size is not None:
        grid_size = check_count("grid_size", grid_size, 2)
    plan = plan_method(data.features, g, method, grid_size, n_bins, data.bin_sizes)
    values = _signed_lce(data, g, plan, check_count("tile_size", tile_size, 1),
                         _check_n_jobs(n_jobs))
    return LceResult(values if signed else np.abs(values), g, bool(signed), plan)


def lce(
    conf: ArrayLike,
    correct: ArrayLike,
    features: ArrayLike,
    gamma: float,
    n_bins: int = 15,
    signed: bool = False,
    method: str = "auto",
    grid_size: int | None = None,
    tile_size: int = LCE_TILE,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Local calibration error of every prediction (Luo et al., eq. 4).

    ::

        LCE_γ(x_j) = | Σ_{i∈β(x_j)} (c_i − o_i) k_γ(x_j, x_i) / Σ_{i∈β(x_j)} k_γ(x_j, x_i) |
        k_γ(a, b) = exp(−‖a − b‖₁ / (d·γ))

    ``β(x_j)`` are the predictions in the same of ``n_bins`` equal-width confidence bins as
    ``x_j`` (right-closed, as :func:`core.metrics.bin_indices`), ``x_j`` itself included.

    Parameters
    ----------
    conf
        ``(n,)`` top-label confidences ``c_i`` in [0, 1].
    correct
        ``(n,)`` 1 if the prediction was right, 0 if wrong (``o_i``). Both come from
        ``core.metrics.binned.confidence_outcome(probs, y, "top-label")``.
    features
        ``(n, d)`` feature embedding ``φ(x_i)`` (e.g. t-SNE or PCA coordinates).
    gamma
        kernel bandwidth γ > 0; ``numpy.inf`` gives the γ → ∞ limit (the bin's gap).
    n_bins
        number of equal-width confidence bins (15 in the paper).
    signed
        return ``Σ(c − o)k / Σk`` without the absolute value — confidence minus
        accuracy, so positive means over-confident and negative under-confident.
    method
        ``"exact"`` (the cheaper of ``"pairs"``, the tile engine, and ``"sweep"``, exact in
        O(n log² n) for 1-D and 2-D features), ``"binned"`` (grid approximation, 2-D
        features, error at most :func:`~core.local.lce_grid.binned_error_bound`) or ``"auto"``
        (:func:`plan_method`; :func:`lce_result` reports which ran).
    grid_size
        grid nodes per axis of the binned approximation (default
        :data:`~core.local.lce_grid.DEFAULT_GRID`; ``"auto"`` picks its own from
        :data:`~core.local.lce_plan.AUTO_GRIDS`).
    tile_size
        tile edge of the exact method's :func:`core.kernels.tiles.kernel_matmul`.
    n_jobs
        worker threads of the exact method (``None``: the tile engine's default).

    Returns
    -------
    ``(n,)`` float64, in [0, 1] (signed: in [−1, 1]).
    """
    return lce_result(conf, correct, features, gamma, n_bins, signed, method, grid_size,
                      tile_size, n_jobs).values


def mlce(
    conf: ArrayLike,
    correct: ArrayLike,
    features: ArrayLike,
    gamma: float,
    n_bins: int = 15,
    method: str = "auto",
    grid_size: int | None = None,
    tile_size: int = LCE_TILE,
    n_jobs: int | None = None,
) -> float:
    """Maximum local calibration error, ``MLCE_γ = max_j LCE_γ(x_j)`` (Luo et al., eq. 5).

    Tends to the binned MCE with the same bins as γ → ∞ (Lemma 1) and to
    ``max_j |c_j − o_j|`` as γ → 0. Arguments as :func:`lce`.

    Parameters
    ----------
    conf, correct, features, gamma, n_bins, method, grid_size, tile_size, n_jobs
        As :func:`lce`.

    Returns
    -------
    float
        ``MLCE_γ``, in [0, 1].
    """
    return float(np.max(lce(conf, correct, features, gamma, n_bins, False, method, grid_size,
                            tile_size, n_jobs)))


def _check_gammas(gammas: ArrayLike, d: int) -> np.ndarray:
    try:
        g = np.atleast_1d(np.asarray(gammas, dtype=np.float64))
    except (TypeError, ValueError) as err:
        raise ValueError("gammas must be a list of positive bandwidths.") from err
    if g.ndim != 1 or g.size == 0:
        raise ValueError("gammas must be a non-empty list of bandwidths.")
    return np.array([check_gamma(value, d) for value in g])


def mlce_curve(
    conf: ArrayLike,
    correct: ArrayLike,
    features: ArrayLike,
    gammas: ArrayLike,
    n_bins: int = 15,
    method: str = "auto",
    grid_size: int | None = None,
    tile_size: int = LCE_TILE,
    n_jobs: int | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> pd.DataFrame:
    """MLCE (eq. 5) and mean LCE (eq. 4) over a grid of bandwidths (Luo et al., Fig. 1, 3).

    Returns one row per γ in the given order: ``gamma``, ``mlce`` = ``max_j LCE_γ(x_j)``,
    ``mean_lce`` = ``(1/n) Σ_j LCE_γ(x_j)``, ``method`` (which computation ran at that γ:
    ``"pairs"``, ``"sweep"`` or ``"binned"``; under ``"auto"`` it depends on γ through the
    binned error bound) and ``error_bound`` (its worst-case ``|LCE − exact|``, which bounds
    the error of both the MLCE and the mean; 0 for the exact methods). The γ values that
    the sweep computes share one layout per confidence bin. ``progress(fraction, message)``
    is called before each γ.

    Parameters
    ----------
    conf : array_like
        ``(n,)`` top-label confidences.
    correct : array_like
        ``(n,)`` 1 where the prediction was right, else 0.
    features : array_like
        ``(n, d)`` the embedding the kernel acts on.
    gammas : array_like
        The bandwidths γ.
    n_bins : int, default 15
        Equal-width confidence bins.
    method : {"auto", "exact", "pairs", "sweep", "binned"}
        The computation (as :func:`lce`).
    grid_size : int, optional
        Grid nodes per axis of ``"binned"``.
    tile_size : int, default 256
        Tile edge of the exact pairs.
    n_jobs : int, optional
        Threads (default: the engine's).
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    pandas.DataFrame
    """
    data = _prepare(conf, correct, features, n_bins)
    if grid_size is not None:
        grid_size = check_count("grid_size", grid_size, 2)
    tile_size = check_count("tile_size", tile_size, 1)
    n_jobs = _check_n_jobs(n_jobs)
    checked = _check_gammas(gammas, data.features.shape[1])
    plans = plan_methods(data.features, checked, method, grid_size, n_bins, data.bin_sizes)
    sweep = [k for k, plan in enumerate(plans) if plan.name == "sweep"]
    values: dict[int, np.ndarray] = {}
    if sweep:
        share = len(sweep) / len(plans)
        report = None if progress is None else \
            (lambda f, m: progress(share * f, f"MLCE over γ: {m}"))
        values.update(zip(sweep, np.abs(_sweep_signed(data, [checked[k] for k in sweep],
                                                      report)), strict=True))
    grids: dict[int, list[int]] = {}  # the binned γ by grid: one deposit per bin and grid
    for k, plan in enumerate(plans):
        if plan.name == "binned":
            grids.setdefault(plan.grid_size, []).append(k)
    for size, ks in grids.items():
        if progress is not None:
            progress(len(values) / len(plans), f"MLCE over γ: {len(ks)} bandwidth(s) on a "
                                               f"{size} × {size} grid…")
        sums = binned_sums_over(data.residual, data.features, data.groups,
                                [checked[k] for k in ks], size)
        for k, (num, den) in zip(ks, sums, strict=True):
            values[k] = np.abs(np.clip(num / den, -1.0, 1.0))  # as _signed_lce
    rest = [k for k in range(len(plans)) if k not in values]
    for done, k in enumerate(rest, start=len(values)):
        if progress is not None:
            progress(done / len(plans),
                     f"MLCE over γ: γ = {checked[k]:.3g} ({plans[k].name})…")
        values[k] = np.abs(_signed_lce(data, checked[k], plans[k], tile_size, n_jobs))
    rows = [{"gamma": g, "mlce": float(values[k].max()), "mean_lce": float(values[k].mean()),
             "method": plans[k].name, "error_bound": plans[k].error_bound}
            for k, g in enumerate(checked)]
    return pd.DataFrame(rows, columns=["gamma", "mlce", "mean_lce", "method", "error_bound"])

