"""Which LCE method to run (:mod:`core.local.lce_estimate`): the pair sums, the exact sweep or
the binned grid, from the data size, the feature dimension, γ and measured speeds of this
machine; ``"auto"`` takes the grid only where its worst-case error bound is at most
:data:`AUTO_MAX_ERROR`, and each plan says why it chose what it did.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from core.data.validation import check_choice, check_count
from core.kernels.engine import whole_machine
from core.kernels.tiles import kernel_matmul
from core.local.lce_grid import (
    DEFAULT_GRID,
    binned_dimension_message,
    binned_sums,
    error_bound_of_span,
)
from core.local.lce_inputs import LCE_TILE, check_features, check_gamma
from core.local.lce_sweep import sweep_sums_bin

METHODS = ("auto", "exact", "binned", "pairs", "sweep")
#: ``method="auto"`` keeps the exact pair sums while they take at most this many seconds per γ…
AUTO_SECONDS = 1.0
#: …above, it uses a grid of :data:`AUTO_GRIDS` nodes per axis (2-D features) whose worst-case
#: error (:func:`binned_error_bound`) is at most this, when that is cheaper than the sweep.
AUTO_MAX_ERROR = 0.05
AUTO_GRIDS = (256, 512, 1024)


def _check_method(method: str) -> str:
    return check_choice(method, METHODS, "method",
                        "choose 'auto', 'exact', 'binned', 'pairs' or 'sweep'")


# --------------------------------------------------------------------------- choosing a method


@dataclass(frozen=True)
class LceMethod:
    """How the LCE at one γ is computed, and what that costs and guarantees.

    ``name`` is ``"pairs"`` (the tile engine's exact double sum), ``"sweep"`` (exact, the
    dominance-sum sweep, 1-D and 2-D features) or ``"binned"`` (grid approximation, 2-D);
    ``error_bound`` the worst-case ``|LCE − exact LCE|`` (0 for the exact methods: rounding
    only, about 1e-12); ``seconds`` the estimated time on this machine; ``exact_seconds`` that
    of the cheapest exact method (what "compute exactly" would cost); ``reason`` why it was
    chosen.
    """

    name: str
    grid_size: int | None
    error_bound: float
    seconds: float
    exact_seconds: float
    reason: str

    @property
    def exact(self) -> bool:
        return self.name != "binned"

    def describe(self) -> str:
        """One phrase for a caption, e.g. ``binned approximation (1024 × 1024 grid),
        |error| ≤ 0.0079``."""
        if self.exact:
            return f"exact ({'dominance-sum sweep' if self.name == 'sweep' else 'pair sums'})"
        return (f"binned approximation ({self.grid_size} × {self.grid_size} grid), "
                f"|error| ≤ {self.error_bound:.2g}")


@functools.cache
def _speeds() -> tuple[float, float, float]:
    """Seconds per pair (tile engine, d = 2), per row·level (sweep, logarithmic path) and per
    row-or-cell (binned), measured once per process on small problems (about 0.1 s), with
    the whole machine's threads (:func:`~core.kernels.engine.whole_machine`)."""
    with whole_machine():
        return _measure_speeds()


def _measure_speeds() -> tuple[float, float, float]:
    rng = np.random.default_rng(0)
    points = rng.random((4096, 2))
    weights = np.vstack([rng.random(4096) * 2, np.ones(4096)])
    v = np.column_stack([weights[0] - 1, weights[1]])
    kernel_matmul(points[:512], points[:512], v[:512], 0.1, kind="laplacian")  # warm-up
    start = time.perf_counter()
    kernel_matmul(points[:2048], points[:2048], v[:2048], 0.1, kind="laplacian",
                  tile_size=LCE_TILE)
    pair = (time.perf_counter() - start) / 2048**2
    start = time.perf_counter()
    sweep_sums_bin(points, weights, [1e-4])
    sweep = (time.perf_counter() - start) / (4096 * 12)
    groups = [np.arange(4096)]
    start = time.perf_counter()
    binned_sums(v[:, 0], points, groups, 0.1, 256)
    binned = (time.perf_counter() - start) / (4096 + 256**2)
    return pair, sweep, binned


def _levels(n: int) -> int:
    return max(1, int(np.ceil(np.log2(max(n, 2)))))


