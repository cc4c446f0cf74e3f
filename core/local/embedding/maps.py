"""Low-dimensional embeddings of the audit features: PCA, t-SNE and UMAP.

Luo et al. ("Local Calibration: Metrics and Recalibration", §3–4) compute the local
calibration error LCE on a feature map ``φ = φ₂ ∘ φ₁`` whose last step ``φ₂`` reduces the
features to a few dimensions with t-SNE (2 or 3 dimensions) or PCA (20–50 dimensions), and draw
the LCE *landscape* over a 2-D t-SNE map (their Fig. 2). This module provides ``φ₂`` for the
audit features of an :class:`~core.data.AuditData`:

* :func:`prepare_features` z-scores every encoded feature column, so that no unit dominates the
  Euclidean distances all three methods start from.
* :func:`embed` fits a map on at most ``max_fit`` rows (a seeded random subsample when there
  are more) and *places* the remaining rows with the fitted map, so the cost of the nonlinear
  methods stays bounded on large tables: PCA projects them (``PCA.transform``), t-SNE
  optimises each new point against the fixed reference map (openTSNE's
  ``TSNEEmbedding.transform``, Poličar et al. 2019), UMAP places them through its fuzzy
  neighbour graph (``UMAP.transform``).
* t-SNE and UMAP embed each distinct feature vector once and give repeated vectors its
  coordinates (see :func:`embed`): categorical audit features repeat vectors a lot, and a
  nearest-neighbour graph of many identical points falls apart.
* :func:`embedding_cache_key` gives a stable key per dataset fingerprint and parameters.
* :func:`landscape_coordinates` z-scores the first two dimensions of a map, the plane the LCE
  landscape is computed on; :func:`profile_coordinates` does the same for a single feature,
  the 1-D view when only one audit feature is chosen.

Settings (chosen by timing on the 10,000-row census demo on a 2-core machine, see
``benchmarks/embedding.py``):

* t-SNE: openTSNE with perplexity 30 (clamped to ``(n_fit − 1)/3`` for tiny inputs), PCA
  initialisation, exact neighbours below 1,000 fitted rows and Annoy from there; gradients by
  Barnes–Hut below 5,000 fitted rows (faster there) and always in 3-D (the FFT scheme is 1-D
  and 2-D only), FFT-accelerated interpolation (FIt-SNE) from 5,000 rows with boxes two
  embedding units wide instead of one (the grid, hence the cost per iteration, grows with the
  square of the map's extent); 250 early-exaggeration iterations (exaggeration 12) and 350
  further ones instead of openTSNE's 500. On the census demo this keeps the
  10-nearest-neighbour recall of the map at 0.59 (0.62 with openTSNE's defaults) and takes
  about a third of the time. Two threads from 1,000 fitted rows, one below: a small map is
  done in about a second on one thread, while two threads that must meet at a barrier many
  times per iteration slowed a 400-row map from 0.5 s to 19 s when other processes kept the
  cores busy.
  New points: perplexity 5, median initialisation over 25 neighbours, 250 iterations
  (openTSNE's defaults). A placed point only feels the reference map, so placing rows in
  batches gives the same coordinates as placing them at once.
* UMAP: ``n_neighbors`` 15 (clamped below ``n_fit``), ``min_dist`` 0.1, PCA initialisation
  (the spectral one fails on one-hot features with a warning and falls back to random), 200
  optimisation epochs (umap-learn's own choice above 10,000 rows; 500 epochs give no better
  neighbour recall on the census demo and take 2.5 times longer), new points 66 epochs.

Determinism: the same inputs and ``seed`` give identical coordinates. PCA uses the full SVD
with scikit-learn's sign convention; t-SNE passes ``seed`` to openTSNE (Annoy's trees, the
initialisation), and repeated two-thread runs gave bit-identical maps with both gradient
schemes (checked at 600, 3,000 and 10,000 rows); UMAP is run single-threaded
(``n_jobs=1`` with ``random_state=seed``, ``transform_seed=seed``), which is how umap-learn
makes its stochastic gradient descent reproducible — multi-threaded UMAP is not.

The first UMAP call in a process compiles umap-learn's and pynndescent's numba code, which
takes tens of seconds (about 20 s below 4,096 rows, where exact neighbours are used, and 30–40 s
more for the approximate-neighbour code above); later calls are fast.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from sklearn.decomposition import PCA

from core.data.problems import describe_rows
from core.data.validation import check_choice, is_whole
from core.kernels.resampling import row_sample
from core.kernels.tiles import Standardizer, standardize_features

if TYPE_CHECKING:  # imported where used: umap-learn alone takes seconds to import
    import openTSNE
    import umap

METHODS = ("pca", "tsne", "umap")
#: Fewest rows an embedding is computed for.
MIN_ROWS = 5
#: Threads used by openTSNE (neighbour search and gradients) from TSNE_PARALLEL_MIN_ROWS
#: fitted rows; smaller maps run on one thread (see the module notes).
N_JOBS = 2
TSNE_PARALLEL_MIN_ROWS = 1_000
#: Rows placed per call of the fitted map (progress is reported after each batch).
PLACE_BATCH = 10_000
#: Bumped whenever a setting below changes, so cached embeddings are recomputed.
SETTINGS_VERSION = 1

#: t-SNE: iterations with early exaggeration (12), then without.
TSNE_EARLY_EXAGGERATION_ITER = 250
TSNE_N_ITER = 350
#: t-SNE: FFT-accelerated gradients from this many fitted rows (Barnes–Hut below, and in 3-D).
TSNE_FFT_MIN_ROWS = 5_000
#: t-SNE: width of one interpolation box of the FFT gradient, in embedding units.
TSNE_INTS_IN_INTERVAL = 2
#: t-SNE: exact nearest neighbours below this many fitted rows, Annoy from it.
TSNE_EXACT_BELOW = 1_000
#: t-SNE placement of new points (openTSNE's defaults).
TSNE_TRANSFORM_PERPLEXITY = 5.0
TSNE_TRANSFORM_K = 25
#: t-SNE: report progress every this many iterations.
TSNE_PROGRESS_EVERY = 50

#: UMAP settings.
UMAP_MIN_DIST = 0.1
UMAP_N_EPOCHS = 200

#: Defaults of the method parameters of :func:`embed`, and which method reads which.
DEFAULT_PARAMS = {"max_fit": 20_000, "perplexity": 30.0, "n_neighbors": 15}
METHOD_PARAMS = {
    "pca": ("max_fit",),
    "tsne": ("max_fit", "perplexity"),
    "umap": ("max_fit", "n_neighbors"),
}
_METHOD_TITLES = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP"}

Progress = Callable[[float, str], None]


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
        return _complement(self.n, self.fit_rows)


# --------------------------------------------------------------------------- features


def prepare_features(X: ArrayLike, feature_names) -> np.ndarray:
    """Z-score every column of the encoded audit features: ``(x − mean) / sd``.

    ``sd`` is the population standard deviation (``ddof=0``), as in the kernel statistics
    (DESIGN.md). A constant column (every value equal) carries no information and becomes 0.
    ``X`` is ``AuditData.X`` (numeric, categoricals one-hot encoded) and ``feature_names``
    ``AuditData.feature_names``, used to name the column at fault in error messages.
    Returns a new float64 array; the input is not modified.
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
    _check_method(method)
    if not is_whole(max_fit) or max_fit < MIN_ROWS:
        raise ValueError(
            f"max_fit (the most rows the map is fitted on) must be a whole number of at least "
            f"{MIN_ROWS}, got {max_fit!r}."
        )
    if not is_whole(seed):
        raise ValueError(f"The seed must be a whole number, got {seed!r}.")
    title = _METHOD_TITLES[method]
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


