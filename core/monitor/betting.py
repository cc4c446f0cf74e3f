"""The machinery of anytime-valid monitoring: wealth of betting martingales, mixed over a
grid of bets, and the empirical-Bernstein uniform boundary of confidence sequences.

**Testing by betting** (Shafer 2021; Waudby-Smith & Ramdas 2024, §4). Let
``x_t ∈ [−1, 1]`` be an increment whose conditional mean given the past is 0 under the null
(for calibration, ``x_t = y_t − p_t`` with ``E[y_t | past, p_t] = p_t``). For a bet
``λ ∈ (−1, 1)`` fixed in advance (or chosen from the past: *predictable*),

    K_t(λ) = ∏_{s ≤ t} (1 + λ x_s)

is a nonnegative martingale with ``K_0 = 1``: ``E[1 + λ x_t | past] = 1``. A mixture
``K_t = Σ_j w_j K_t(λ_j)`` with weights ``w_j ≥ 0`` summing to 1 is one too (an average of
martingales on the same filtration). Ville's inequality then gives
``P(∃t: K_t ≥ 1/α) ≤ α`` — the type-I error holds however often ``K_t`` is looked at and
for any stopping rule. When the conditional mean is ≤ 0 only (a one-sided null) and every
``λ_j ≥ 0``, ``K_t`` is a supermartingale and the same bound holds.

The grid is :func:`bet_grid`: ``λ_j = ± λ_max 2^{−j/2}``, ``j = 0 … 15``, so the mixture
holds a bet near the growth-optimal ``λ* ≈ E x / Var x`` for every gap from about 0.003 to
0.5 in units of the increments' variance, and pays at most ``log 32 ≈ 3.5`` nats for not
knowing which.
"""

from __future__ import annotations

import numpy as np
from scipy.special import zeta

#: The largest bet, a fraction of the wealth staked per row (Waudby-Smith & Ramdas use 1/2).
LAMBDA_MAX = 0.5
#: Bets of the grid on each side: λ_max, λ_max/√2, …, λ_max 2^(−15/2) ≈ 0.003.
GRID_SIZE = 16


def bet_grid(two_sided: bool = True) -> np.ndarray:
    """The bets ``λ_j = ±LAMBDA_MAX · 2^{−j/2}``, ``j = 0 … GRID_SIZE − 1`` (the positive
    ones only when ``two_sided`` is False)."""
    positive = LAMBDA_MAX * 2.0 ** (-np.arange(GRID_SIZE) / 2.0)
    return np.concatenate([positive, -positive]) if two_sided else positive


class MixtureWealth:
    """A mixture martingale read batch by batch: each arm's ``log ∏_{s ≤ t} (1 + λ_j x_s)``
    so far is carried to the next batch.

    ``K_t = w_0 + (1 − w_0) · mean_j ∏_{s ≤ t} (1 + λ_j x_s)`` with ``w_0 = null_weight`` on
    the bet λ = 0 (wealth held back, which keeps ``K_t ≥ w_0``). Each arm is computed in log
    space (``log1p`` of each factor, a cumulative sum that starts from the arm's carried log
    wealth, a running log-sum-exp over the arms), so memory is O(rows of the batch) whatever
    the grid, and the rows read in batches give the same numbers, bit for bit, as read at
    once (the cumulative sum adds the same terms in the same order).

    Parameters
    ----------
    bets : numpy.ndarray
        The grid of constant bets, each in (−1, 1).
    null_weight : float
        Mass of the bet 0, in [0, 1).
    """

    def __init__(self, bets: np.ndarray, null_weight: float = 0.0) -> None:
        self.bets = np.asarray(bets, dtype=np.float64)
        self.null_weight = float(null_weight)
        self.arms = np.zeros(self.bets.shape[0])

    def update(self, x: np.ndarray) -> np.ndarray:
        """``log K_t`` after each row of the batch ``x`` (increments in [−1, 1], in time
        order), the arms' wealth carried from the batches before."""
        total = np.full(x.shape[0], -np.inf)
        if x.shape[0] == 0:
            return total
        for j, bet in enumerate(self.bets):
            steps = np.log1p(bet * x)
            steps[0] += self.arms[j]
            np.cumsum(steps, out=steps)
            self.arms[j] = steps[-1]
            np.logaddexp(total, steps, out=total)
        total += np.log1p(-self.null_weight) - np.log(self.bets.shape[0])
        if self.null_weight > 0:
            np.logaddexp(total, np.log(self.null_weight), out=total)
        return total


def log_mixture_wealth(x: np.ndarray, bets: np.ndarray, null_weight: float = 0.0) -> np.ndarray:
    """``log K_t`` of the mixture martingale after every row, ``t = 1 … n``
    (:class:`MixtureWealth` read once).

    Parameters
    ----------
    x : numpy.ndarray
        Increments in [−1, 1], in time order.
    bets : numpy.ndarray
        The grid of constant bets, each in (−1, 1).
    null_weight : float
        Mass of the bet 0, in [0, 1).

    Returns
    -------
    numpy.ndarray
        ``log K_t`` for ``t = 1 … n`` (float64, length n).
    """
    return MixtureWealth(bets, null_weight).update(x)


