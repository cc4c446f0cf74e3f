"""Which LCE method to run (:mod:`core.local.lce_estimate`): the pair sums, the exact sweep or
the binned grid, from the data size, the feature dimension, γ and fixed per-operation costs
(:data:`PAIR_SECONDS` …, measured once by ``python -m benchmarks.lce calibrate``, never in the
process: the same data and settings always get the same method, so a reported MLCE never
depends on the machine's momentary speed); ``"auto"`` takes the grid only where its
worst-case error bound is at most :data:`AUTO_MAX_ERROR`, and each plan says why it chose what
it did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from core.data.validation import check_choice, check_count
from core.local.lce_grid import (
    DEFAULT_GRID,
    binned_dimension_message,
    error_bound_of_span,
)
from core.local.lce_inputs import check_features, check_gamma

METHODS = ("auto", "exact", "binned", "pairs", "sweep")
#: ``method="auto"`` keeps the exact pair sums while they take at most this many seconds per γ…
AUTO_SECONDS = 1.0
#: …above, it uses a grid of :data:`AUTO_GRIDS` nodes per axis (2-D features) whose worst-case
#: error (:func:`binned_error_bound`) is at most this, when that is cheaper than the sweep.
AUTO_MAX_ERROR = 0.05
AUTO_GRIDS = (256, 512, 1024)
#: Seconds on this two-core machine, both threads working, per pair of the tile engine's pair
#: sums (d = 2, two weight columns), per row·level of the exact sweep at one γ (its
#: γ-free layout included; ⌈log₂ n_b⌉ levels in a bin of n_b rows), and per row and per grid
#: cell·bin of the binned grid: ``python -m benchmarks.lce calibrate`` measured 4.1–5.6e-9,
#: 2.7–3.2e-7, 6.9–7.4e-7 and 5.3e-8 (two runs, load average 5.0–5.4). The plan is fixed by
#: them, not re-measured: the choice between the grid and the sweep at a γ where the two cost
#: about the same (γ ≈ 0.2 on 10⁵ rows) once followed the process's momentary speed, and the
#: reported MLCE with it.
PAIR_SECONDS, SWEEP_SECONDS, BINNED_ROW_SECONDS, BINNED_CELL_SECONDS = (
    5e-9, 3e-7, 7e-7, 5e-8)


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
    only, about 1e-12); ``seconds`` the estimated time on the two-core machine of the fixed costs
    (:data:`PAIR_SECONDS` …); ``exact_seconds`` that
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


def _seconds(value: float) -> str:
    """``"0.43 s"``, ``"7.5 s"``, ``"1,234 s"``: an estimate for a plan's reason."""
    return f"{value:.2g} s" if value < 10 else f"{value:,.0f} s"


def _levels(n: int) -> int:
    return max(1, int(np.ceil(np.log2(max(n, 2)))))