def _checked_inputs(X: ArrayLike, method: str, n_components: int, seed: int, max_fit: int,
                    perplexity: float, n_neighbors: int) -> tuple[np.ndarray, int, int, int]:
    """The entry check of :func:`embed` and :func:`fit_embedding`: the validated matrix and
    the whole-number settings."""
    matrix = _check_matrix(X)
    n, d = matrix.shape
    n_fit = min(n, max_fit) if is_whole(max_fit) else n
    _check_options(method, n_components, d, n_fit, max_fit, perplexity, n_neighbors, seed)
    return matrix, int(n_components), int(seed), int(max_fit)


def _check_method(method: str) -> str:
    return check_choice(method, METHODS, "embedding method", f"choose one of {METHODS}")


# --------------------------------------------------------------------------- row selection


#: Sorted indices of the rows a map is fitted on: all ``n``, or ``max_fit`` drawn at random
#: (:func:`core.kernels.resampling.row_sample`).
choose_fit_rows = row_sample


def _complement(n: int, rows: np.ndarray) -> np.ndarray:
    """Sorted indices in ``0..n-1`` that are not in ``rows``."""
    mask = np.ones(n, dtype=bool)
    mask[rows] = False
    return np.flatnonzero(mask)


def _batches(rows: np.ndarray, size: int) -> list[np.ndarray]:
    """``rows`` cut into consecutive pieces of at most ``size``."""
    return [rows[start:start + size] for start in range(0, rows.size, size)]


