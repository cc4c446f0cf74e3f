"""PCA maps: the full SVD with scikit-learn's sign convention, fitted on the sampled rows and
projecting the others (as ``sklearn.decomposition.PCA(svd_solver="full")`` does, to the bit:
tested); deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from core.local.embedding.inputs import Progress
from core.local.embedding.placement import report_progress

# --------------------------------------------------------------------------- methods


@dataclass(frozen=True)
class PrincipalAxes:
    """A fitted PCA: the rows' mean, the leading principal axes (rows of ``components_``)
    and the share of the variance each explains, with scikit-learn's attribute names."""

    mean_: np.ndarray
    components_: np.ndarray
    explained_variance_ratio_: np.ndarray

    def transform(self, X: np.ndarray) -> np.ndarray:
        """The coordinates of the rows of ``X`` on the axes, ``(X − mean) Vᵀ`` computed as
        ``X Vᵀ − mean Vᵀ`` (scikit-learn's order of operations)."""
        X = np.asarray(X, dtype=np.float64)
        if not np.isfinite(X).all():
            raise ValueError("The rows to project on the PCA map hold a missing or infinite "
                             "value; map only complete rows.")
        coords = X @ self.components_.T
        coords -= self.mean_.reshape(1, -1) @ self.components_.T
        return coords


def fit_pca(X: np.ndarray, fit_rows: np.ndarray, n_components: int) -> PrincipalAxes:
    """A PCA fitted on ``X[fit_rows]``: the full SVD of the centred rows (LAPACK through
    :func:`scipy.linalg.svd`), each axis's sign chosen so that its largest-magnitude
    coordinate is positive (scikit-learn's ``svd_flip`` on the rows of Vᵀ)."""
    rows = np.asarray(X[fit_rows], dtype=np.float64)
    mean = rows.mean(axis=0)
    _, singular, axes = linalg.svd(rows - mean, full_matrices=False)
    largest = np.argmax(np.abs(axes), axis=1)
    axes *= np.sign(axes[np.arange(axes.shape[0]), largest])[:, None]
    variance = singular**2 / (rows.shape[0] - 1)
    # the axes kept in LAPACK's (Fortran) layout, as scikit-learn keeps them: the projection's
    # products then take the same BLAS path and round the same way
    return PrincipalAxes(mean, np.array(axes[:n_components], order="K"),
                         (variance / variance.sum())[:n_components].copy())


def embed_pca(
    X: np.ndarray, fit_rows: np.ndarray, n_components: int, progress: Progress | None
) -> tuple[np.ndarray, dict, np.ndarray]:
    """PCA fitted on ``fit_rows``; every row is projected with the same fitted map."""
    report_progress(progress, 0.05, f"PCA: fitting on {fit_rows.size:,} rows")
    pca = fit_pca(X, fit_rows, n_components)
    report_progress(progress, 0.5, f"PCA: projecting {X.shape[0]:,} rows")
    coords = pca.transform(X)
    params = {"svd_solver": "full", "whiten": False}
    return coords, params, np.asarray(pca.explained_variance_ratio_, dtype=np.float64)

