"""Inputs shared by the LCE methods (:mod:`core.local.lce_estimate`): checked confidences,
correctness and features, γ, the tile size, and the equal-width confidence bins (right-closed,
as :func:`core.metrics.binning.bin_indices`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from core.data.validation import check_count
from core.metrics.binning import bin_indices, edges_of

#: Tile edge of the exact method; small tiles keep the Laplacian's element-wise passes in cache.
LCE_TILE = 256


# --------------------------------------------------------------------------- input checks


def check_vectors(conf: ArrayLike, correct: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Float64 confidences in [0, 1] and correctness 0/1 of equal length."""
    try:
        c = np.asarray(conf, dtype=np.float64)
        o = np.asarray(correct, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError("conf and correct must contain numbers.") from err
    if c.ndim != 1 or o.ndim != 1:
        raise ValueError(
            "conf and correct must be 1-D arrays with one value per prediction (top-label "
            "confidence and 1/0 for a correct/wrong prediction)."
        )
    if c.shape[0] == 0:
        raise ValueError("conf is empty: at least one prediction is needed.")
    if c.shape[0] != o.shape[0]:
        raise ValueError(
            f"conf has {c.shape[0]} values but correct has {o.shape[0]}; they need one value "
            "per prediction each."
        )
    bad = ~(np.isfinite(c) & (c >= 0.0) & (c <= 1.0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"conf must hold confidences between 0 and 1; {int(bad.sum())} values are not "
            f"(first in row {row}: {c[row]})."
        )
    bad = ~((o == 0.0) | (o == 1.0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            "correct must be 1 (prediction right) or 0 (prediction wrong); "
            f"{int(bad.sum())} values are not (first in row {row}: {o[row]})."
        )
    return c, o


def check_features(features: ArrayLike, n: int | None = None) -> np.ndarray:
    """Float64 ``(n, d)`` finite feature embedding (``n`` rows when given)."""
    try:
        x = np.asarray(features, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError("features must contain numbers (the feature embedding).") from err
    if x.ndim != 2:
        raise ValueError(
            "features must be a 2-D array with one row per prediction and one column per "
            f"embedding dimension; this one has {x.ndim} dimension(s) (for a single feature "
            "use features.reshape(-1, 1))."
        )
    if n is not None and x.shape[0] != n:
        raise ValueError(
            f"features has {x.shape[0]} rows but there are {n} predictions; they need one "
            "row per prediction."
        )
    if x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(
            f"features is empty (shape {x.shape}): at least one row and one embedding "
            "dimension are needed."
        )
    finite = np.isfinite(x)
    if not finite.all():
        row = int(np.argwhere(~finite)[0][0])
        raise ValueError(
            f"features has {int((~finite).sum())} missing or infinite values (first in row "
            f"{row})."
        )
    return x


def check_gamma(gamma: float, d: int) -> float:
    """γ > 0 (``numpy.inf`` allowed: the γ → ∞ limit); 1/(d·γ) must be representable."""
    try:
        g = float(gamma)
    except (TypeError, ValueError) as err:
        raise ValueError(f"gamma must be a positive number, not {gamma!r}.") from err
    if np.isnan(g) or g <= 0.0:
        raise ValueError(f"gamma (the kernel bandwidth) must be a positive number, not {g}.")
    if not np.isfinite(1.0 / (d * g)):
        raise ValueError(f"gamma = {g} is too small to compute with; use gamma ≥ 1e-300.")
    return g


# --------------------------------------------------------------------------- bins


def confidence_bins(conf: ArrayLike, n_bins: int = 15) -> np.ndarray:
    """Confidence bin of every prediction: ``n_bins`` equal-width bins ``(e_b, e_{b+1}]``.

    The bins of the reliability diagram (:func:`core.metrics.bin_edges` with
    ``strategy="uniform"`` and :func:`core.metrics.bin_indices`): bin 0 includes 0 and a
    confidence of exactly 1.0 is in bin ``n_bins − 1``. Returns ``(n,)`` int64 bin numbers.

    Parameters
    ----------
    conf : array_like
        Confidences in [0, 1].
    n_bins : int, default 15
        Equal-width bins.
    """
    return uniform_bins(np.asarray(conf, dtype=np.float64), check_count("n_bins", n_bins, 1))


def uniform_bins(conf: np.ndarray, n_bins: int) -> np.ndarray:
    """:func:`confidence_bins` of confidences and a bin count already checked at the caller's
    public entry."""
    return bin_indices(conf, edges_of(conf, n_bins, "uniform")).astype(np.int64)