# --------------------------------------------------------------------------- progress


def _report_progress(progress: Progress | None, fraction: float, message: str) -> None:
    """Call ``progress(fraction, message)`` if a callback was given."""
    if progress is not None:
        progress(float(min(max(fraction, 0.0), 1.0)), message)


def _place_in_batches(
    place: Callable[[np.ndarray], np.ndarray], X: np.ndarray, rows: np.ndarray,
    coords: np.ndarray, progress: Progress | None, span: tuple[float, float], title: str,
) -> None:
    """Fill ``coords[rows]`` with ``place(X[rows])`` batch by batch, reporting progress."""
    start, end = span
    done = 0
    for batch in _batches(rows, PLACE_BATCH):
        coords[batch] = place(X[batch])
        done += batch.size
        _report_progress(
            progress, start + (end - start) * done / rows.size,
            f"{title}: placed {done:,} of {rows.size:,} further rows into the map",
        )


# --------------------------------------------------------------------------- methods


def _fit_pca(X: np.ndarray, fit_rows: np.ndarray, n_components: int) -> PCA:
    """A PCA (full SVD, deterministic signs) fitted on ``X[fit_rows]``."""
    return PCA(n_components=n_components, svd_solver="full").fit(X[fit_rows])


def _tsne_settings(
    n_fit: int, d: int, n_components: int, perplexity: float, seed: int
) -> dict:
    """openTSNE constructor arguments for ``n_fit`` rows (perplexity clamped below n_fit/3)."""
    fft = n_fit >= TSNE_FFT_MIN_ROWS and n_components <= 2
    return {
        "n_components": n_components,
        "perplexity": min(float(perplexity), (n_fit - 1) / 3.0),
        "early_exaggeration_iter": TSNE_EARLY_EXAGGERATION_ITER,
        "n_iter": TSNE_N_ITER,
        "initialization": "pca" if n_components <= min(d, n_fit) else "random",
        "neighbors": "exact" if n_fit < TSNE_EXACT_BELOW else "annoy",
        "negative_gradient_method": "fft" if fft else "bh",
        "ints_in_interval": TSNE_INTS_IN_INTERVAL,
        "n_jobs": N_JOBS if n_fit >= TSNE_PARALLEL_MIN_ROWS else 1,
        "random_state": seed,
    }


