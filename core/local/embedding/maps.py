""":func:`embed`: a map of the audit features by one method, fitted on at most ``max_fit`` rows
and placing the rest; t-SNE and UMAP embed each distinct feature vector once and give
repeated vectors its coordinates (categorical features repeat vectors a lot, and a
nearest-neighbour graph of many identical points falls apart). Also the cache key of a map
(:func:`embedding_cache_key`) and the coordinates the LCE landscape is computed on
(:func:`landscape_coordinates`, :func:`profile_coordinates`).

Determinism: the same inputs and ``seed`` give identical coordinates. PCA uses the full SVD
with scikit-learn's sign convention; t-SNE passes ``seed`` to openTSNE (Annoy's trees, the
initialisation), and repeated two-thread runs gave bit-identical maps with both gradient
schemes (checked at 600, 3,000 and 10,000 rows); UMAP is run single-threaded
(``n_jobs=1`` with ``random_state=seed``, ``transform_seed=seed``), which is how umap-learn
makes its stochastic gradient descent reproducible — multi-threaded UMAP is not.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from core.data.problems import describe_rows
from core.data.validation import is_whole
from core.kernels.tiles import Standardizer
from core.local.embedding.inputs import (
    DEFAULT_PARAMS,
    METHOD_PARAMS,
    METHOD_TITLES,
    MIN_ROWS,
    SETTINGS_VERSION,
    Progress,
    check_method,
    checked_inputs,
    choose_fit_rows,
)
from core.local.embedding.method_pca import embed_pca
from core.local.embedding.method_tsne import embed_tsne
from core.local.embedding.method_umap import embed_umap
from core.local.embedding.placement import complement, report_progress


@dataclass(frozen=True, eq=False)
class Embedding:
    """Coordinates of every row in a low-dimensional map, and how they were obtained.

    Attributes
    ----------
    coords
        ``(n, n_components)`` float64 coordinates, one row per input row.
    method
        ``"pca"``, ``"tsne"`` or ``"umap"``.
    params
        every setting used (after clamping), e.g. ``perplexity`` and
        ``perplexity_requested`` for t-SNE; JSON-serialisable.
    n_fit
        number of rows the map was fitted on (t-SNE, UMAP: distinct feature vectors).
    fit_rows
        sorted indices of those rows (t-SNE, UMAP: the first row holding each fitted
        vector). Every other row was placed with the fitted map or, for t-SNE and UMAP,
        repeats a fitted vector and shares its coordinates.
    explained_variance_ratio
        PCA only: the share of the total variance of the fitted rows
        along each component; ``None`` for t-SNE and UMAP.
    """

    coords: np.ndarray
    method: str
    params: dict
    n_fit: int
    fit_rows: np.ndarray
    explained_variance_ratio: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of embedded rows."""
        return int(self.coords.shape[0])

    @property
    def n_components(self) -> int:
        """Dimension of the map."""
        return int(self.coords.shape[1])

    @property
    def placed_rows(self) -> np.ndarray:
        """Sorted indices of the rows not in ``fit_rows`` (placed, or repeating a fitted row)."""
        return complement(self.n, self.fit_rows)


# --------------------------------------------------------------------------- public API


