"""Marginal p-values of many sums of independent Bernoulli outcomes (Poisson-binomial tails).

Under the consistency null of a calibrated model (labels ``ỹ_i ~ Bernoulli(p_i)``, independent
given the predictions) the count ``S_k = Σ_{i ∈ S_k} ỹ_i`` of a slice of rows follows the
Poisson-binomial distribution of its ``p_i``, with mean ``μ_k = Σ p_i`` and variance
``V_k = Σ p_i(1 − p_i)``. The two-sided p-value of an observed count ``s`` for the standardised
statistic ``|S − μ|/√V`` is

    p = P(S ≥ μ + |s − μ|) + P(S ≤ μ − |s − μ|),

the probability that consistency resampling gives a statistic at least as extreme — what
``B → ∞`` resamples would estimate, without their ``1/(1 + B)`` resolution, which the
Benjamini–Hochberg procedure over hundreds of slices needs (its smallest threshold is α/K).

Each tail is the **saddlepoint approximation** of Lugannani & Rice (1980) with Daniels' (1987)
second continuity correction for a lattice variable (Butler 2007, *Saddlepoint
Approximations with Applications*, §1.2.5): for an integer t,

    P(S ≥ t) ≈ 1 − Φ(w) − φ(w)(1/w − 1/u),   K'(θ) = t − ½,
    w = sgn(θ)·√(2(θ(t − ½) − K(θ))),   u = 2 sinh(θ/2)·√K''(θ),

with the cumulant generating function ``K(θ) = Σ log(1 − p_i + p_i e^θ)``; the lower tail
``P(S ≤ t)`` uses ``t + ½`` and ``Φ(w) + φ(w)(1/w − 1/u)``. Its relative error stays at a few
per cent far into the tails, where the normal approximation of a skewed sum of rare events is
off by orders of magnitude (``tests/test_slices.py`` checks it against the exact distribution).
The saddlepoint ``θ`` of every slice is found at once by safeguarded Newton steps over the
sparse row-by-slice membership, walked in chunks of rows (the pairs of the slices being
refined are held in memory up to :data:`HELD_PAIRS`). Tails whose normal approximation
(with continuity correction) is above :data:`REFINE_BELOW` keep that approximation: they are
far from any rejection threshold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np
from scipy import sparse
from scipy.special import expit, ndtr

#: Tails whose normal approximation is at least this large are not refined.
REFINE_BELOW = 0.2
#: Predictions are held inside [EPS, 1 − EPS] in the cumulant generating function.
EPS = 1e-12
#: Data rows per chunk of the membership walk.
CHUNK_ROWS = 65_536
_NEWTON_STEPS = 60
#: (row, slice) pairs of the slices being refined held in memory (8 bytes a pair).
HELD_PAIRS = 20_000_000

Chunks = Callable[[], Iterable[tuple[int, sparse.csr_matrix]]]
Membership = sparse.spmatrix | Chunks
_THETA_BOUND = 80.0


def two_sided_p_values(membership: Membership, p: np.ndarray, counts: np.ndarray,
                       moments: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                       refine_below: float = REFINE_BELOW) -> np.ndarray:
    """``P(|S_k − μ_k| ≥ |s_k − μ_k|)`` under ``S_k = Σ_{i ∈ k} Bernoulli(p_i)`` (module doc).

    Parameters
    ----------
    membership : scipy.sparse.csr_matrix of shape (n, K), or a callable
        Row i has a stored entry in column k when data row i belongs to slice k; or a
        function returning an iterable of ``(first row, CSR rows-by-slices chunk)`` that
        covers the rows in order (a family that builds its membership chunk by chunk).
    p : array of shape (n,)
        The probability of each row's outcome under the null.
    counts : array of shape (K,)
        The observed number of outcomes in each slice.
    moments : tuple of arrays, optional
        :func:`slice_moments` of ``membership`` and ``p``, when the caller has them.
    refine_below : float
        Tails below this (normal approximation) get the saddlepoint approximation.

    Returns
    -------
    ndarray of shape (K,)
    """
    p = np.asarray(p, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    chunks = _chunked(membership)
    sizes, mean, variance = slice_moments(chunks, p) if moments is None else moments
    deviation = np.abs(counts - mean)
    upper = np.ceil(mean + deviation - 1e-7)
    lower = np.floor(mean - deviation + 1e-7)
    sd = np.sqrt(variance)
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(upper > sizes, 0.0, ndtr(-(upper - 0.5 - mean) / sd))
        low = np.where(lower < 0, 0.0, ndtr((lower + 0.5 - mean) / sd))
    degenerate = variance <= 0
    up[degenerate] = (deviation[degenerate] <= 1e-9).astype(float)
    low[degenerate] = 0.0
    wanted = [np.flatnonzero(~degenerate & (tail > 0) & (tail < refine_below))
              for tail in (up, low)]
    if any(w.size for w in wanted):
        entries = Entries(chunks, np.union1d(*wanted), counts.size)
        for tail, point, side, refine in ((up, upper, 1.0, wanted[0]),
                                          (low, lower, -1.0, wanted[1])):
            if refine.size:
                tail[refine] = saddlepoint_tails(entries, p, refine, point[refine], side,
                                                 mean[refine], variance[refine])
    return np.minimum(1.0, up + low)


def _chunked(membership: Membership) -> Chunks:
    if callable(membership):
        return membership

    def chunks() -> Iterator[tuple[int, sparse.csr_matrix]]:
        matrix = sparse.csr_matrix(membership)
        for start in range(0, matrix.shape[0], CHUNK_ROWS):
            yield start, matrix[start:start + CHUNK_ROWS]
    return chunks


def slice_moments(membership: Membership, p: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(sizes, Σ p_i, Σ p_i(1 − p_i))`` of every slice (column of ``membership``)."""
    stacked = None
    for start, chunk in _chunked(membership)():
        q = p[start:start + chunk.shape[0]]
        part = chunk.astype(bool).T.astype(np.float64) @ np.column_stack(
            [np.ones_like(q), q, q * (1.0 - q)])
        stacked = part if stacked is None else stacked + part
    return stacked[:, 0], stacked[:, 1], stacked[:, 2]