class HeldSeries:
    """A series that moves on some rows of a stream and is held on the others, carried
    across batches: a cell's (a bin's, a group's) wealth at every row of the stream.

    Built as ``cumsum`` of the series' steps placed at its own rows (0 elsewhere); the last
    value on its rows and the running total are carried, so batches give the numbers of one
    pass, bit for bit."""

    def __init__(self) -> None:
        self.last = 0.0
        self.total = 0.0

    def spread(self, values: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
        """The series at each of the batch's ``n`` rows, given its ``values`` at the batch's
        ``rows`` (indices, increasing)."""
        steps = np.zeros(n)
        if values.shape[0]:
            steps[rows] = np.diff(values, prepend=self.last)
            self.last = float(values[-1])
        if n:
            steps[0] += self.total
            np.cumsum(steps, out=steps)
            self.total = float(steps[-1])
        return steps


class CellWealth:
    """Each cell's mixture martingale, betting only on its own rows, at every row of a
    stream read batch by batch.

    ``cells[t]`` (a bin of ``p_t`` or a group) must be known before ``y_t`` is; the wealth of
    cell k stays constant on the rows of other cells (:class:`HeldSeries`).
    """

    def __init__(self, n_cells: int, bets: np.ndarray, null_weight: float = 0.0) -> None:
        self.mixtures = [MixtureWealth(bets, null_weight) for _ in range(n_cells)]
        self.held = [HeldSeries() for _ in range(n_cells)]

    def update(self, x: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """``(n_cells, rows)`` log-wealth of each cell after each row of the batch (0 before
        a cell's first row)."""
        out = np.zeros((len(self.mixtures), x.shape[0]))
        for cell, (mixture, held) in enumerate(zip(self.mixtures, self.held, strict=True)):
            rows = np.flatnonzero(cells == cell)
            if rows.size == 0 and held.total == 0.0:
                continue
            out[cell] = held.spread(mixture.update(x[rows]), rows, x.shape[0])
        return out


def stitching_boundary(v: np.ndarray, alpha: float, scale: float, v_min: float = 10.0,
                       s: float = 1.4, eta: float = 2.0) -> np.ndarray:
    """The polynomial stitched uniform boundary of Howard et al. (2021, Ann. Statist., eq.
    (10)) for a sub-exponential process with variance process ``v`` and scale ``scale``.

        S_α(v) = √(k₁² v ℓ(v) + k₂² c² ℓ(v)²) + k₂ c ℓ(v),
        ℓ(v) = s log log(η v / m) + log(ζ(s) / (α log^s η)),
        k₁ = (η^{1/4} + η^{−1/4}) / √2,  k₂ = (√η + 1) / 2,

    with ``v`` floored at ``m = v_min``. ``P(∃t: S_t ≥ S_α(V_t)) ≤ α`` for a sum ``S_t`` of
    centred increments that is sub-exponential with variance process ``V_t`` and scale c.

    Parameters
    ----------
    v : numpy.ndarray
        The variance process ``V_t`` at each row.
    alpha : float
        The crossing probability of this one-sided boundary.
    scale : float
        The sub-exponential scale ``c`` (the increments' range ``b − a``).
    v_min : float
        The intrinsic time ``m`` from which the boundary is tight.
    s, eta : float
        How the crossing probability is spread over epochs and how far apart epochs are.

    Returns
    -------
    numpy.ndarray
        ``S_α(V_t)`` at each row.
    """
    v = np.maximum(np.asarray(v, dtype=float), v_min)
    ell = s * np.log(np.log(eta * v / v_min)) + np.log(zeta(s) / (alpha * np.log(eta) ** s))
    k1 = (eta ** 0.25 + eta ** -0.25) / np.sqrt(2.0)
    k2 = (np.sqrt(eta) + 1.0) / 2.0
    term = k2 * scale * ell
    return np.sqrt(k1 ** 2 * v * ell + term ** 2) + term


#: e-values are stored up to e^700 (≈ 10^304); beyond, the float64 would overflow to inf.
MAX_LOG_E = 700.0


def e_values_of(log_e: np.ndarray) -> np.ndarray:
    """``exp(log_e)``, capped at ``exp(MAX_LOG_E)`` (evidence that large is all the same)."""
    return np.exp(np.minimum(log_e, MAX_LOG_E))


def first_crossing(log_e: np.ndarray, threshold: float) -> int | None:
    """The first row index (0-based) where ``exp(log_e) ≥ threshold``, or None."""
    hits = np.flatnonzero(log_e >= np.log(threshold) - 1e-12)
    return int(hits[0]) if hits.size else None


def anytime_p_values(log_e: np.ndarray) -> np.ndarray:
    """The anytime-valid p-value after every row, ``p_t = min(1, 1 / max_{s ≤ t} e_s)``:
    ``P(∃t: p_t ≤ α) ≤ α`` under the null (Ville)."""
    return np.minimum(1.0, np.exp(-np.maximum.accumulate(log_e)))
