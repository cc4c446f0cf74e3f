"""PCA maps: the full SVD with scikit-learn's sign convention, fitted on the sampled rows and
projecting the others (``PCA.transform``); deterministic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.local.embedding.inputs import Progress
from core.local.embedding.placement import report_progress

if TYPE_CHECKING:  # scikit-learn is imported where a map is fitted (0.5 s, not at start-up)
    from sklearn.decomposition import PCA

# --------------------------------------------------------------------------- methods


def fit_pca(X: np.ndarray, fit_rows: np.ndarray, n_components: int) -> PCA:
    """A PCA (full SVD, deterministic signs) fitted on ``X[fit_rows]``."""
    from sklearn.decomposition import PCA

    return PCA(n_components=n_components, svd_solver="full").fit(X[fit_rows])


def embed_pca(
    X: np.ndarray, fit_rows: np.ndarray, n_components: int, progress: Progress | None
) -> tuple[np.ndarray, dict, np.ndarray]:
    """PCA fitted on ``fit_rows``; every row is projected with the same fitted map."""
    report_progress(progress, 0.05, f"PCA: fitting on {fit_rows.size:,} rows")
    pca = fit_pca(X, fit_rows, n_components)
    report_progress(progress, 0.5, f"PCA: projecting {X.shape[0]:,} rows")
    coords = pca.transform(X).astype(np.float64)
    params = {"svd_solver": "full", "whiten": False}
    return coords, params, np.asarray(pca.explained_variance_ratio_, dtype=np.float64)