def embed(
    X: ArrayLike,
    method: str = "pca",
    n_components: int = 2,
    seed: int = 0,
    max_fit: int = DEFAULT_PARAMS["max_fit"],
    perplexity: float = DEFAULT_PARAMS["perplexity"],
    n_neighbors: int = DEFAULT_PARAMS["n_neighbors"],
    progress: Progress | None = None,
) -> Embedding:
    """Embed the rows of ``X`` in ``n_components`` dimensions with PCA, t-SNE or UMAP.

    ``X`` is ``(n, d)``, normally :func:`prepare_features` of the audit features. The map is
    fitted on at most ``max_fit`` rows (all of them if there are no more, else a random
    subsample drawn with ``seed``, see :func:`choose_fit_rows`) and the other rows are placed
    into it with the fitted map, so every row gets coordinates.

    t-SNE and UMAP embed each *distinct* feature vector once and give repeated vectors the
    same coordinates (``max_fit`` then counts distinct vectors, and ``params["n_distinct"]``
    says how many there are). Both build a nearest-neighbour graph, which degenerates when a
    vector occurs more often than its neighbourhood holds points: categorical audit features
    repeat vectors a lot (the census demo's age, sex and race give 642 distinct vectors among
    10,000 rows), and there embedding the distinct vectors was 20 (t-SNE) and 30 (UMAP) times
    faster and kept their neighbours (10-NN recall 0.97 and 0.93 instead of 0.78 and 0.55).
    PCA, a variance decomposition, is fitted on the rows with their multiplicities.

    ``perplexity`` is read by t-SNE only (clamped to ``(n_fit − 1)/3`` when that is smaller;
    the used value is in ``params``) and ``n_neighbors`` by UMAP only (clamped to
    ``n_fit − 1``). ``progress``, if given, is called as ``progress(fraction, message)`` at a
    few milestones, with ``fraction`` rising to 1.

    The same arguments give identical coordinates (see the module notes on determinism).
    Raises ValueError for fewer than 5 rows (t-SNE, UMAP: 5 distinct rows), missing values,
    identical rows, or an unusable setting (PCA: ``1 ≤ n_components ≤ min(d, n_fit)``; t-SNE
    and UMAP: 1 to 3 dimensions).

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
    Embedding
    """
    matrix, n_components, seed, max_fit = checked_inputs(
        X, method, n_components, seed, max_fit, perplexity, n_neighbors)
    n, d = matrix.shape
    evr = None
    if method == "pca":
        fit_rows = choose_fit_rows(n, max_fit, seed)
        coords, params, evr = embed_pca(matrix, fit_rows, n_components, progress)
    else:
        coords, params, fit_rows = _embed_distinct(
            matrix, method, n_components, seed, max_fit, perplexity, n_neighbors, progress
        )
    params = {"seed": seed, "max_fit": max_fit, **params}
    report_progress(progress, 1.0, f"{METHOD_TITLES[method]}: done")
    return Embedding(
        coords=coords, method=method, params=params, n_fit=int(fit_rows.size),
        fit_rows=fit_rows, explained_variance_ratio=evr,
    )