def _tsne_transform_settings(n_fit: int) -> dict:
    """Arguments of ``TSNEEmbedding.transform`` for a reference map of ``n_fit`` rows."""
    return {
        "perplexity": min(TSNE_TRANSFORM_PERPLEXITY, (n_fit - 1) / 3.0),
        "k": min(TSNE_TRANSFORM_K, n_fit - 1),
    }


def _tsne_callback(
    progress: Progress | None, span: tuple[float, float], offset: int
) -> Callable | None:
    """An openTSNE callback mapping iteration ``offset + i`` of the fit onto ``span``."""
    if progress is None:
        return None
    total = TSNE_EARLY_EXAGGERATION_ITER + TSNE_N_ITER
    start, end = span

    def callback(iteration: int, error: float, embedding: np.ndarray) -> bool:
        done = offset + iteration
        _report_progress(progress, start + (end - start) * done / total,
                f"t-SNE: optimised {done} of {total} iterations")
        return False

    return callback


def _fit_tsne(
    X: np.ndarray, settings: dict, progress: Progress | None, span: tuple[float, float]
) -> tuple[openTSNE.TSNE, openTSNE.TSNEEmbedding]:
    """openTSNE's two optimisation phases (as in ``TSNE.fit``), reporting progress.

    The phases are run here rather than through ``TSNE.fit`` so that the progress callback is
    passed to the optimisation only: given to the ``TSNE`` constructor it would be inherited
    by ``TSNEEmbedding.transform`` as well.
    """
    import openTSNE

    tsne = openTSNE.TSNE(**settings, verbose=False)
    reference = tsne.prepare_initial(X)
    phases = (
        (tsne.early_exaggeration_iter, tsne.early_exaggeration, tsne.initial_momentum, 0),
        (tsne.n_iter, tsne.exaggeration, tsne.final_momentum, tsne.early_exaggeration_iter),
    )
    for n_iter, exaggeration, momentum, offset in phases:
        reference = reference.optimize(
            n_iter=n_iter, exaggeration=exaggeration, momentum=momentum, inplace=True,
            callbacks=_tsne_callback(progress, span, offset),
            callbacks_every_iters=TSNE_PROGRESS_EVERY,
        )
    return tsne, reference


def _fit_umap(X: np.ndarray, settings: dict) -> umap.UMAP:
    """A UMAP with ``settings`` (see :func:`_umap_settings`) fitted on the rows of ``X``."""
    import umap

    return umap.UMAP(**settings).fit(X)


def _umap_settings(n_fit: int, d: int, n_components: int, n_neighbors: int, seed: int) -> dict:
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


def _embed_pca(
    X: np.ndarray, fit_rows: np.ndarray, n_components: int, progress: Progress | None
) -> tuple[np.ndarray, dict, np.ndarray]:
    """PCA fitted on ``fit_rows``; every row is projected with the same fitted map."""
    _report_progress(progress, 0.05, f"PCA: fitting on {fit_rows.size:,} rows")
    pca = _fit_pca(X, fit_rows, n_components)
    _report_progress(progress, 0.5, f"PCA: projecting {X.shape[0]:,} rows")
    coords = pca.transform(X).astype(np.float64)
    params = {"svd_solver": "full", "whiten": False}
    return coords, params, np.asarray(pca.explained_variance_ratio_, dtype=np.float64)


