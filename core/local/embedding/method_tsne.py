"""t-SNE maps through openTSNE, fitted on the sampled rows; the other rows are optimised
against the fixed reference map (``TSNEEmbedding.transform``, Poličar et al. 2019).

Settings (timed on the 10,000-row census demo on a 2-core machine, ``benchmarks/embedding.py``):

t-SNE: openTSNE with perplexity 30 (clamped to ``(n_fit − 1)/3`` for tiny inputs), PCA
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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from core.local.embedding.inputs import Progress
from core.local.embedding.placement import place_in_batches, report_progress

if TYPE_CHECKING:  # imported where used: umap-learn alone takes seconds to import
    import openTSNE

#: Threads used by openTSNE (neighbour search and gradients) from TSNE_PARALLEL_MIN_ROWS
#: fitted rows; smaller maps run on one thread (see the module notes).
N_JOBS = 2
TSNE_PARALLEL_MIN_ROWS = 1_000

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


def tsne_settings(
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


def tsne_transform_settings(n_fit: int) -> dict:
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
        report_progress(progress, start + (end - start) * done / total,
                f"t-SNE: optimised {done} of {total} iterations")
        return False

    return callback


def fit_tsne(
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


def embed_tsne(
    X: np.ndarray, fit_rows: np.ndarray, place_rows: np.ndarray, n_components: int, seed: int,
    perplexity: float, progress: Progress | None,
) -> tuple[np.ndarray, dict]:
    """openTSNE map of ``fit_rows``; the other rows placed with ``TSNEEmbedding.transform``."""
    settings = tsne_settings(fit_rows.size, X.shape[1], n_components, perplexity, seed)
    fit_end = 0.8 if place_rows.size else 0.99
    report_progress(progress, 0.02,
            f"t-SNE: finding nearest neighbours among {fit_rows.size:,} distinct rows")
    tsne, reference = fit_tsne(X[fit_rows], settings, progress, (0.1, fit_end))
    coords = np.empty((X.shape[0], n_components), dtype=np.float64)
    coords[fit_rows] = np.array(reference, dtype=np.float64)
    placement = tsne_transform_settings(fit_rows.size)

    def place(batch: np.ndarray) -> np.ndarray:
        return np.array(reference.transform(batch, **placement), dtype=np.float64)

    place_in_batches(place, X, place_rows, coords, progress, (fit_end, 0.99), "t-SNE")
    params = {key: value for key, value in settings.items() if key != "random_state"}
    params["perplexity_requested"] = float(perplexity)
    params["early_exaggeration"] = tsne.early_exaggeration
    params["transform_perplexity"] = placement["perplexity"]
    params["transform_k"] = placement["k"]
    return coords, params

