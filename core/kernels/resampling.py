"""Resampling schemes for kernel calibration tests, as columns of one residual matrix.

A kernel test statistic here is a quadratic form ``Σ_{i≠j} K_ij e_i e_j`` of a residual
vector e (``e = y − p`` for a binary or one-vs-rest problem). Each null scheme produces B
resampled residual vectors at once, as the columns of an ``(n, B)`` matrix, so that the tile
engine computes all null statistics in one pass (``diag(Eᵀ K E)``):

``consistency``  labels redrawn from the predictions, y*_i ~ Bernoulli(p_i), e*_i = y*_i − p_i
                 (consistency resampling, Bröcker & Smith 2007; the exact null "calibrated").
``permutation``  e*_i = e_{π(i)}: residuals shuffled over the rows (the I-trustworthy
                 authors' reference code).
``bootstrap``    e*_i = e_{J_i}, J_i uniform with replacement (I-trustworthy Algorithm 1).
``bootstrap-centred``  the same on e − ē, removing the (Σe)² shift that resampling with
                 replacement adds to the null.
``wild``         e*_i = ε_i e_i with Rademacher ε_i (wild bootstrap).

Multiclass consistency resampling (for the SKCE) draws whole label vectors from the rows of P.

Draws that must not depend on how the rows are cut into chunks or partitions — the random-
feature tests and the streamed bootstrap, whose chunks may run anywhere on a cluster — come
from a counter-based generator keyed by ``(seed, stream)``: row i's uniforms are the Philox
outputs at counter positions ``i·⌈c/4⌉ …`` (Salmon et al. 2011, "Parallel random numbers: as
easy as 1, 2, 3"; numpy's ``Philox``), so a chunk starting at row s advances the counter to s
and draws exactly what one pass over all rows would (:func:`row_uniforms`). Each use has its
own ``stream`` (:data:`STREAMS`), so no two uses share draws.
"""

from __future__ import annotations

import numpy as np

from core.data.validation import check_choice

SCHEMES = ("consistency", "permutation", "bootstrap", "bootstrap-centred", "wild")
#: Streams of the counter-based row generator, one per use of :func:`row_uniforms`.
STREAMS = {"consistency": 1, "poisson": 2}
#: Poisson(1) is drawn by inverse CDF from one uniform; P(count > 20) ≈ 4e-20 is below the
#: resolution of a 53-bit uniform, so the table stops there.
_POISSON_CDF = np.cumsum(np.exp(-1.0) / np.cumprod(np.concatenate([[1.0], np.arange(1, 21)])))