def _embed_tsne(
    X: np.ndarray, fit_rows: np.ndarray, place_rows: np.ndarray, n_components: int, seed: int,
    perplexity: float, progress: Progress | None,
) -> tuple[np.ndarray, dict]:
    """openTSNE map of ``fit_rows``; the other rows placed with ``TSNEEmbedding.transform``."""
    settings = _tsne_settings(fit_rows.size, X.shape[1], n_components, perplexity, seed)
    fit_end = 0.8 if place_rows.size else 0.99
    _report_progress(progress, 0.02,
            f"t-SNE: finding nearest neighbours among {fit_rows.size:,} distinct rows")
    tsne, reference = _fit_tsne(X[fit_rows], settings, progress, (0.1, fit_end))
    coords = np.empty((X.shape[0], n_components), dtype=np.float64)
    coords[fit_rows] = np.array(reference, dtype=np.float64)
    placement = _tsne_transform_settings(fit_rows.size)

    def place(batch: np.ndarray) -> np.ndarray:
        return np.array(reference.transform(batch, **placement), dtype=np.float64)

    _place_in_batches(place, X, place_rows, coords, progress, (fit_end, 0.99), "t-SNE")
    params = {key: value for key, value in settings.items() if key != "random_state"}
    params["perplexity_requested"] = float(perplexity)
    params["early_exaggeration"] = tsne.early_exaggeration
    params["transform_perplexity"] = placement["perplexity"]
    params["transform_k"] = placement["k"]
    return coords, params