class Entries:
    """The (row, slice) pairs of the slices being solved, for repeated sums over them: held
    in memory while they number at most :data:`HELD_PAIRS`, else walked again from the
    membership each time."""

    def __init__(self, chunks: Chunks, slices: np.ndarray, n_slices: int) -> None:
        self.chunks, self.wanted = chunks, np.zeros(n_slices, dtype=bool)
        self.wanted[slices] = True
        held: list[tuple[np.ndarray, np.ndarray]] | None = []
        total = 0
        for pair in self._walk():
            total += pair[0].size
            if total > HELD_PAIRS:
                held = None
                break
            held.append(pair)
        self.held = held

    def _walk(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for start, chunk in self.chunks():
            indptr = chunk.indptr
            columns = chunk.indices[indptr[0]:indptr[-1]]
            rows = np.repeat(np.arange(start, start + chunk.shape[0], dtype=np.int32),
                             np.diff(indptr))
            keep = self.wanted[columns]
            yield rows[keep], columns[keep].astype(np.int32)

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return iter(self.held) if self.held is not None else self._walk()


def _cumulants(entries: Entries, logit_p: np.ndarray, log_q: np.ndarray,
               slot_of: np.ndarray, theta: np.ndarray, with_value: bool
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``K(θ_j)``, ``K'(θ_j)`` and ``K''(θ_j)`` of every slot j (a slice being solved; slices
    with ``slot_of`` −1 are skipped)."""
    J = theta.size
    k0, k1, k2 = np.zeros(J), np.zeros(J), np.zeros(J)
    for rows, columns in entries:
        slot = slot_of[columns]
        keep = slot >= 0
        slot, rows = slot[keep], rows[keep]
        z = logit_p[rows] + theta[slot]
        tilted = expit(z)
        k1 += np.bincount(slot, tilted, minlength=J)
        k2 += np.bincount(slot, tilted * (1.0 - tilted), minlength=J)
        if with_value:
            k0 += np.bincount(slot, np.logaddexp(0.0, z) + log_q[rows], minlength=J)
    return k0, k1, k2


def saddlepoint_tails(entries: Entries, p: np.ndarray, slices: np.ndarray,
                      points: np.ndarray, side: float, mean: np.ndarray,
                      variance: np.ndarray) -> np.ndarray:
    """``P(S_k ≥ t_k)`` (``side = 1``) or ``P(S_k ≤ t_k)`` (``side = −1``) for the slices
    ``slices`` (all among ``entries``) at the integer points ``t_k`` (module doc:
    Lugannani–Rice with Daniels' continuity correction; safeguarded Newton steps for the
    saddlepoint)."""
    q = np.clip(p, EPS, 1.0 - EPS)
    logit_p, log_q = np.log(q) - np.log1p(-q), np.log1p(-q)
    slot_of = np.full(entries.wanted.size, -1, dtype=np.int64)
    slot_of[slices] = np.arange(slices.size)
    target = points - 0.5 * side
    theta = np.clip((target - mean) / np.maximum(variance, 1e-300), -_THETA_BOUND, _THETA_BOUND)
    low, high = np.full(slices.size, -_THETA_BOUND), np.full(slices.size, _THETA_BOUND)
    active = np.ones(slices.size, dtype=bool)
    for _ in range(_NEWTON_STEPS):
        walking = slot_of.copy()
        walking[slices[~active]] = -1  # converged slots are not summed again
        _, k1, k2 = _cumulants(entries, logit_p, log_q, walking, theta, with_value=False)
        excess = k1 - target
        low = np.where(excess < 0, theta, low)
        high = np.where(excess > 0, theta, high)
        step = excess / np.maximum(k2, 1e-300)
        proposal = theta - step
        outside = (proposal <= low) | (proposal >= high)
        proposal = np.where(outside, 0.5 * (low + high), proposal)
        converged = (np.abs(excess) <= 1e-10 * np.maximum(1.0, np.sqrt(k2))) | \
            (np.abs(proposal - theta) <= 1e-13)
        theta = np.where(active, proposal, theta)
        active &= ~converged
        if not active.any():
            break
    k0, _, k2 = _cumulants(entries, logit_p, log_q, slot_of, theta, with_value=True)
    w = np.sign(theta) * np.sqrt(np.maximum(2.0 * (theta * target - k0), 0.0))
    u = 2.0 * np.sinh(theta / 2.0) * np.sqrt(k2)
    density = np.exp(-0.5 * w * w) / np.sqrt(2.0 * np.pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        correction = density * (1.0 / w - 1.0 / u)
        tail = ndtr(-w) - correction if side > 0 else ndtr(w) + correction
    near = np.abs(w) < 1e-4  # at the mean the formula's two terms cancel: the normal tail
    normal = ndtr(-side * (target - mean) / np.sqrt(np.maximum(variance, 1e-300)))
    return np.clip(np.where(near | ~np.isfinite(tail), normal, tail), 0.0, 1.0)