def _poisson_cells(bits: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """The inverse CDF of :data:`_POISSON_CDF` on 2^bits equal cells of [0, 1): each cell's
    count ``#{F_k ≤ u}`` (float64) where it is the same for every ``u`` of the cell (checked
    at the cell's first and last double), and whether a ``F_k`` falls inside the cell (8
    cells of 65,536), whose uniforms are then looked up one by one. A uniform's cell is
    ``⌊u·2^bits⌋``, exact for doubles."""
    cells = 1 << bits
    first = np.arange(cells) / cells
    last = np.nextafter(np.arange(1, cells + 1) / cells, 0.0)
    low = np.searchsorted(_POISSON_CDF, first, side="right")
    high = np.searchsorted(_POISSON_CDF, last, side="right")
    return low.astype(np.float64), low != high


_POISSON_BITS = 16
_POISSON_COUNTS, _POISSON_MIXED = _poisson_cells(_POISSON_BITS)
#: The cells' counts as bytes, :data:`_CUT` where a CDF value cuts the cell.
_CUT = 255
_POISSON_CODES = np.where(_POISSON_MIXED, _CUT, _POISSON_COUNTS).astype(np.uint8)


def bernoulli_residuals(p: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, B)`` residuals ``y* − p`` with ``y* ~ Bernoulli(p)`` drawn independently."""
    p = np.asarray(p, dtype=np.float64)
    draws = rng.random((p.shape[0], n_resamples)) < p[:, None]
    return draws - p[:, None]


def resample_residuals(
    scheme: str, e: np.ndarray, p: np.ndarray, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """``(n, B)`` resampled residual vectors under the named null scheme (see module doc).

    Parameters
    ----------
    scheme : str
        The null scheme (module doc).
    e : numpy.ndarray
        ``(n,)`` observed residuals.
    p : numpy.ndarray
        ``(n,)`` predictions.
    n_resamples : int
        B.
    rng : numpy.random.Generator
        The draws' generator.

    Returns
    -------
    numpy.ndarray
    """
    n = e.shape[0]
    if scheme == "consistency":
        return bernoulli_residuals(p, n_resamples, rng)
    if scheme == "permutation":
        order = np.argsort(rng.random((n, n_resamples)), axis=0)
        return e[order]
    if scheme == "bootstrap":
        return e[rng.integers(0, n, size=(n, n_resamples))]
    if scheme == "bootstrap-centred":
        return (e - e.mean())[rng.integers(0, n, size=(n, n_resamples))]
    if scheme == "wild":
        signs = rng.integers(0, 2, size=(n, n_resamples), dtype=np.int8) * 2 - 1
        return signs * e[:, None]
    check_choice(scheme, SCHEMES, "resampling scheme", f"use one of {SCHEMES}")
    raise AssertionError("unreachable")  # check_choice raised for anything else


#: Largest number of (draw, class) comparisons :func:`categorical_labels` holds at once.
_COMPARE_ELEMENTS = 4_000_000


def cumulative_probabilities(P: np.ndarray) -> np.ndarray:
    """Row-wise CDFs of ``(…, K)`` probabilities, the last column exactly 1."""
    cumulative = np.cumsum(P, axis=-1)
    cumulative[..., -1] = 1.0
    return cumulative


def inverse_cdf(cumulative: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The category of each uniform ``u`` under the CDF ``cumulative[..., :]`` broadcast to
    it: ``#{k : F_k ≤ u}`` (``searchsorted(F, u, side="right")``), at most K − 1."""
    K = cumulative.shape[-1]
    return np.minimum((u[..., None] >= cumulative).sum(axis=-1), K - 1)


def categorical_labels(P: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, B)`` labels drawn from each row's categorical distribution (inverse CDF),
    vectorised over blocks of rows."""
    cumulative = cumulative_probabilities(P)
    u = rng.random((P.shape[0], n_resamples))
    labels = np.empty(u.shape, dtype=np.int64)
    block = max(1, _COMPARE_ELEMENTS // max(1, n_resamples * P.shape[1]))
    for start in range(0, P.shape[0], block):
        rows = slice(start, start + block)
        labels[rows] = inverse_cdf(cumulative[rows, None, :], u[rows])
    return labels


def row_sample(n: int, limit: int, seed: int) -> np.ndarray:
    """Sorted indices of at most ``limit`` of ``n`` rows: all of them when ``n ≤ limit``, else
    a uniform draw without replacement from ``numpy.random.default_rng(seed)``. A test or fit
    on a uniform random subset stays valid; the embeddings' fit rows, LCB's bandwidth
    cross-validation, the comparison's KLCE column and the Ensembles page use it.

    Parameters
    ----------
    n : int
        Rows.
    limit : int
        Most rows drawn.
    seed : int
        Seed of the draw.

    Returns
    -------
    numpy.ndarray
    """
    if n <= limit:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=limit, replace=False))


# --------------------------------------------------------------------------- counter-based rows


def row_uniforms(seed: int, stream: str, start: int, stop: int, columns: int) -> np.ndarray:
    """``(stop − start, columns)`` uniforms on [0, 1) of rows ``start … stop − 1``.

    Row i's draws are a function of ``(seed, stream, i, columns)`` only — Philox4x64 keyed by
    ``(seed, STREAMS[stream])`` with the counter advanced to ``i·⌈columns/4⌉`` — so any cutting
    of the rows into chunks, on any machine, gives the same numbers.
    """
    blocks = -(-columns // 4)
    bits = np.random.Philox(key=np.array([seed, STREAMS[stream]], dtype=np.uint64))
    bits.advance(start * blocks)
    return np.random.Generator(bits).random((stop - start, 4 * blocks))[:, :columns]


def row_bernoulli_residuals(p: np.ndarray, start: int, n_resamples: int, seed: int
                            ) -> np.ndarray:
    """``(len(p), B)`` consistency residuals ``y* − p``, ``y* ~ Bernoulli(p)``, of the rows
    ``start …`` from :func:`row_uniforms` (stream ``"consistency"``)."""
    u = row_uniforms(seed, "consistency", start, start + p.shape[0], n_resamples)
    return (u < p[:, None]) - p[:, None]


def row_categorical_labels(P: np.ndarray, start: int, n_resamples: int, seed: int
                           ) -> np.ndarray:
    """``(len(P), B)`` labels drawn from each row of ``P`` by inverse CDF, from the
    uniforms of :func:`row_uniforms` (stream ``"consistency"``)."""
    u = row_uniforms(seed, "consistency", start, start + P.shape[0], n_resamples)
    return inverse_cdf(cumulative_probabilities(P)[:, None, :], u)


def row_poisson_weights(start: int, stop: int, n_resamples: int, seed: int) -> np.ndarray:
    """``(stop − start, B)`` independent Poisson(1) weights of rows ``start … stop − 1``: the
    Poisson bootstrap (Hanley & MacGibbon 2006; Chamandy et al. 2012, "Estimating uncertainty
    for massive data streams"), whose resample b gives row i the weight ``w_ib``. Unlike a
    multinomial resample, the weights of different rows are independent, so a chunk draws
    its own from :func:`row_uniforms` (stream ``"poisson"``) wherever it runs; ``Σ_i w_ib`` is
    Poisson(n) rather than exactly n.

    The counts are :func:`_poisson_counts` of those uniforms, looked up from the generator's
    64-bit words: a uniform is ``(word >> 11)·2⁻⁵³`` (numpy's ``Generator.random``), so its
    cell ``⌊u·2¹⁶⌋`` is the word's top 16 bits, read in place; only the rare uniforms of the
    cells a CDF value cuts are formed."""
    words = _row_words(seed, "poisson", start, stop, n_resamples)
    cells = words.astype("<u8", copy=False).view("<u2")[:, 3::4]  # _POISSON_BITS = 16
    codes = np.take(_POISSON_CODES, cells)
    counts = codes.astype(np.float64)
    if codes.max(initial=0) == _CUT:
        mixed = codes == _CUT
        counts[mixed] = _poisson_counts((words[mixed] >> np.uint64(11)) * 2.0**-53)
    return counts


def _row_words(seed: int, stream: str, start: int, stop: int, columns: int) -> np.ndarray:
    """The 64-bit Philox words behind :func:`row_uniforms`' uniforms (the same counter
    positions): uniform ``= (word >> 11)·2⁻⁵³``."""
    blocks = -(-columns // 4)
    bits = np.random.Philox(key=np.array([seed, STREAMS[stream]], dtype=np.uint64))
    bits.advance(start * blocks)
    return bits.random_raw((stop - start) * 4 * blocks).reshape(stop - start, 4 * blocks
                                                                )[:, :columns]


def _poisson_counts(u: np.ndarray) -> np.ndarray:
    """Poisson(1) counts of uniforms ``u`` (float64): ``searchsorted(_POISSON_CDF, u,
    side="right")``, looked up by cells (:func:`_poisson_cells`) — the same counts, twice as
    fast as a binary search per uniform."""
    cell = (u * (1 << _POISSON_BITS)).astype(np.int64)
    counts = _POISSON_COUNTS[cell]
    mixed = _POISSON_MIXED[cell]
    counts[mixed] = np.searchsorted(_POISSON_CDF, u[mixed], side="right")
    return counts
