"""Random Fourier features: kernel tests in O(n·D·B) whose level stays exact.

For the Gaussian kernel with σ = 1 on pre-scaled points (every kernel here is one, see
:func:`core.kernels.scale_blocks`), Rahimi & Recht (2007) give ``k(z, z') ≈ φ(z)ᵀφ(z')`` with

    φ(z) = √(2/D) · cos(W z + b),   W ∈ R^{D×d} with N(0, 1) entries,  b ~ U[0, 2π)^D.

Write ``K̃ = ΦΦᵀ``. The U-statistic of a residual vector e becomes

    Σ_{i≠j} e_i K̃_ij e_j = ‖Φᵀe‖² − Σ_i e_i² ‖φ_i‖²,

so all B resampled statistics cost O(n·D·B) — one pass over the rows, accumulating the D × B
matrix Φᵀ E — instead of O(n²·B). The centred statistic (residuals minus their column mean ē)
needs only the running sums ``u = Φᵀ1``, ``Σ‖φ_i‖²e_i``, ``Σ‖φ_i‖²e_i²``, ``Σ‖φ_i‖²`` and ``Σe``:

    Σ_{i≠j} K̃_ij (e_i − ē)(e_j − ē) = ‖Φᵀe − ē u‖² − (Σ d_i e_i² − 2ē Σ d_i e_i + ē² Σ d_i),
    d_i = ‖φ_i‖².

Why the test stays valid: with W and b drawn once (seeded), the approximate statistic is a
fixed function of the data, and consistency resampling draws exact samples from H0 given the
predictions and features; observed and resampled statistics are exchangeable under H0 whatever
D is, so the p-value ``(1 + #{null ≥ T})/(1 + B)`` keeps its level exactly. Only the power
depends on D (the approximation's variance is O(1/D)).

Memory: the rows are walked in chunks and each chunk's resampled residuals are drawn there
(from a generator seeded per chunk), so nothing of size n × B or n × D is ever held: O(n + D·B
+ chunk·(D + B)).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: Rows per chunk of the accumulation.
CHUNK_ROWS = 8192
#: Default number of random features.
DEFAULT_FEATURES = 1024

#: ``columns(rows, rng) -> (len(rows), C)`` residual columns of a chunk of rows; column 0 the
#: observed residuals, the others resampled from ``rng`` (seeded per chunk).
ColumnSource = Callable[[slice, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class FourierMap:
    """A seeded draw of ``W`` and ``b``: the map ``φ`` of :func:`features`."""

    weights: np.ndarray  # (d, D)
    offsets: np.ndarray  # (D,)

    @classmethod
    def draw(cls, d: int, n_features: int, seed: int) -> FourierMap:
        rng = np.random.default_rng([seed, d, n_features])
        return cls(rng.standard_normal((d, n_features)),
                   rng.uniform(0.0, 2.0 * np.pi, n_features))

    @property
    def n_features(self) -> int:
        return int(self.offsets.shape[0])

    def features(self, points: np.ndarray) -> np.ndarray:
        """``φ(z) = √(2/D) cos(z W + b)`` of each row of ``points`` (pre-scaled, σ = 1)."""
        projected = points @ self.weights
        projected += self.offsets
        np.cos(projected, out=projected)
        projected *= np.sqrt(2.0 / self.n_features)
        return projected


@dataclass(frozen=True)
class FourierSums:
    """Running sums of one pass, from which plain and centred statistics follow."""

    S: np.ndarray  # (D, C) Φᵀ E
    u: np.ndarray  # (D,) Φᵀ 1
    d_e: np.ndarray  # (C,) Σ d_i e_i
    d_e2: np.ndarray  # (C,) Σ d_i e_i²
    d_sum: float  # Σ d_i
    e_sum: np.ndarray  # (C,) Σ e_i
    n: int

    def plain(self) -> np.ndarray:
        """``Σ_{i≠j} K̃_ij e_i e_j`` for every column."""
        return np.einsum("dc,dc->c", self.S, self.S) - self.d_e2

    def centred(self) -> np.ndarray:
        """``Σ_{i≠j} K̃_ij (e_i − ē)(e_j − ē)`` for every column."""
        mean = self.e_sum / self.n
        shifted = self.S - self.u[:, None] * mean[None, :]
        diagonal = self.d_e2 - 2.0 * mean * self.d_e + mean**2 * self.d_sum
        return np.einsum("dc,dc->c", shifted, shifted) - diagonal


def chunk_generator(seed: int, chunk: int) -> np.random.Generator:
    """The generator of one chunk's resamples: the same chunk gets the same draws whatever
    the map, so every bandwidth of a grid sees the same resampled labels."""
    return np.random.default_rng([seed, chunk])


def accumulate(points: np.ndarray, columns: ColumnSource, fourier: FourierMap, seed: int,
               chunk_rows: int = CHUNK_ROWS) -> FourierSums:
    """One pass over the rows: the :class:`FourierSums` of the residual columns."""
    n = points.shape[0]
    S = u = d_e = d_e2 = e_sum = None
    d_sum = 0.0
    for k, start in enumerate(range(0, n, chunk_rows)):
        rows = slice(start, min(start + chunk_rows, n))
        phi = fourier.features(points[rows])
        E = columns(rows, chunk_generator(seed, k))
        d = np.einsum("ij,ij->i", phi, phi)
        parts = (phi.T @ E, phi.sum(axis=0), d @ E, d @ (E * E), E.sum(axis=0))
        if S is None:
            S, u, d_e, d_e2, e_sum = parts
        else:
            S += parts[0]
            u += parts[1]
            d_e += parts[2]
            d_e2 += parts[3]
            e_sum += parts[4]
        d_sum += float(d.sum())
    return FourierSums(S, u, d_e, d_e2, d_sum, e_sum, n)


def bernoulli_columns(p: np.ndarray, residuals: np.ndarray, n_resamples: int) -> ColumnSource:
    """Observed residuals and ``B`` consistency resamples ``y* − p``, ``y* ~ Bernoulli(p)``,
    drawn chunk by chunk."""
    def columns(rows: slice, rng: np.random.Generator) -> np.ndarray:
        q = p[rows]
        out = np.empty((q.shape[0], n_resamples + 1))
        out[:, 0] = residuals[rows]
        out[:, 1:] = (rng.random((q.shape[0], n_resamples)) < q[:, None]) - q[:, None]
        return out

    return columns