def distinct_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(distinct, first, inverse)``: the distinct rows in lexicographic order, the index of
    each one's first occurrence, and for every row the index of its distinct row, so that
    ``distinct[inverse] == matrix`` and ``matrix[first] == distinct``.

    Parameters
    ----------
    matrix : numpy.ndarray
        ``(n, d)``.

    Returns
    -------
    distinct, first, inverse : numpy.ndarray
    """
    distinct, first, inverse = np.unique(matrix, axis=0, return_index=True, return_inverse=True)
    return distinct, first, inverse.reshape(-1)


def _embed_distinct(
    matrix: np.ndarray, method: str, n_components: int, seed: int, max_fit: int,
    perplexity: float, n_neighbors: int, progress: Progress | None,
) -> tuple[np.ndarray, dict, np.ndarray]:
    """t-SNE or UMAP of the distinct rows of ``matrix``, broadcast back to every row.

    Returns the coordinates, the parameters and the fitted rows (the first occurrence of each
    fitted distinct vector, sorted).
    """
    distinct, first, inverse = distinct_rows(matrix)
    m = distinct.shape[0]
    if m < MIN_ROWS:
        raise ValueError(
            f"The features take only {m} distinct values across the rows; "
            f"{METHOD_TITLES[method]} needs at least {MIN_ROWS}. Choose more audit features "
            "or use PCA."
        )
    fit = choose_fit_rows(m, max_fit, seed)
    place = complement(m, fit)
    if method == "tsne":
        coords, params = embed_tsne(distinct, fit, place, n_components, seed, perplexity,
                                     progress)
    else:
        coords, params = embed_umap(distinct, fit, place, n_components, seed, n_neighbors,
                                     progress)
    params["n_distinct"] = int(m)
    return coords[inverse], params, np.sort(first[fit])


def embedding_cache_key(
    fingerprint: str, method: str, n_components: int, seed: int, **params
) -> str:
    """A stable string naming one embedding of one dataset, for caching.

    Equal keys mean :func:`embed` returns the same coordinates: the parameters of
    :func:`embed` that the method reads are filled in with their defaults when omitted and
    normalised (``perplexity=30`` and ``30.0`` give one key), the ones it ignores are left out
    (changing the perplexity does not invalidate a UMAP map), and any other keyword (such as
    the chosen feature names) is kept as given. The key carries :data:`SETTINGS_VERSION`.

    Parameters
    ----------
    fingerprint : str
        The dataset's fingerprint.
    method : str
        The map.
    n_components : int
        Its dimensions.
    seed : int
        Its seed.
    **params
        Its other settings, and anything else that names the embedding.

    Returns
    -------
    str
    """
    if not isinstance(fingerprint, str) or not fingerprint:
        raise ValueError("The dataset fingerprint must be a non-empty string.")
    check_method(method)
    if not is_whole(n_components) or not is_whole(seed):
        raise ValueError("n_components and seed must be whole numbers.")
    known = {name: params.pop(name, default) for name, default in DEFAULT_PARAMS.items()}
    used = {name: known[name] for name in METHOD_PARAMS[method]}
    if "perplexity" in used:
        used["perplexity"] = float(used["perplexity"])
    for name in ("max_fit", "n_neighbors"):
        if name in used:
            used[name] = int(used[name])
    items = {**used, **params}
    fields = [f"{name}={_canonical(items[name])}" for name in sorted(items)]
    head = [f"embedding-v{SETTINGS_VERSION}", fingerprint, method, f"k={int(n_components)}",
            f"seed={int(seed)}"]
    return "|".join(head + fields)


def _canonical(value: object) -> str:
    """A text form of a parameter value that is equal exactly when the values are equal."""
    if isinstance(value, np.bool_):
        value = bool(value)
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, (list, tuple, np.ndarray)):
        return "(" + ",".join(_canonical(item) for item in list(value)) + ")"
    raise TypeError(
        f"Cannot build a cache key from a value of type {type(value).__name__}; use numbers, "
        "strings, booleans, None or sequences of them."
    )


# --------------------------------------------------------------------------- landscape


def landscape_coordinates(coords: ArrayLike) -> np.ndarray:
    """The plane an LCE landscape is computed on: the first two embedding dimensions, z-scored.

    ``Standardizer.fit(c).transform(c)`` with ``c = coords[:, :2]``: each dimension becomes
    ``(c − mean) / sd`` (population sd; a constant dimension becomes 0), so that the Laplacian
    kernel ``exp(−‖a − b‖₁ / (d·γ))`` of the LCE (Luo et al., eq. 4) measures γ in standard
    deviations of the map, whatever the scale of the method's output (PCA keeps the features'
    variance, t-SNE and UMAP have arbitrary units). Returns a new ``(n, 2)`` float64 array.

    Raises ValueError for fewer than two dimensions: a single audit feature has no plane; use
    :func:`profile_coordinates` on the feature itself.

    Parameters
    ----------
    coords : array_like
        ``(n, k)`` embedding coordinates, k ≥ 2.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValueError
        Fewer than two dimensions.
    """
    matrix = np.asarray(coords, dtype=float)
    if matrix.ndim != 2 or matrix.shape[1] < 2:
        found = matrix.shape[1] if matrix.ndim == 2 else matrix.ndim
        raise ValueError(
            f"A landscape needs an embedding with at least two dimensions; this one has "
            f"{found}. With one audit feature, draw the LCE against the feature "
            "(profile_coordinates)."
        )
    return Standardizer.fit(matrix[:, :2]).transform(matrix[:, :2])


def profile_coordinates(values: ArrayLike) -> np.ndarray:
    """The 1-D variant of :func:`landscape_coordinates` for a single numeric audit feature.

    ``(x − mean) / sd`` of the feature's values as an ``(n, 1)`` float64 array (a constant
    feature becomes 0, so every row is every other row's neighbour and the LCE falls back to
    its bin's calibration error). Accepts ``(n,)`` or ``(n, 1)``.

    Parameters
    ----------
    values : array_like
        ``(n,)`` or ``(n, 1)``.

    Returns
    -------
    numpy.ndarray
        ``(n, 1)``.
    """
    column = np.asarray(values, dtype=float)
    if column.ndim == 2 and column.shape[1] == 1:
        column = column[:, 0]
    if column.ndim != 1:
        raise ValueError(
            f"A profile is drawn against one feature; got values of shape {column.shape}. "
            "Use landscape_coordinates for two or more dimensions."
        )
    if not np.all(np.isfinite(column)):
        raise ValueError(
            f"The feature has missing or infinite values in {describe_rows(~np.isfinite(column))}"
            ". Remove or fill those rows first."
        )
    return Standardizer.fit(column[:, None]).transform(column[:, None])

