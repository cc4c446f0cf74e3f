"""A map kept to place new rows later (:func:`fit_embedding`, :class:`FittedEmbedding`): what the
local recalibrators need, which fit on calibration rows and place test rows.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from core.local.embedding.inputs import (
    DEFAULT_PARAMS,
    METHOD_TITLES,
    MIN_ROWS,
    Progress,
    checked_inputs,
    choose_fit_rows,
)
from core.local.embedding.maps import distinct_rows
from core.local.embedding.method_pca import fit_pca
from core.local.embedding.method_tsne import fit_tsne, tsne_settings, tsne_transform_settings
from core.local.embedding.method_umap import fit_umap, umap_settings
from core.local.embedding.placement import (
    PLACE_BATCH,
    batches,
    complement,
    place_in_batches,
    report_progress,
)

# --------------------------------------------------------------------------- fitted maps


class FittedEmbedding:
    """A map fitted on some rows that can place new ones (:func:`fit_embedding`).

    ``coords`` holds the fitted rows' coordinates (as :func:`embed` would give them);
    :meth:`transform` places new rows: PCA projects them; t-SNE and UMAP give a row that
    repeats a vector seen at fit time that vector's coordinates and place the others with
    the fitted map (``TSNEEmbedding.transform`` / ``UMAP.transform``), batch by batch.

    Parameters
    ----------
    method : str
        The map: ``"pca"``, ``"tsne"`` or ``"umap"``.
    coords : numpy.ndarray
        The fitted rows' coordinates.
    params : dict
        The settings used.
    place : callable
        Places new rows with the fitted map.
    known : dict, optional
        Coordinates of the feature vectors seen at fit time, by their bytes.
    """

    def __init__(self, method: str, coords: np.ndarray, params: dict,
                 place: Callable[[np.ndarray], np.ndarray],
                 known: dict[bytes, np.ndarray] | None = None) -> None:
        self.method = method
        self.coords = coords
        self.params = params
        self._placer = place
        self._known = known

    @property
    def n_components(self) -> int:
        return int(self.coords.shape[1])

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Coordinates of new rows ``(n_new, d)`` with the same columns as the fitted rows."""
        matrix = np.ascontiguousarray(X, dtype=np.float64)
        d = int(self.params["n_features"])
        if matrix.ndim != 2 or matrix.shape[1] != d:
            raise ValueError(f"The rows to place must have the {d} feature columns the map was "
                             f"fitted on; got shape {matrix.shape}.")
        if not np.isfinite(matrix).all():
            raise ValueError("The rows to place have missing or infinite feature values.")
        if self._known is None:
            return np.asarray(self._placer(matrix), dtype=np.float64)
        out = np.empty((matrix.shape[0], self.n_components))
        seen = np.zeros(matrix.shape[0], dtype=bool)
        for i, row in enumerate(matrix):
            hit = self._known.get(row.tobytes())
            if hit is not None:
                out[i], seen[i] = hit, True
        rest = np.flatnonzero(~seen)
        for batch in batches(rest, PLACE_BATCH):
            out[batch] = self._placer(matrix[batch])
        return out


def fit_embedding(
    X: ArrayLike,
    method: str = "pca",
    n_components: int = 2,
    seed: int = 0,
    max_fit: int = DEFAULT_PARAMS["max_fit"],
    perplexity: float = DEFAULT_PARAMS["perplexity"],
    n_neighbors: int = DEFAULT_PARAMS["n_neighbors"],
    progress: Progress | None = None,
) -> FittedEmbedding:
    """Fit a PCA, t-SNE or UMAP map on the rows of ``X`` and keep it for new rows.

    Same settings, checks and determinism as :func:`embed` (PCA on at most ``max_fit`` rows;
    t-SNE and UMAP on at most ``max_fit`` distinct vectors, the other distinct vectors
    placed), and the same coordinates for the rows of ``X``. The result's
    :meth:`FittedEmbedding.transform` places rows that were not there at fit time — what a
    recalibrator fitted on a calibration split needs for the test rows (LoRe).

    Parameters
    ----------
    X : array_like
        ``(n, d)`` features, normally :func:`prepare_features` of the audit features.
    method : {"pca", "tsne", "umap"}
        The map.
    n_components : int, default 2
        Dimensions of the map.
    seed : int, default 0
        Seed of the fit-row sample and of the method.
    max_fit : int, default 20000
        Rows (distinct vectors for t-SNE and UMAP) the map is fitted on at most.
    perplexity : float, default 30.0
        t-SNE's perplexity.
    n_neighbors : int, default 15
        UMAP's neighbours.
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    FittedEmbedding
    """
    matrix, n_components, seed, max_fit = checked_inputs(
        X, method, n_components, seed, max_fit, perplexity, n_neighbors)
    n, d = matrix.shape
    if method == "pca":
        pca = fit_pca(matrix, choose_fit_rows(n, max_fit, seed), n_components)
        report_progress(progress, 1.0, "PCA: done")
        return FittedEmbedding("pca", pca.transform(matrix).astype(np.float64),
                               {"n_features": d, "seed": seed, "max_fit": max_fit},
                               lambda rows: pca.transform(rows))
    distinct, first, inverse = distinct_rows(matrix)
    if distinct.shape[0] < MIN_ROWS:
        raise ValueError(
            f"The features take only {distinct.shape[0]} distinct values across the rows; "
            f"{METHOD_TITLES[method]} needs at least {MIN_ROWS}. Choose more audit features "
            "or use PCA."
        )
    fit = choose_fit_rows(distinct.shape[0], max_fit, seed)
    rest = complement(distinct.shape[0], fit)
    coords = np.empty((distinct.shape[0], n_components))
    if method == "tsne":
        settings = tsne_settings(fit.size, d, n_components, perplexity, seed)
        _, reference = fit_tsne(distinct[fit], settings, progress, (0.05, 0.8))
        coords[fit] = np.array(reference, dtype=np.float64)
        placement = tsne_transform_settings(fit.size)

        def place(rows: np.ndarray) -> np.ndarray:
            return np.array(reference.transform(rows, **placement), dtype=np.float64)
    else:
        model = fit_umap(distinct[fit], umap_settings(fit.size, d, n_components,
                                                        n_neighbors, seed))
        coords[fit] = np.asarray(model.embedding_, dtype=np.float64)

        def place(rows: np.ndarray) -> np.ndarray:
            return np.asarray(model.transform(rows), dtype=np.float64)

    place_in_batches(place, distinct, rest, coords, progress, (0.8, 0.99), METHOD_TITLES[method])
    known = {row.tobytes(): coords[i] for i, row in enumerate(distinct)}
    report_progress(progress, 1.0, f"{METHOD_TITLES[method]}: done")
    return FittedEmbedding(method, coords[inverse],
                           {"n_features": d, "seed": seed, "max_fit": max_fit,
                            "n_distinct": int(distinct.shape[0])}, place, known)

