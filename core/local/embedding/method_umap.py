"""UMAP maps through umap-learn, fitted on the sampled rows; the other rows are placed through
its fuzzy neighbour graph (``UMAP.transform``).

UMAP: ``n_neighbors`` 15 (clamped below ``n_fit``), ``min_dist`` 0.1, PCA initialisation
(the spectral one fails on one-hot features with a warning and falls back to random), 200
optimisation epochs (umap-learn's own choice above 10,000 rows; 500 epochs give no better
neighbour recall on the census demo and take 2.5 times longer), new points 66 epochs.

umap-learn's stochastic gradient descent is reproducible single-threaded only (``n_jobs=1``
with ``random_state=seed``, ``transform_seed=seed``), which is how it runs here.

The first UMAP call in a process compiles umap-learn's and pynndescent's numba code, which
takes tens of seconds (about 20 s below 4,096 rows, where exact neighbours are used, and
30–40 s more for the approximate-neighbour code above); later calls are fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.local.embedding.inputs import Progress
from core.local.embedding.placement import place_in_batches, report_progress

if TYPE_CHECKING:  # imported where used: umap-learn alone takes seconds to import
    import umap

#: UMAP settings.
UMAP_MIN_DIST = 0.1
UMAP_N_EPOCHS = 200


def fit_umap(X: np.ndarray, settings: dict) -> umap.UMAP:
    """A UMAP with ``settings`` (see :func:`umap_settings`) fitted on the rows of ``X``."""
    import umap

    return umap.UMAP(**settings).fit(X)


def umap_settings(n_fit: int, d: int, n_components: int, n_neighbors: int, seed: int) -> dict:
    """umap-learn constructor arguments for ``n_fit`` rows (neighbours clamped below n_fit)."""
    return {
        "n_components": n_components,
        "n_neighbors": min(int(n_neighbors), n_fit - 1),
        "min_dist": UMAP_MIN_DIST,
        "n_epochs": UMAP_N_EPOCHS,
        "init": "pca" if n_components <= min(d, n_fit) else "random",
        "metric": "euclidean",
        "n_jobs": 1,
        "random_state": seed,
        "transform_seed": seed,
    }


def embed_umap(
    X: np.ndarray, fit_rows: np.ndarray, place_rows: np.ndarray, n_components: int, seed: int,
    n_neighbors: int, progress: Progress | None,
) -> tuple[np.ndarray, dict]:
    """umap-learn map of ``fit_rows``; the other rows placed with ``UMAP.transform``."""
    settings = umap_settings(fit_rows.size, X.shape[1], n_components, n_neighbors, seed)
    fit_end = 0.8 if place_rows.size else 0.99
    report_progress(progress, 0.02,
            f"UMAP: fitting on {fit_rows.size:,} distinct rows (the first run in a session also "
            "compiles UMAP's code, which takes 20–60 s)")
    model = fit_umap(X[fit_rows], settings)
    report_progress(progress, fit_end, "UMAP: map fitted")
    coords = np.empty((X.shape[0], n_components), dtype=np.float64)
    coords[fit_rows] = np.asarray(model.embedding_, dtype=np.float64)

    def place(batch: np.ndarray) -> np.ndarray:
        return np.asarray(model.transform(batch), dtype=np.float64)

    place_in_batches(place, X, place_rows, coords, progress, (fit_end, 0.99), "UMAP")
    params = {key: value for key, value in settings.items() if key != "random_state"}
    params["n_neighbors_requested"] = int(n_neighbors)
    params["transform_n_epochs"] = UMAP_N_EPOCHS // 3
    return coords, params