def plan_method(features: ArrayLike, gamma: float, method: str = "auto",
                grid_size: int | None = None, n_bins: int = 15,
                bin_sizes: ArrayLike | None = None) -> LceMethod:
    """The computation :func:`lce` runs at ``gamma``, with its cost and error bound.

    * ``"pairs"`` — the exact double sum, O(Σ_b n_b²) (any d);
    * ``"sweep"`` — exact, O(n log² n) (d ≤ 2; see :func:`sweep_sums_bin`);
    * ``"exact"`` — the cheaper of the two exact algorithms;
    * ``"binned"`` — the grid approximation (d = 2), error at most
      ``core.local.lce_grid.binned_error_bound``;
    * ``"auto"`` — ``"pairs"`` while its estimated time is at most :data:`AUTO_SECONDS`
      (small data: unchanged results); above that, for 2-D features the smallest grid of
      :data:`AUTO_GRIDS` whose bound is at most :data:`AUTO_MAX_ERROR` when it is cheaper
      than the sweep, else the cheaper exact algorithm.

    Times are estimated from speeds measured once per process (:func:`_speeds`); the exact
    pair cost uses the confidence-bin sizes ``bin_sizes`` when given (else one bin of all
    rows, an upper bound). ``grid_size`` fixes the grid of ``"binned"`` (default
    :data:`DEFAULT_GRID`); ``"auto"`` chooses its own.

    Parameters
    ----------
    features : array_like
        The (standardised) coordinates of the rows.
    gamma : float
        The bandwidth γ.
    method : str, default "auto"
        One of :data:`METHODS`.
    grid_size : int, optional
        Cells per axis of the binned grid (default: chosen for the error).
    n_bins : int, default 15
        Confidence bins.
    bin_sizes : array_like, optional
        Rows per non-empty confidence bin (for the cost).
    """
    method = _check_method(method)
    x = check_features(features)
    n, d = x.shape
    g = check_gamma(gamma, d)
    n_bins = check_count("n_bins", n_bins, 1)
    sizes = np.array([n]) if bin_sizes is None else np.asarray(bin_sizes, dtype=np.float64)
    pair_speed, sweep_speed, binned_speed = _speeds()
    pairs_s = pair_speed * float(np.sum(sizes**2))
    # d = 2: O(1) passes per row and level; d = 1: about half a level's work per row
    sweep_s = sweep_speed * float(sum(s * (_levels(s) if d == 2 else 0.5) for s in sizes))
    exact_s = pairs_s if d > 2 else min(pairs_s, sweep_s)
    if method in ("binned", "sweep") and (d != 2 if method == "binned" else d > 2):
        raise ValueError(binned_dimension_message(d) if method == "binned" else
                         f"The sweep computes the LCE on 1-D or 2-D features; these have {d}. "
                         "Use method='exact'.")

    span = np.ptp(x, axis=0) if d == 2 else None  # the binned grid's bound needs only this

    def binned(size: int, reason: str) -> LceMethod:
        seconds = binned_speed * (n + np.count_nonzero(sizes) * size**2)
        return LceMethod("binned", size, error_bound_of_span(span, g, size, n_bins), seconds,
                         exact_s, reason)

    def exact(reason: str) -> LceMethod:
        name = "pairs" if d > 2 or pairs_s <= sweep_s else "sweep"
        return LceMethod(name, None, 0.0, exact_s, exact_s, reason)

    if method == "binned":
        return binned(grid_size or DEFAULT_GRID, "as asked")
    if method == "pairs":
        return LceMethod("pairs", None, 0.0, pairs_s, exact_s, "as asked")
    if method == "sweep":
        return LceMethod("sweep", None, 0.0, sweep_s, exact_s, "as asked")
    if method == "exact":
        return exact("as asked")
    if pairs_s <= AUTO_SECONDS or d > 2:
        return LceMethod("pairs", None, 0.0, pairs_s, exact_s,
                         f"the exact sums take about {pairs_s:.1g} s here")
    if d == 2:
        for size in AUTO_GRIDS:
            if error_bound_of_span(span, g, size, n_bins) <= AUTO_MAX_ERROR:
                candidate = binned(size, "")
                if candidate.seconds < exact_s:
                    return replace(candidate, reason=(
                        f"the exact LCE would take about {exact_s:,.0f} s here; the grid's "
                        f"worst-case error is at most {candidate.error_bound:.2g}"))
                break
    return exact(f"no grid of up to {AUTO_GRIDS[-1]} nodes per axis is within "
                 f"{AUTO_MAX_ERROR:g} at γ = {g:g}" if d == 2 else "1-D features")


def choose_method(
    features: ArrayLike,
    gamma: float,
    method: str = "auto",
    grid_size: int = DEFAULT_GRID,
    n_bins: int = 15,
) -> str:
    """The name of the method :func:`plan_method` picks (``"pairs"``, ``"sweep"`` or
    ``"binned"``), with all rows counted as one confidence bin."""
    return plan_method(features, gamma, method, grid_size, n_bins).name