def plan_method(features: ArrayLike, gamma: float, method: str = "auto",
                grid_size: int | None = None, n_bins: int = 15,
                bin_sizes: ArrayLike | None = None) -> LceMethod:
    """The computation :func:`lce` runs at ``gamma``, with its cost and error bound.

    * ``"pairs"`` — the exact double sum, O(Σ_b n_b²) (any d);
    * ``"sweep"`` — exact, O(n log² n) (d ≤ 2; see ``core.local.lce_sweep.sweep_sums_bin``);
    * ``"exact"`` — the cheaper of the two exact algorithms;
    * ``"binned"`` — the grid approximation (d = 2), error at most
      ``core.local.lce_grid.binned_error_bound``;
    * ``"auto"`` — ``"pairs"`` while its estimated time is at most :data:`AUTO_SECONDS`
      (small data: unchanged results); above that, for 2-D features the smallest grid of
      :data:`AUTO_GRIDS` whose bound is at most :data:`AUTO_MAX_ERROR` when it is cheaper
      than the sweep, else the cheaper exact algorithm.

    Times are estimated from the fixed per-operation costs :data:`PAIR_SECONDS`,
    :data:`SWEEP_SECONDS`, :data:`BINNED_ROW_SECONDS` and :data:`BINNED_CELL_SECONDS`, so
    the plan is a function of the data and the settings alone; the exact
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
    return plan_methods(features, [gamma], method, grid_size, n_bins, bin_sizes)[0]


def plan_methods(features: ArrayLike, gammas: Sequence[float], method: str = "auto",
                 grid_size: int | None = None, n_bins: int = 15,
                 bin_sizes: ArrayLike | None = None) -> list[LceMethod]:
    """:func:`plan_method` at every γ of ``gammas`` (an MLCE curve), the features checked
    and their range taken once.

    Parameters
    ----------
    features, method, grid_size, n_bins, bin_sizes
        As :func:`plan_method`.
    gammas : sequence of float
        The bandwidths γ.

    Returns
    -------
    list of LceMethod
        One plan per γ, in order.
    """
    method = _check_method(method)
    x = check_features(features)
    n, d = x.shape
    n_bins = check_count("n_bins", n_bins, 1)
    sizes = np.array([n]) if bin_sizes is None else np.asarray(bin_sizes, dtype=np.float64)
    pairs_s = PAIR_SECONDS * float(np.sum(sizes**2))
    # d = 2: O(1) passes per row and level; d = 1: about half a level's work per row
    sweep_s = SWEEP_SECONDS * float(sum(s * (_levels(s) if d == 2 else 0.5) for s in sizes))
    exact_s = pairs_s if d > 2 else min(pairs_s, sweep_s)
    if method in ("binned", "sweep") and (d != 2 if method == "binned" else d > 2):
        raise ValueError(binned_dimension_message(d) if method == "binned" else
                         f"The sweep computes the LCE on 1-D or 2-D features; these have {d}. "
                         "Use method='exact'.")

    span = np.ptp(x, axis=0) if d == 2 else None  # the binned grid's bound needs only this

    def binned(g: float, size: int, reason: str) -> LceMethod:
        seconds = (BINNED_ROW_SECONDS * n
                   + BINNED_CELL_SECONDS * np.count_nonzero(sizes) * size**2)
        return LceMethod("binned", size, error_bound_of_span(span, g, size, n_bins), seconds,
                         exact_s, reason)

    def exact(reason: str) -> LceMethod:
        name = "pairs" if d > 2 or pairs_s <= sweep_s else "sweep"
        return LceMethod(name, None, 0.0, exact_s, exact_s, reason)

    def plan(gamma: float) -> LceMethod:
        g = check_gamma(gamma, d)
        if method == "binned":
            return binned(g, grid_size or DEFAULT_GRID, "as asked")
        if method == "pairs":
            return LceMethod("pairs", None, 0.0, pairs_s, exact_s, "as asked")
        if method == "sweep":
            return LceMethod("sweep", None, 0.0, sweep_s, exact_s, "as asked")
        if method == "exact":
            return exact("as asked")
        if pairs_s <= AUTO_SECONDS or d > 2:
            return LceMethod("pairs", None, 0.0, pairs_s, exact_s,
                             f"the exact sums take about {_seconds(pairs_s)} here")
        if d == 2:
            for size in AUTO_GRIDS:
                if error_bound_of_span(span, g, size, n_bins) <= AUTO_MAX_ERROR:
                    candidate = binned(g, size, "")
                    if candidate.seconds < exact_s:
                        return replace(candidate, reason=(
                            f"the exact LCE would take about {_seconds(exact_s)} here; the "
                            f"grid's worst-case error is at most {candidate.error_bound:.2g}"))
                    return exact(f"the exact sweep (about {_seconds(exact_s)} here) is cheaper "
                                 f"than the smallest grid within {AUTO_MAX_ERROR:g} at "
                                 f"γ = {g:g} ({size} × {size}, about "
                                 f"{_seconds(candidate.seconds)})")
        return exact(f"no grid of up to {AUTO_GRIDS[-1]} nodes per axis is within "
                     f"{AUTO_MAX_ERROR:g} at γ = {g:g}" if d == 2 else "1-D features")

    return [plan(gamma) for gamma in gammas]


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

