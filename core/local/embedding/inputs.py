"""The settings of the three embedding methods and the checks of their inputs: the feature
matrix, the method, the number of components, the rows fitted (a seeded subsample beyond
``max_fit``), perplexity and neighbours; :func:`prepare_features` z-scores the encoded
features so that no unit dominates the distances.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from core.data.problems import describe_rows
from core.data.validation import check_choice, is_whole
from core.kernels.resampling import row_sample
from core.kernels.tiles import standardize_features

METHODS = ("pca", "tsne", "umap")
#: Fewest rows an embedding is computed for.
MIN_ROWS = 5
#: Bumped whenever a setting below changes, so cached embeddings are recomputed.
SETTINGS_VERSION = 1

#: Defaults of the method parameters of :func:`embed`, and which method reads which.
DEFAULT_PARAMS = {"max_fit": 20_000, "perplexity": 30.0, "n_neighbors": 15}
METHOD_PARAMS = {
    "pca": ("max_fit",),
    "tsne": ("max_fit", "perplexity"),
    "umap": ("max_fit", "n_neighbors"),
}
METHOD_TITLES = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP"}

Progress = Callable[[float, str], None]


# --------------------------------------------------------------------------- features


def prepare_features(X: ArrayLike, feature_names) -> np.ndarray:
    """Z-score every column of the encoded audit features: ``(x − mean) / sd``.

    ``sd`` is the population standard deviation (``ddof=0``), as in the kernel statistics
    (DESIGN.md). A constant column (every value equal) carries no information and becomes 0.
    ``X`` is ``AuditData.X`` (numeric, categoricals one-hot encoded) and ``feature_names``
    ``AuditData.feature_names``, used to name the column at fault in error messages.
    Returns a new float64 array; the input is not modified.

    Parameters
    ----------
    X : array_like
        ``(n, d)`` encoded audit features.
    feature_names : sequence of str
        Their names, for messages.

    Returns
    -------
    numpy.ndarray
    """
    names = [str(name) for name in feature_names]
    matrix = np.asarray(X, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(
            f"The audit features must be a table (rows × features); got an array with "
            f"{matrix.ndim} dimension(s)."
        )
    if matrix.shape[1] == 0:
        raise ValueError("No audit features were chosen. Choose at least one feature to embed.")
    if len(names) != matrix.shape[1]:
        raise ValueError(
            f"There are {matrix.shape[1]} feature columns but {len(names)} feature names; "
            "give one name per column."
        )
    bad_columns = [names[j] for j in np.flatnonzero(~np.isfinite(matrix).all(axis=0))]
    if bad_columns:
        listed = ", ".join(f"'{name}'" for name in bad_columns[:5])
        raise ValueError(
            f"The audit features {listed} have missing or infinite values. Remove or fill "
            "those rows before embedding."
        )
    return standardize_features(matrix)


# --------------------------------------------------------------------------- validation


def _check_matrix(X: ArrayLike) -> np.ndarray:
    """``X`` as a C-contiguous float64 ``(n, d)`` array with ``n ≥ MIN_ROWS``, all finite."""
    matrix = np.ascontiguousarray(X, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(
            f"The features to embed must be a table (rows × features); got an array with "
            f"{matrix.ndim} dimension(s)."
        )
    n, d = matrix.shape
    if d == 0:
        raise ValueError("There are no feature columns to embed. Choose at least one feature.")
    if n < MIN_ROWS:
        raise ValueError(
            f"An embedding needs at least {MIN_ROWS} rows; the data has {n}. Load more rows."
        )
    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        raise ValueError(
            f"The features have missing or infinite values in {describe_rows(bad)}. Remove or "
            "fill those rows before embedding."
        )
    if not np.any(matrix != matrix[0]):
        raise ValueError(
            "Every row has the same feature values, so there is no structure to embed. "
            "Choose audit features that vary between rows."
        )
    return matrix


def _check_options(
    method: str, n_components: int, d: int, n_fit: int, max_fit: int, perplexity: float,
    n_neighbors: int, seed: int,
) -> None:
    """Raise a ValueError a user understands for any unusable setting."""
    check_method(method)
    if not is_whole(max_fit) or max_fit < MIN_ROWS:
        raise ValueError(
            f"max_fit (the most rows the map is fitted on) must be a whole number of at least "
            f"{MIN_ROWS}, got {max_fit!r}."
        )
    if not is_whole(seed):
        raise ValueError(f"The seed must be a whole number, got {seed!r}.")
    title = METHOD_TITLES[method]
    if not is_whole(n_components):
        raise ValueError(f"The number of dimensions must be a whole number, got {n_components!r}.")
    if method == "pca":
        limit = min(d, n_fit)
        if not 1 <= n_components <= limit:
            raise ValueError(
                f"PCA can produce between 1 and {limit} dimensions here (at most the number of "
                f"features, {d}, and of fitted rows, {n_fit}); {n_components} were asked for."
            )
    elif not 1 <= n_components <= 3:
        raise ValueError(
            f"{title} maps to 1, 2 or 3 dimensions; {n_components} were asked for."
        )
    if not (isinstance(perplexity, numbers.Real) and np.isfinite(perplexity) and perplexity > 0):
        raise ValueError(f"The t-SNE perplexity must be a positive number, got {perplexity!r}.")
    if not is_whole(n_neighbors) or n_neighbors < 2:
        raise ValueError(
            f"The UMAP neighbourhood size must be a whole number of at least 2, got "
            f"{n_neighbors!r}."
        )


def checked_inputs(X: ArrayLike, method: str, n_components: int, seed: int, max_fit: int,
                    perplexity: float, n_neighbors: int) -> tuple[np.ndarray, int, int, int]:
    """The entry check of :func:`embed` and :func:`fit_embedding`: the validated matrix and
    the whole-number settings."""
    matrix = _check_matrix(X)
    n, d = matrix.shape
    n_fit = min(n, max_fit) if is_whole(max_fit) else n
    _check_options(method, n_components, d, n_fit, max_fit, perplexity, n_neighbors, seed)
    return matrix, int(n_components), int(seed), int(max_fit)


def check_method(method: str) -> str:
    return check_choice(method, METHODS, "embedding method", f"choose one of {METHODS}")


# --------------------------------------------------------------------------- row selection


#: Sorted indices of the rows a map is fitted on: all ``n``, or ``max_fit`` drawn at random
#: (:func:`core.kernels.resampling.row_sample`).
choose_fit_rows = row_sample