def _embed_umap(
    X: np.ndarray, fit_rows: np.ndarray, place_rows: np.ndarray, n_components: int, seed: int,
    n_neighbors: int, progress: Progress | None,
) -> tuple[np.ndarray, dict]:
    """umap-learn map of ``fit_rows``; the other rows placed with ``UMAP.transform``."""
    settings = _umap_settings(fit_rows.size, X.shape[1], n_components, n_neighbors, seed)
    fit_end = 0.8 if place_rows.size else 0.99
    _report_progress(progress, 0.02,
            f"UMAP: fitting on {fit_rows.size:,} distinct rows (the first run in a session also "
            "compiles UMAP's code, which takes 20–60 s)")
    model = _fit_umap(X[fit_rows], settings)
    _report_progress(progress, fit_end, "UMAP: map fitted")
    coords = np.empty((X.shape[0], n_components), dtype=np.float64)
    coords[fit_rows] = np.asarray(model.embedding_, dtype=np.float64)

    def place(batch: np.ndarray) -> np.ndarray:
        return np.asarray(model.transform(batch), dtype=np.float64)

    _place_in_batches(place, X, place_rows, coords, progress, (fit_end, 0.99), "UMAP")
    params = {key: value for key, value in settings.items() if key != "random_state"}
    params["n_neighbors_requested"] = int(n_neighbors)
    params["transform_n_epochs"] = UMAP_N_EPOCHS // 3
    return coords, params


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
    """
    matrix, n_components, seed, max_fit = _checked_inputs(
        X, method, n_components, seed, max_fit, perplexity, n_neighbors)
    n, d = matrix.shape
    evr = None
    if method == "pca":
        fit_rows = choose_fit_rows(n, max_fit, seed)
        coords, params, evr = _embed_pca(matrix, fit_rows, n_components, progress)
    else:
        coords, params, fit_rows = _embed_distinct(
            matrix, method, n_components, seed, max_fit, perplexity, n_neighbors, progress
        )
    params = {"seed": seed, "max_fit": max_fit, **params}
    _report_progress(progress, 1.0, f"{_METHOD_TITLES[method]}: done")
    return Embedding(
        coords=coords, method=method, params=params, n_fit=int(fit_rows.size),
        fit_rows=fit_rows, explained_variance_ratio=evr,
    )


def distinct_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(distinct, first, inverse)``: the distinct rows in lexicographic order, the index of
    each one's first occurrence, and for every row the index of its distinct row, so that
    ``distinct[inverse] == matrix`` and ``matrix[first] == distinct``."""
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
            f"{_METHOD_TITLES[method]} needs at least {MIN_ROWS}. Choose more audit features "
            "or use PCA."
        )
    fit = choose_fit_rows(m, max_fit, seed)
    place = _complement(m, fit)
    if method == "tsne":
        coords, params = _embed_tsne(distinct, fit, place, n_components, seed, perplexity,
                                     progress)
    else:
        coords, params = _embed_umap(distinct, fit, place, n_components, seed, n_neighbors,
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
    """
    if not isinstance(fingerprint, str) or not fingerprint:
        raise ValueError("The dataset fingerprint must be a non-empty string.")
    _check_method(method)
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


# --------------------------------------------------------------------------- fitted maps


class FittedEmbedding:
    """A map fitted on some rows that can place new ones (:func:`fit_embedding`).

    ``coords`` holds the fitted rows' coordinates (as :func:`embed` would give them);
    :meth:`transform` places new rows: PCA projects them; t-SNE and UMAP give a row that
    repeats a vector seen at fit time that vector's coordinates and place the others with
    the fitted map (``TSNEEmbedding.transform`` / ``UMAP.transform``), batch by batch.
    """

    def __init__(self, method: str, coords: np.ndarray, params: dict,
                 place: Callable[[np.ndarray], np.ndarray],
                 known: dict[bytes, np.ndarray] | None = None) -> None:
        self.method = method
        self.coords = coords
        self.params = params
        self._place_in_batches = place
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
            return np.asarray(self._place_in_batches(matrix), dtype=np.float64)
        out = np.empty((matrix.shape[0], self.n_components))
        seen = np.zeros(matrix.shape[0], dtype=bool)
        for i, row in enumerate(matrix):
            hit = self._known.get(row.tobytes())
            if hit is not None:
                out[i], seen[i] = hit, True
        rest = np.flatnonzero(~seen)
        for batch in _batches(rest, PLACE_BATCH):
            out[batch] = self._place_in_batches(matrix[batch])
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
    """
    matrix, n_components, seed, max_fit = _checked_inputs(
        X, method, n_components, seed, max_fit, perplexity, n_neighbors)
    n, d = matrix.shape
    if method == "pca":
        pca = _fit_pca(matrix, choose_fit_rows(n, max_fit, seed), n_components)
        _report_progress(progress, 1.0, "PCA: done")
        return FittedEmbedding("pca", pca.transform(matrix).astype(np.float64),
                               {"n_features": d, "seed": seed, "max_fit": max_fit},
                               lambda rows: pca.transform(rows))
    distinct, first, inverse = distinct_rows(matrix)
    if distinct.shape[0] < MIN_ROWS:
        raise ValueError(
            f"The features take only {distinct.shape[0]} distinct values across the rows; "
            f"{_METHOD_TITLES[method]} needs at least {MIN_ROWS}. Choose more audit features "
            "or use PCA."
        )
    fit = choose_fit_rows(distinct.shape[0], max_fit, seed)
    rest = _complement(distinct.shape[0], fit)
    coords = np.empty((distinct.shape[0], n_components))
    if method == "tsne":
        settings = _tsne_settings(fit.size, d, n_components, perplexity, seed)
        _, reference = _fit_tsne(distinct[fit], settings, progress, (0.05, 0.8))
        coords[fit] = np.array(reference, dtype=np.float64)
        placement = _tsne_transform_settings(fit.size)

        def place(rows: np.ndarray) -> np.ndarray:
            return np.array(reference.transform(rows, **placement), dtype=np.float64)
    else:
        model = _fit_umap(distinct[fit], _umap_settings(fit.size, d, n_components,
                                                        n_neighbors, seed))
        coords[fit] = np.asarray(model.embedding_, dtype=np.float64)

        def place(rows: np.ndarray) -> np.ndarray:
            return np.asarray(model.transform(rows), dtype=np.float64)

    _place_in_batches(place, distinct, rest, coords, progress, (0.8, 0.99), _METHOD_TITLES[method])
    known = {row.tobytes(): coords[i] for i, row in enumerate(distinct)}
    _report_progress(progress, 1.0, f"{_METHOD_TITLES[method]}: done")
    return FittedEmbedding(method, coords[inverse],
                           {"n_features": d, "seed": seed, "max_fit": max_fit,
                            "n_distinct": int(distinct.shape[0])}, place, known)
